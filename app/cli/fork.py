"""``callstream fork ID [--at N]``: a new conversation from a saved one's path up to entry N."""

from __future__ import annotations

import argparse

from ..stream.inert import inert_json
from .common import fail, open_store

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fork = sub.add_parser(
        "fork", help="copy a saved conversation, up to one of its entries, into a new conversation",
        description="Copy a saved conversation's path (as last shown, or up to entry N: the 'entry' numbers of "
                    "export and search) into a new conversation; the original is untouched. Calls that ran in "
                    "the original after that point count as another branch's in the fork.")
    fork.add_argument("id", help="conversation id, or a unique prefix of it")
    fork.add_argument("--at", type=int, metavar="N", help="the entry to fork at (default: the last one shown)")
    fork.add_argument("--json", action="store_true", help="print {conversation, forked_from, forked_at} as JSON")


def run(args: argparse.Namespace) -> int:
    store = open_store()
    try:
        source, at, fork = store.fork_at(args.id, args.at)
    except LookupError as exc:
        return fail(str(exc.args[0]))
    finally:
        store.close()
    if args.json:
        print(inert_json({"conversation": fork, "forked_from": source.id, "forked_at": at}, indent=None))
    else:
        print(f"forked {source.id[:12]} at entry {at} into {fork}  (callstream open {fork[:12]})")
    return 0
