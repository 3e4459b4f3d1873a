"""``callstream ask PROMPT``: the whole loop without the TUI (printed by ``printer.Printer``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from typing import Any, TextIO

from ..stream.inert import inert, inert_json
from .common import provider_options

__all__ = ["register", "run", "run_ask"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ask = sub.add_parser(
        "ask",
        help="send one prompt and run the whole loop (tools included) without the TUI",
        description="Send PROMPT, stream the reply, run the calls it makes (each exactly once), and continue until "
        "the model stops. Exit 0 when it finished, 1 on a stated failure, 2 on bad usage or configuration.",
    )
    ask.add_argument("prompt")
    provider_options(ask)
    ask.add_argument("--conversation", help="continue a stored conversation (its id or a unique prefix)")
    ask.add_argument("--json", action="store_true", help="print the conversation's turns as one JSON document")
    ask.add_argument("--no-tools", action="store_true", help="offer the model no tools")


def run(args: argparse.Namespace) -> int:
    return run_ask(args.prompt, args.provider, args.model, args.base_url, args.conversation, args.json,
                   args.no_tools)


async def _ask(prompt: str, provider: str | None, model: str | None, base_url: str | None,
               conversation: str | None, as_json: bool, no_tools: bool, out: TextIO, err: TextIO) -> int:
    from ..config import ConfigError
    from ..runtime import open_runtime
    from .printer import Printer

    runtime = open_runtime(provider, model, base_url)
    try:
        session = runtime.session(conversation, offer_tools=not no_tools)
    except ConfigError:
        runtime.close()
        raise
    endpoint = runtime.endpoint
    if not as_json:
        session.listeners.append(Printer(session, out, err))
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, session.cancel)
    try:
        done = await session.send(prompt)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        await session.aclose()
        await runtime.registry.aclose()
        runtime.close()
    if as_json:
        document: dict[str, Any] = {"conversation": session.conversation, "provider": endpoint.label,
                                    "status": done.status, "turns": [t.to_dict() for t in session.turns]}
        if done.message:
            document["message"] = done.message
        out.write(inert_json(document))
        out.write("\n")
    elif done.message:
        print(inert(f"  ! {done.message}"), file=err)
    return 0 if done.status == "done" else 1


def run_ask(prompt: str, provider: str | None = None, model: str | None = None, base_url: str | None = None,
            conversation: str | None = None, as_json: bool = False, no_tools: bool = False,
            out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    if not prompt.strip():
        print("callstream: ask needs a prompt", file=err)
        return 2
    from ..config import ConfigError

    try:
        return asyncio.run(_ask(prompt, provider, model, base_url, conversation, as_json, no_tools, out, err))
    except ConfigError as exc:
        print(f"callstream: {inert(str(exc))}", file=err)
        return 2
