"""``callstream ask PROMPT``: the whole loop without the TUI (printed by ``printer.Printer``).

``ask -`` reads the prompt from stdin; ``cat file | callstream ask "summarise"``
appends what was piped in to the prompt as a fenced block. The reply is plain
text when stdout is a pipe or a file, and rendered Markdown on a terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import signal
import sys
from decimal import Decimal
from typing import Any, TextIO

from ..stream.inert import inert, inert_json
from .common import prompt_options, provider_options, warn_config

__all__ = ["register", "run", "run_ask", "with_attachment", "cost_line"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ask = sub.add_parser(
        "ask",
        help="send one prompt and run the whole loop (tools included) without the TUI",
        description="Send PROMPT, stream the reply, run the calls it makes (each exactly once), and continue until "
        "the model stops. PROMPT '-' reads the prompt from stdin; otherwise anything piped in is appended to the "
        "prompt. Exit 0 when it finished, 1 on a stated failure, 2 on bad usage or configuration.",
    )
    ask.add_argument("prompt", help="the prompt, or - to read it from stdin")
    provider_options(ask)
    prompt_options(ask)
    ask.add_argument("--conversation", help="continue a stored conversation (its id or a unique prefix)")
    ask.add_argument("--json", action="store_true", help="print the conversation's turns as one JSON document")
    ask.add_argument("--no-tools", action="store_true", help="offer the model no tools")
    ask.add_argument("--verbose", "-v", action="store_true",
                     help="end with a line on stderr saying what it cost: model, requests, tokens in and out, time "
                     "(printed anyway when stderr is a terminal)")
    ask.add_argument("--compact", action="store_true",
                     help="with --conversation: first summarise its older part with the model and go on from the "
                     "summary and the last exchange on a new branch (the original stays in the tree)")
    ask.add_argument("--max-cost", metavar="USD", type=_dollars,
                     help="refuse a request whose estimated cost would take this exchange past USD dollars (the "
                     "first: nothing is sent; a later one: the tool loop stops there); exit 1")
    ask.add_argument("-a", "--attach", action="append", default=[], metavar="FILE",
                     help="attach a file: an image (PNG, JPEG, GIF, WebP), a PDF or a text file; repeatable; "
                     "'-' reads it from stdin (its type from the bytes)")
    ask.add_argument("--elicit", action="append", default=[], metavar="FIELD=VALUE", type=_field_value,
                     help="answer an MCP server's request for input: accept its form with FIELD set to VALUE "
                     "(true/false for a yes/no field, comma-separated for a multiple choice); repeatable. A form "
                     "still missing a value is declined, saying which, exit 1")
    ask.add_argument("--elicit-defaults", action="store_true",
                     help="accept a server's form with the defaults its schema gives for the fields --elicit does "
                     "not set (without --elicit and this, every request for input is declined, exit 1)")
    ask.add_argument("--approve", metavar="all|read-only|TOOL,...",
                     help="run these without asking (nobody is asked in ask: any other call that needs approval "
                     "ends as 'needs approval', exit 1); also answers the pending approvals of --conversation")


def _dollars(text: str) -> Decimal:
    """``--max-cost``: a number of dollars above 0."""
    try:
        value = Decimal(text)
    except ArithmeticError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of dollars (e.g. 0.50)") from None
    if not value.is_finite() or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the ceiling must be a number of dollars above 0 (e.g. 0.50)")
    return value


def _field_value(text: str) -> tuple[str, str]:
    """``--elicit FIELD=VALUE``."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected FIELD=VALUE (e.g. name=Ada)")
    return name.strip(), value


