"""The ``callstream`` command line.

Subcommands are added as the features land; each one is a thin shell over a
library function so the same thing can be tested without a process.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .stream import DIALECTS, ToolCallBlock, Turn, assemble
from .stream.inert import inert

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="callstream",
        description="A terminal chat client for LLMs whose speciality is the streamed tool call.",
    )
    parser.add_argument("--version", action="version", version=f"callstream {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    inspect = sub.add_parser(
        "inspect",
        help="assemble a recorded stream (raw SSE) and show its blocks, running nothing",
        description="Assemble a recorded provider stream (raw SSE bytes) into its blocks and outcome. "
        "Nothing is dispatched.",
    )
    inspect.add_argument("file", help="a file holding the raw SSE body of one streamed response")
    inspect.add_argument(
        "--dialect",
        default="auto",
        help=f"wire format: {', '.join(DIALECTS)} or auto (default: detect from the first frames)",
    )
    inspect.add_argument("--json", action="store_true", help="print the turn as one JSON document")
    chat = sub.add_parser(
        "chat",
        help="open the chat TUI (the default command)",
        description="Open the chat TUI on a provider: the config's default, else the embedded demo model.",
    )
    _provider_options(chat)
    ask = sub.add_parser(
        "ask",
        help="send one prompt and run the whole loop (tools included) without the TUI",
        description="Send PROMPT, stream the reply, run the calls it makes (each exactly once), and continue until "
        "the model stops. Exit 0 when it finished, 1 on a stated failure, 2 on bad usage or configuration.",
    )
    ask.add_argument("prompt")
    _provider_options(ask)
    ask.add_argument("--conversation", help="continue a stored conversation (its id or a unique prefix)")
    ask.add_argument("--json", action="store_true", help="print the conversation's turns as one JSON document")
    ask.add_argument("--no-tools", action="store_true", help="offer the model no tools")
    ledger = sub.add_parser(
        "ledger",
        help="list the idempotency ledger: every call claimed, and what became of it",
        description="List the idempotency ledger's entries (key, conversation, turn, tool, state, times).",
    )
    ledger.add_argument("--conversation", help="only this conversation's entries")
    ledger.add_argument("--json", action="store_true", help="print the entries as a JSON array")
    open_ = sub.add_parser("open", help="reopen a saved conversation in the TUI (no ID: pick from the list)",
                           description="Reopen a saved conversation as it was shown, and continue it.")
    open_.add_argument("id", nargs="?", help="conversation id, or a unique prefix of it")
    _provider_options(open_)
    transcripts = sub.add_parser("transcripts", help="list saved conversations",
                                 description="List saved conversations: id, date, model, turns, title.")
    transcripts.add_argument("--json", action="store_true", help="print them as a JSON array")
    export = sub.add_parser("export", help="write a saved conversation out (JSON or Markdown) to stdout")
    export.add_argument("id", help="conversation id, or a unique prefix of it")
    export.add_argument("--format", choices=["json", "markdown"], default="json")
    import_ = sub.add_parser("import", help="read an exported JSON transcript back into the store")
    import_.add_argument("file")
    replay = sub.add_parser(
        "replay", help="replay a recording (or a raw .sse capture) through the live pipeline; runs nothing",
        description="Feed a recorded stream through the same pipeline as a live one, at the recorded timing "
        "divided by --speed. Recorded tool results are shown; nothing is run.")
    replay.add_argument("file")
    replay.add_argument("--speed", default="1", help="0.25 … 64, or instant (default 1)")
    replay.add_argument("--idle-limit", type=float, default=None, help="cap any silence at this many seconds")
    replay.add_argument("--headless", action="store_true", help="print what ask would print instead of the TUI")
    replay.add_argument("--json", action="store_true", help="print the same document as ask --json")
    audit = sub.add_parser(
        "audit", help="what dispatching on partial arguments would have run, per call, by class",
        description="For every call in recordings or raw .sse captures: the first moment a tolerant decode had all "
        "required fields, what an eager dispatcher would have run then, and how it differs from the final call.")
    audit.add_argument("files", nargs="+", metavar="FILE")
    audit.add_argument("--json", action="store_true", help="per-call rows and a summary, as JSON")
    serve = sub.add_parser(
        "serve-demo",
        help="run the embedded demo model as a standalone server on 127.0.0.1",
        description="Serve the demo model (offline, scripted) on 127.0.0.1 in all four dialects, for any client: "
        "/v1/chat/completions, /v1/responses, /v1/messages, /v1beta/models/demo:streamGenerateContent?alt=sse.",
    )
    serve.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free port; default 8765)")
    serve.add_argument("--speed", type=float, default=1.0,
                       help="pacing: 1 is a brisk real model, 10 is ten times faster, 0 sends without pauses")
    return parser


def _provider_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", help="a profile from the config file, or openai-chat, openai-responses, "
                        "anthropic, gemini, demo (default: the config's default, else the demo model)")
    parser.add_argument("--model", help="model name (overrides the profile's)")
    parser.add_argument("--base-url", help="base URL (for any OpenAI-compatible server: Ollama, vLLM, llama.cpp…)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; a closed pipe (``| head``) or Ctrl-C ends it quietly."""
    try:
        return _main(argv)
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


