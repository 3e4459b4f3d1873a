"""``callstream search QUERY [--json]``: every saved conversation, searched (sqlite FTS5).

What is searched is what may be shown: user messages, prose, tool names and
the fields the tools' display allow-lists show (``app/store/search.py``).
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Callable

from ..stream.inert import inert, inert_json
from .common import fail, open_store

__all__ = ["register", "run", "MAX_LIMIT"]

DisplaySpecs = tuple[list[tuple[str, str]], list[tuple[str, str]]]

#: The most matches one search prints.
MAX_LIMIT = 10_000


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    search = sub.add_parser(
        "search", help="search every saved conversation (messages, prose, tool names, allow-listed fields)",
        description="Full-text search over every saved conversation: your messages, the replies' prose, tool "
                    "names and the fields each tool's display allow-list shows (never an unlisted argument). "
                    "Every word must appear; the last may be the start of a word. Best matches first.")
    search.add_argument("query", nargs="+", help="the words to find")
    search.add_argument("--json", action="store_true", help="print the matches as a JSON array")
    search.add_argument("--limit", type=int, default=20,
                        help=f"at most this many matches, 1 to {MAX_LIMIT} (default 20)")
    search.add_argument("--conversation", metavar="ID", help="only in this conversation (its id or a unique prefix)")


def _display() -> Callable[[str], DisplaySpecs]:
    """The tools' allow-lists as the config says them NOW (the built-ins, the
    command tools, and ``[mcp.NAME.tool.TOOL].display`` without starting any
    server): what search may find and show, whatever the index was written
    with. A config that cannot be read leaves the built-ins' lists only."""
    from ..files.paths import data_dir
    from ..mcp.names import tool_name
    from ..settings.checks import ConfigError
    from ..settings.config import load_config
    from ..tools.registry import Registry

    try:
        config = load_config()
    except ConfigError:
        return Registry.default(data_dir()).display_specs
    registry = Registry.default(data_dir(), config)
    served = {tool_name(server, tool): list(options.display)
              for server, settings in config.mcp.items() for tool, options in settings.tool.items()}

    def display(name: str) -> DisplaySpecs:
        if registry.get(name) is None and name in served:
            return served[name], []
        return registry.display_specs(name)

    return display


def run(args: argparse.Namespace) -> int:
    import sqlite3

    text = " ".join(args.query)
    if not 1 <= args.limit <= MAX_LIMIT:
        return fail(f"--limit must be a whole number from 1 to {MAX_LIMIT} (got {str(args.limit)[:40]})")
    store = open_store(_display())
    try:
        conversation = store.resolve(args.conversation) if args.conversation is not None else None
        hits = store.search(text, args.limit, conversation)
    except sqlite3.Error as exc:
        return fail(f"cannot search {store.path}: {exc}")
    finally:
        store.close()
    if args.json:
        sys.stdout.write(inert_json([h.to_dict() for h in hits]) + "\n")
        return 0
    if not hits:
        print(f"nothing saved matches {inert(text)!r}")
        return 0
    for hit in hits:
        when = datetime.datetime.fromtimestamp(hit.updated).strftime("%Y-%m-%d")
        print(f"{hit.conversation[:12]}  entry {hit.seq:>3}  {when}  {inert(hit.title)[:40]}")
        print(f"    {inert(hit.snippet)[:200]}")
    print("(open one at its match: callstream open ID --at ENTRY)")
    return 0
