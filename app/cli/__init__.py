"""The ``callstream`` command line: one module per command.

Each command module has ``register(subparsers)`` and ``run(args) -> int`` and is
a thin shell over a library function, so the same thing can be tested without a
process. Command modules are imported lazily where they pull in heavy parts
(the TUI, the demo server), so ``--help`` and quick commands start fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .. import __version__

__all__ = ["main", "COMMANDS"]

# httpx imports its own command line (``httpx._main``: click, and rich's syntax highlighting of
# responses) whenever click is installed, and it is here (uvicorn, under the MCP SDK, needs it): 3.3 MB
# of every callstream process's memory for a command this program never runs. A ``None`` in
# ``sys.modules`` makes that import fail, and httpx then defines its ``main`` without it.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

# command name → module under app/cli that registers and runs it
COMMANDS: dict[str, str] = {
    "inspect": "inspect",
    "chat": "chat",
    "open": "chat",
    "ask": "ask",
    "ledger": "ledger",
    "transcripts": "transcripts",
    "export": "transcripts",
    "import": "transcripts",
    "fork": "fork",
    "search": "search",
    "replay": "replay",
    "audit": "audit",
    "serve-demo": "serve_demo",
    "mcp": "mcp",
}


def _module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"{__name__}.{name}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="callstream",
        description="A terminal chat client for LLMs whose speciality is the streamed tool call.",
    )
    parser.add_argument("--version", action="version", version=f"callstream {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in dict.fromkeys(COMMANDS.values()):
        _module(module).register(sub)
    return parser


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
    except Exception as exc:
        from ..files.dbfile import DataFileError
        from ..rules.ids import InvalidId
        from ..store import UnresolvedConversation

        if not isinstance(exc, DataFileError | InvalidId | UnresolvedConversation):
            raise
        # a data file that cannot be used (one line naming it and what to do), an id outside the
        # alphabet, or one that names no conversation or several (listed): exit 2
        from .common import fail

        return fail(str(exc))


def _main(argv: Sequence[str] | None = None) -> int:
    if not (sys.argv[1:] if argv is None else argv):
        # plain ``callstream``: the TUI with its defaults, without building every command's parser
        # (importing each command module is a sizeable part of the first frame's budget)
        return int(_module("chat").run(argparse.Namespace(command="chat")))
    parser = _parser()
    args = parser.parse_args(argv)
    command = args.command or "chat"
    if command not in COMMANDS:
        parser.print_help()
        return 0
    return int(_module(COMMANDS[command]).run(args))