def _main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "inspect":
        return _inspect(args.file, args.dialect, args.json)
    if args.command == "ask":
        from .ask import run_ask

        return run_ask(args.prompt, args.provider, args.model, args.base_url, args.conversation, args.json,
                       args.no_tools)
    if args.command == "open":
        return _chat(args.provider, args.model, args.base_url, conversation=args.id, transcripts=args.id is None)
    if args.command in ("transcripts", "export", "import"):
        from .transcripts_cli import export_cmd, import_cmd, transcripts_cmd

        if args.command == "transcripts":
            return transcripts_cmd(args.json)
        if args.command == "export":
            return export_cmd(args.id, args.format)
        return import_cmd(args.file)
    if args.command == "replay":
        from .replay_cli import replay_cmd

        return replay_cmd(args.file, args.speed, args.idle_limit, args.headless, args.json)
    if args.command == "audit":
        return _audit(args.files, args.json)
    if args.command == "ledger":
        return _ledger(args.conversation, args.json)
    if args.command == "serve-demo":
        return _serve_demo(args.port, args.speed)
    if args.command in (None, "chat"):
        return _chat(getattr(args, "provider", None), getattr(args, "model", None), getattr(args, "base_url", None))
    parser.print_help()
    return 0


def _chat(provider: str | None, model: str | None, base_url: str | None, conversation: str | None = None,
          transcripts: bool = False) -> int:
    from .config import ConfigError
    from .tui.app import make_app

    try:
        app = make_app(provider, model, base_url, conversation=conversation, transcripts=transcripts)
    except ConfigError as exc:
        return _fail(str(exc))
    app.run()
    return 0


def _fail(message: str) -> int:
    print(f"callstream: {inert(message)}", file=sys.stderr)
    return 2


def _inspect(file: str, dialect: str, as_json: bool) -> int:
    if dialect != "auto" and dialect not in DIALECTS:
        return _fail(f"unknown dialect {dialect!r} (choose one of {', '.join(DIALECTS)}, auto)")
    try:
        data = Path(file).read_bytes()
    except OSError as exc:
        return _fail(f"cannot read {file}: {exc.strerror or exc}")
    turn = assemble([data], dialect)
    if as_json:
        json.dump(turn.to_dict(), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_turn(turn))
    return 0