def with_attachment(prompt: str, attached: str) -> str:
    """The prompt, then the piped-in text as a fenced block (a fence longer
    than any backtick run inside it, so the text cannot close it)."""
    if not attached.strip():
        return prompt
    longest = max((len(run) for run in re.findall(r"`{3,}", attached)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{prompt}\n\n{fence}\n{attached.rstrip(chr(10))}\n{fence}"


def _read_stdin() -> str:
    """All of stdin, or "" when there is none to read (closed, or not readable).
    Read as bytes and decoded here, whatever the locale: a byte that is not
    UTF-8 becomes U+FFFD and a line on stderr says so (the turn is sent)."""
    stream = sys.stdin
    if stream is None:
        return ""
    try:
        buffer = getattr(stream, "buffer", None)
        data: bytes | str = buffer.read() if buffer is not None else stream.read()
    except (OSError, ValueError):
        return ""
    text, replaced = utf8_text(data)
    if replaced:
        _say_replaced("what was piped in", replaced)
    return text


def utf8_text(data: bytes | str) -> tuple[str, int]:
    """``data`` as text that is all UTF-8 (a str read with surrogateescape, as
    the C locale and argv give it, counts as its bytes), and how many invalid
    byte sequences became U+FFFD."""
    if isinstance(data, str):
        if not any("\udc80" <= c <= "\udcff" for c in data):
            return data, 0
        data = data.encode("utf-8", "surrogateescape")
    text = data.decode("utf-8", "replace")
    return text, text.count("\ufffd") - data.count("\ufffd".encode())


def _say_replaced(what: str, replaced: int) -> None:
    places = f"{replaced} invalid byte sequences were" if replaced != 1 else "1 invalid byte sequence was"
    print(f"callstream: {what} is not all UTF-8: {places} replaced with U+FFFD; the rest was sent as is.",
          file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    prompt, replaced = utf8_text(args.prompt)  # an argument's bytes that were not UTF-8 (argv, C locale)
    if replaced:
        _say_replaced("the prompt", replaced)
    attached = []
    if prompt == "-" and "-" in args.attach:
        print("callstream: stdin can be the prompt (-) or an attachment (-a -), not both", file=sys.stderr)
        return 2
    if args.attach:
        from ..files.attach import AttachError, read_path

        try:
            attached = [read_path(path) for path in args.attach]
        except AttachError as exc:
            print(f"callstream: {inert(str(exc))}", file=sys.stderr)
            return 2
    if prompt == "-" and "-" not in args.attach:
        prompt = _read_stdin()
    elif sys.stdin is not None and not sys.stdin.isatty() and "-" not in args.attach:
        prompt = with_attachment(prompt, _read_stdin())
    return run_ask(prompt, args.provider, args.model, args.base_url, args.conversation, args.json,
                   args.no_tools, system=args.system, role=args.role, markdown=sys.stdout.isatty(),
                   approve=args.approve, verbose=args.verbose or _is_terminal(sys.stderr), compact=args.compact,
                   max_cost=args.max_cost, attachments=attached, elicit=dict(args.elicit),
                   elicit_defaults=args.elicit_defaults)


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError):
        return False


def cost_line(turns: list[Any], seconds: float, prices: Any = None) -> str:
    """One line: what the exchange cost (no numbers at all where the provider reported none; no money
    where ``prices`` has none for the model)."""
    from ..rules.words import plural
    from ..stream.usage import NOT_REPORTED, total, usage_words

    model = next((t.model for t in reversed(turns) if t.model), None)
    spent = usage_words(total(t.usage for t in turns)) or NOT_REPORTED
    money = prices.spend(turns).words() if prices is not None else ""
    parts = [model, plural(sum(t.attempts for t in turns), "request"), spent, money, f"{seconds:.1f} s"]
    return "  · " + " · ".join(p for p in parts if p)


def _turn_json(turn: Any, prices: Any) -> dict[str, Any]:
    """A turn for ``--json``: its record, and what it cost in dollars where it has a price."""
    out: dict[str, Any] = turn.to_dict()
    cost = prices.cost(turn.usage, turn.model)
    if cost is not None:
        out["cost_usd"] = f"{cost:f}"
    return out


async def _ask(prompt: str, provider: str | None, model: str | None, base_url: str | None,
               conversation: str | None, as_json: bool, no_tools: bool, out: TextIO, err: TextIO,
               system: str | None, role: str | None, markdown: bool,
               approve: str | None = None, verbose: bool = False, compact: bool = False,
               max_cost: Decimal | None = None, attachments: list[Any] | None = None,
               elicit: dict[str, str] | None = None, elicit_defaults: bool = False) -> int:
    import asyncio
    import time

    from ..chat.asking import AcceptingGiven, Declining
    from ..chat.compaction import CompactionRefused
    from ..chat.sampling import Refusing
    from ..runtime.wiring import open_runtime
    from ..settings.checks import ConfigError
    from ..tools.approvals import Approvals
    from .printer import Printer

    runtime = open_runtime(provider, model, base_url, system=system, role=role)
    warn_config(runtime.config.warnings, err)
    try:
        approvals = Approvals.from_config(runtime.config, interactive=False, approve=approve)
        session = runtime.session(conversation, offer_tools=not no_tools, approvals=approvals)
    except ConfigError:
        runtime.close()
        raise
    endpoint, prices = runtime.endpoint, runtime.prices
    # ask never prompts: a server's request for the person is declined unless --elicit / --elicit-defaults answer
    # it, and its request to the model refused unless the server's sampling is "allow"
    declining = AcceptingGiven(elicit, elicit_defaults) if elicit or elicit_defaults else Declining()
    refusing = Refusing(session)
    refusing.models = session.sampling.models
    session.asking, session.sampling = declining, refusing
    if max_cost is not None:
        from ..chat.budget import Budget, unpriced

        why = unpriced(prices, endpoint.model)
        if why is not None:
            runtime.close()
            raise ConfigError(why)
        session.budget = Budget(max_cost, prices, session)
    if not as_json:
        session.listeners.append(Printer(session, out, err, markdown=markdown))
    loop = asyncio.get_running_loop()
    stopped_by_signal: list[bool] = []

    def interrupted() -> None:
        stopped_by_signal.append(True)
        session.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, interrupted)
    started = time.monotonic()
    try:
        if session.pending_approvals():
            await session.resume_pending({})  # --approve decides them; the rest stay pending
        try:
            compacted = await (runtime.compact(session) if compact else runtime.compact_if_due(session))
        except CompactionRefused as exc:
            print(inert(f"callstream: {exc}"), file=err)
            return 1
        if compacted is not None:
            print(inert(f"  · {compacted.words()}"), file=err)
        done = await session.send(prompt, attachments or [])
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        await session.aclose()
        await runtime.registry.aclose()
        runtime.close()
    seconds = time.monotonic() - started
    if as_json:
        from ..stream.usage import total

        document: dict[str, Any] = {"conversation": session.conversation, "provider": endpoint.label,
                                    "status": done.status, "turns": [_turn_json(t, prices) for t in session.turns]}
        if done.message:
            document["message"] = done.message
        spent = total(t.usage for t in session.turns)
        if spent is not None:
            document["usage"] = spent.to_dict()  # every request of this run together; absent when none said
        money = prices.spend(session.turns)
        if money.known:
            document["cost"] = money.to_json()  # absent when no request had a price (never 0)
        document["seconds"] = round(seconds, 3)
        out.write(inert_json(document))
        out.write("\n")
    elif done.message:
        print(inert(f"  ! {done.message}"), file=err)
    for asked in declining.declined:  # said even with --json: the answer the server got was not the person's
        print(inert(f"  ! the {asked.server} server asked for input ({asked.message}); {asked.reason}"), file=err)
    failed_by_refusal = sampling_words(session.turns, err)
    if verbose and session.turns:
        print(inert(cost_line(session.turns, seconds, prices)), file=err)
    if stopped_by_signal:
        return 130  # Ctrl-C, by convention 128 + SIGINT, once the turn is saved as cancelled
    return 0 if done.status == "done" and not declining.declined and not failed_by_refusal else 1


def sampling_words(turns: list[Any], err: TextIO) -> bool:
    """A line on stderr for each request a server made to the model: where it went (the model chosen, and why)
    and what became of it, or why it was refused and whether the call failed because of it. True when a
    refused or failed request made its call fail (ask then exits 1)."""
    from ..stream import ToolCallBlock

    failed = False
    for call in (b for t in turns for b in t.blocks if isinstance(b, ToolCallBlock)):
        for asked in call.samplings:
            if asked.state == "returned":
                print(inert(f"  · {asked.headline()} — sent to {asked.chosen}; {asked.outcome()}"), file=err)
                continue
            broke = call.state != "ran"
            failed = failed or broke
            then = f"; so the call {call.name} {call.state}" if broke else ""
            print(inert(f"  ! {asked.headline()} — {asked.outcome()}{then}"), file=err)
    return failed


def run_ask(prompt: str, provider: str | None = None, model: str | None = None, base_url: str | None = None,
            conversation: str | None = None, as_json: bool = False, no_tools: bool = False,
            out: TextIO | None = None, err: TextIO | None = None, *, system: str | None = None,
            role: str | None = None, markdown: bool = False, approve: str | None = None,
            verbose: bool = False, compact: bool = False, max_cost: Decimal | None = None,
            attachments: list[Any] | None = None, elicit: dict[str, str] | None = None,
            elicit_defaults: bool = False) -> int:
    import asyncio

    out = out or sys.stdout
    err = err or sys.stderr
    if not prompt.strip():
        print("callstream: ask needs a prompt (an argument, or - to read it from stdin)", file=err)
        return 2
    from ..files.attach import AttachError
    from ..files.heap import return_big_blocks
    from ..settings.checks import ConfigError

    return_big_blocks()  # before any thread starts: every one of them shares the arenas it bounds
    try:
        return asyncio.run(_ask(prompt, provider, model, base_url, conversation, as_json, no_tools, out, err,
                                system, role, markdown, approve, verbose, compact, max_cost, attachments,
                                elicit, elicit_defaults))
    except (ConfigError, AttachError) as exc:  # an attachment is refused before anything is stored or sent
        print(f"callstream: {inert(str(exc))}", file=err)
        return 2
