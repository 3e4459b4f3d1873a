"""``callstream ledger``: every call the idempotency ledger claimed, and what became of it, on
either back-end; ``callstream ledger migrate`` creates or upgrades a PostgreSQL ledger's schema."""

from __future__ import annotations

import argparse
import sys

from ..stream.inert import inert, inert_json
from .common import fail, open_store

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ledger = sub.add_parser(
        "ledger",
        help="list the idempotency ledger: every call claimed, and what became of it",
        description="List the idempotency ledger's entries (key, conversation, turn, tool, state, times): the "
                    "embedded sqlite one, or the shared PostgreSQL one the config's ledger (or CALLSTREAM_LEDGER_URL) "
                    "names. `callstream ledger migrate` creates or upgrades the PostgreSQL schema.",
    )
    ledger.add_argument("action", nargs="?", choices=["list", "migrate"], default="list",
                        help="list (default) the entries, or migrate the PostgreSQL schema")
    ledger.add_argument("--conversation", metavar="ID", help="only this conversation's entries (its id or a unique "
                        "prefix, among the stored conversations and the ledger's)")
    ledger.add_argument("--json", action="store_true", help="print the entries as a JSON array")


def run(args: argparse.Namespace) -> int:
    if args.action == "migrate":
        return _migrate()
    return _ledger(args.conversation, args.json)


def _migrate() -> int:
    from ..ledger import LedgerUnavailable, ledger_url
    from ..settings.checks import ConfigError
    from ..settings.config import load_config

    try:
        url = ledger_url(load_config())
    except ConfigError as exc:
        return fail(str(exc))
    if not url:
        print("the embedded sqlite ledger needs no migration (its schema is made when it opens)")
        return 0
    try:
        from ..ledger.postgres import SCHEMA_VERSION, migrate, public_url
    except ImportError as exc:
        return fail(f"the PostgreSQL ledger needs psycopg 3: {exc}")
    try:
        before, after = migrate(url)
    except LedgerUnavailable as exc:
        return fail(str(exc))
    where = public_url(url)
    if before == after:
        print(f"the ledger schema at {where} is up to date (version {SCHEMA_VERSION})")
    else:
        print(f"migrated the ledger schema at {where}: version {before} → {after}")
    return 0


def _ledger(conversation: str | None, as_json: bool) -> int:
    import datetime
    import sqlite3

    from ..ledger import LedgerUnavailable, conversation_scope, open_ledger
    from ..rules.ids import check_id
    from ..settings.checks import ConfigError
    from ..settings.config import load_config

    if conversation is not None:
        check_id(conversation)  # the alphabet first, before any file is opened
    try:
        config = load_config()
        ledger = open_ledger(config)
    except ConfigError as exc:
        return fail(str(exc))
    except (sqlite3.Error, LedgerUnavailable) as exc:
        return fail(f"cannot open the ledger: {exc}")
    path = ledger.where
    try:
        entries = ledger.entries()
    except (sqlite3.Error, LedgerUnavailable) as exc:
        return fail(f"cannot read the ledger {path}: {exc}")
    finally:
        ledger.close()
    if conversation is not None:
        # the prefix rule over the stored conversations and the ones the ledger names (a shared ledger
        # holds other machines' too); keys name a conversation by its scope (``team:NAME/ID`` with a team)
        scope = conversation_scope("", config.team)
        named = [e["conversation"][len(scope):] for e in entries if e["conversation"].startswith(scope)]
        whole = _resolve(conversation, named)
        entries = [e for e in entries if e["conversation"] == conversation_scope(whole, config.team)]
    branches = _branches()
    for e in entries:  # which branch of its conversation each claim was made on ("" is the main one)
        e["branch"] = branches.get((e["conversation"], e["turn"]), "")
    if as_json:
        sys.stdout.write(inert_json([{k: e[k] for k in ("key", "conversation", "branch", "turn", "tool", "occurrence",
                                                        "state", "result", "is_error", "claimed_at", "finished_at",
                                                        "owner", "fence")} for e in entries]))
        sys.stdout.write("\n")
        return 0
    if not entries:
        print(f"the ledger is empty ({path})")
        return 0

    def when(stamp: float | None) -> str:
        if stamp is None:
            return "—"
        return datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")

    print(f"{'key':14} {'conversation':14} {'branch':8} {'turn':>4} {'tool':18} {'state':9} {'claimed':19}  finished")
    for e in entries:
        print(f"{e['key'][:12]}… {inert(e['conversation'][:12]):14} {inert(e['branch'] or 'main')[:8]:8} "
              f"{e['turn']:>4} {inert(e['tool'][:18]):18} "
              f"{e['state']:9} {when(e['claimed_at']):19}  {when(e['finished_at'])}")
    return 0


def _resolve(conversation: str, named: list[str]) -> str:
    """The whole id ``conversation`` names (``Store.resolve``; without a store, among the ledger's alone)."""
    from ..files.paths import data_dir
    from ..store import resolve_among

    if not (data_dir() / "callstream.db").exists():
        return resolve_among(conversation, named)
    store = open_store()
    try:
        return store.resolve(conversation, named)
    finally:
        store.close()


def _branches() -> dict[tuple[str, int], str]:
    """(conversation, turn) → branch, from the transcript store (the ledger
    keeps keys, not trees); {} where there is no store to ask."""
    import sqlite3

    from ..files.paths import data_dir

    if not (data_dir() / "callstream.db").exists():
        return {}
    try:
        store = open_store()
    except (sqlite3.Error, Exception):  # a store that cannot open names no branches; the ledger still lists
        return {}
    try:
        return store.turn_branches()
    finally:
        store.close()