def _ledger(conversation: str | None, as_json: bool) -> int:
    import datetime
    import sqlite3

    from .paths import data_dir
    from .tools.ledger import Ledger

    path = data_dir() / "callstream.db"
    try:
        ledger = Ledger(path)
        entries = ledger.entries(conversation)
        ledger.close()
    except sqlite3.Error as exc:
        return _fail(f"cannot read the ledger {path}: {exc}")
    if as_json:
        json.dump([{k: e[k] for k in ("key", "conversation", "turn", "tool", "occurrence", "state", "is_error",
                                      "claimed_at", "finished_at")} for e in entries], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if not entries:
        print(f"the ledger is empty ({path})")
        return 0

    def when(stamp: float | None) -> str:
        if stamp is None:
            return "—"
        return datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")

    print(f"{'key':14} {'conversation':14} {'turn':>4} {'tool':18} {'state':9} {'claimed':19}  finished")
    for e in entries:
        print(f"{e['key'][:12]}… {inert(e['conversation'][:12]):14} {e['turn']:>4} {inert(e['tool'][:18]):18} "
              f"{e['state']:9} {when(e['claimed_at']):19}  {when(e['finished_at'])}")
    return 0


def _audit(files: list[str], as_json: bool) -> int:
    from .audit import CLASSES, audit_files, summarise
    from .config import ConfigError, load_config
    from .paths import data_dir
    from .store.recording import RecordingError
    from .tools.registry import Registry

    try:
        config = load_config()
    except ConfigError:
        config = None
    registry = Registry.default(data_dir(), config)

    def display(name: str) -> list[tuple[str, str]]:
        tool = registry.get(name)
        return [(f.path, f.label) for f in tool.display] if tool else []

    try:
        audits = audit_files([Path(f) for f in files], display)
    except RecordingError as exc:
        return _fail(str(exc))
    summary = summarise(audits)
    if as_json:
        json.dump({"calls": [a.row() for a in audits], "summary": summary}, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"{summary['calls']} call{'s' if summary['calls'] != 1 else ''} whose required fields parsed before "
          "the call ended, by what an eager dispatch would have run:")
    for klass in CLASSES:
        print(f"  {summary['counts'][klass]:>5}  {klass}")
        for example in summary["examples"].get(klass, []):
            print(f"         e.g. {inert(example)}")
    gap = summary["gap"]
    if gap.get("calls_timed"):
        print(f"time from the first moment to the call's end: median {gap['median_seconds'] * 1000:.0f} ms, "
              f"p90 {gap['p90_seconds'] * 1000:.0f} ms ({gap['calls_timed']} timed calls)")
    else:
        print("no timing: raw captures are read at an even pace")
    return 0


def _serve_demo(port: int, speed: float) -> int:
    import asyncio

    from .demo.server import DemoServer

    if speed < 0:
        return _fail("--speed must be 0 or more")
    server = DemoServer(port=port, speed=speed)

    async def run() -> None:
        await server.open()
        print(f"demo model (offline, scripted) listening on {server.base_url}", flush=True)
        print(f"  openai-chat       POST {server.base_url}/v1/chat/completions", flush=True)
        print(f"  openai-responses  POST {server.base_url}/v1/responses", flush=True)
        print(f"  anthropic         POST {server.base_url}/v1/messages", flush=True)
        print(f"  gemini            POST {server.base_url}/v1beta/models/demo:streamGenerateContent?alt=sse",
              flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.close()

    try:
        asyncio.run(run())
    except OSError as exc:
        return _fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        pass
    return 0


def format_turn(turn: Turn) -> str:
    """The human form of ``inspect``: blocks in order, then the outcome."""
    lines: list[str] = []
    for block in turn.blocks:
        if isinstance(block, ToolCallBlock):
            lines.extend(_format_call(block))
        else:
            label = "text" if block.kind == "text" else "reasoning"
            lines.append(f"── {label} ──")
            lines.append(inert(block.text))
        lines.append("")
    summary = f"outcome: {turn.outcome}"
    if turn.stop_reason:
        summary += f"  (finish reason: {inert(turn.stop_reason)})"
    lines.append(f"dialect: {turn.dialect}")
    lines.append(summary)
    if turn.error:
        lines.append(f"error: {inert(turn.error)}")
    return "\n".join(lines) + "\n"


def _format_call(call: ToolCallBlock) -> list[str]:
    head = f"── tool call: {inert(call.name or '(no name)')}"
    if call.id:
        head += f"  [{inert(call.id)}]"
    if call.provider_executed:
        head += "  (run by the provider)"
    lines = [head + " ──"]
    if call.final and call.arguments is not None:
        pretty = json.dumps(call.arguments, ensure_ascii=False, indent=2)
        lines.extend("  " + inert(line) for line in pretty.splitlines())
        lines.append("  final: complete and strictly parsed")
    else:
        raw = call.arguments_raw
        shown = raw if len(raw) <= 2000 else raw[:2000] + f"… ({len(raw)} characters)"
        lines.append("  raw arguments: " + (inert(shown) if raw else "(none)"))
        if call.provider_executed and call.problem is None:
            lines.append("  not for local dispatch")
        else:
            lines.append(f"  not final: {inert(call.problem or 'not ended')}")
    return lines
