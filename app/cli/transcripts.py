"""``callstream transcripts [delete ID… | rename ID TITLE]``, ``export`` and
``import [--as-new]``: the store from the shell."""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import Any, TextIO

from ..rules.titles import TITLE_LIMIT
from ..rules.words import plural
from ..stream.inert import inert, inert_json
from .common import fail, open_store

__all__ = ["register", "run", "transcripts_cmd", "delete_cmd", "rename_cmd", "export_cmd", "import_cmd"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    transcripts = sub.add_parser(
        "transcripts", help="list, delete or rename saved conversations",
        description="List saved conversations (id, date, model, turns, title); `transcripts delete ID…` removes "
                    "conversations, `transcripts rename ID TITLE` names one. An ID is a conversation's id or a "
                    "unique prefix of it.")
    transcripts.add_argument("--json", action="store_true", help="print them as a JSON array")
    actions = transcripts.add_subparsers(dest="action", metavar="ACTION")
    delete = actions.add_parser(
        "delete", help="delete conversations: their turns, branches and recordings",
        description="Delete each conversation: its messages and turns on every branch, its search rows and its "
                    "recording files. The idempotency ledger keeps its rows: they are the proof of what ran (a "
                    "ticket opened in a deleted conversation was still opened), and a call that ran is never "
                    "run again should the conversation come back. A conversation another callstream is in the middle "
                    "of a turn on is not deleted (that process is named); nothing is deleted then. Asks first on a "
                    "terminal; --yes does not.")
    delete.add_argument("ids", nargs="+", metavar="ID", help="a conversation's id, or a unique prefix of it")
    delete.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    rename = actions.add_parser(
        "rename", help="give a conversation a title (shown by transcripts, the TUI's list and export)",
        description=f"Give a conversation a title: one line, at most {TITLE_LIMIT} characters (whitespace runs "
                    "become one space). It replaces the title its first message gave it.")
    rename.add_argument("id", metavar="ID", help="a conversation's id, or a unique prefix of it")
    rename.add_argument("title", metavar="TITLE")
    export = sub.add_parser(
        "export", help="write a saved conversation out to stdout (callstream JSON, Markdown, OpenAI messages)",
        description="callstream: the versioned transcript (every branch; docs/transcript-format.md; 'json' is "
                    "the same). markdown: for people, the path shown. jsonl-openai: the path shown as the "
                    "messages array an OpenAI-compatible chat endpoint accepts, one message per line.")
    export.add_argument("id", help="conversation id, or a unique prefix of it")
    export.add_argument("--format", choices=["callstream", "json", "markdown", "jsonl-openai"], default="callstream")
    import_ = sub.add_parser(
        "import", help="read a transcript into the store: callstream's, Claude Code's, Codex's or llm's",
        description="Import a callstream export, a Claude Code session JSONL, a Codex CLI rollout JSONL, or "
                    "simonw/llm's logs.db (every conversation in it). Calls are 'ran' only where the source "
                    "recorded their result; a call without one is 'not run', with a note. A conversation already "
                    "stored is refused, unless --as-new; an llm conversation already stored gets what is new in "
                    "the file (import the grown logs.db again).")
    import_.add_argument("file")
    import_.add_argument("--from", dest="source", choices=["auto", "callstream", "claude-code", "codex", "llm"],
                         default="auto", help="the file's format (default: recognised by its content)")
    import_.add_argument("--as-new", action="store_true",
                         help="store it under a fresh id, beside a copy already stored (the file's id is not used)")


def run(args: argparse.Namespace) -> int:
    if args.command == "transcripts":
        if args.action == "delete":
            return delete_cmd(args.ids, args.yes)
        if args.action == "rename":
            return rename_cmd(args.id, args.title)
        return transcripts_cmd(args.json)
    if args.command == "export":
        return export_cmd(args.id, args.format)
    return import_cmd(args.file, args.source, args.as_new)


def _cell(text: str) -> str:
    """A stored value as one cell of a row: one line (a title stored before
    imports were cleaned may hold a newline that would forge a row), inert."""
    return inert(" ".join(text.split()))


def transcripts_cmd(as_json: bool) -> int:
    store = open_store()
    try:
        rows = store.list()
    finally:
        store.close()
    if as_json:
        sys.stdout.write(inert_json(rows))
        sys.stdout.write("\n")
        return 0
    if not rows:
        print("no saved conversations yet")
        return 0
    print(f"{'id':12}  {'updated':16}  {'model':20}  {'turns':>9}  title")
    for row in rows:
        when = datetime.datetime.fromtimestamp(row["updated"]).strftime("%Y-%m-%d %H:%M")
        print(f"{row['id'][:12]}  {when}  {_cell(row['model'])[:20]:20}  {plural(row['turns'], 'turn'):>9}  "
              f"{_cell(row['title'] or '(untitled)')[:60]}")
    print("(an id may be given by any unique start of it, as shown here)")
    return 0


def delete_cmd(ids: list[str], yes: bool, stdin: TextIO | None = None) -> int:
    """Every id is resolved before anything is deleted: one that names no
    conversation, or several, deletes nothing; nor does one that another
    live callstream is in the middle of an exchange on (``store/holds.py``:
    why refuse), which is named. ``Store.delete`` looks again inside its
    transaction, so one taken up meanwhile is refused there."""
    from ..files.paths import recordings_dir
    from ..store import ConversationBusy
    from ..store.housekeeping import delete_conversation

    stdin = stdin or sys.stdin
    store = open_store()
    try:
        chosen = list(dict.fromkeys(store.resolve(text) for text in ids))
        for conversation in chosen:
            found = store.holders(conversation)
            if found:
                others = " (nothing was deleted)" if len(chosen) > 1 else ""
                return fail(str(ConversationBusy(conversation, found)) + others)
        rows = {row["id"]: row for row in store.list() if row["id"] in chosen}
        if not yes:
            if stdin is None or not stdin.isatty():
                return fail("not deleting without asking: run it on a terminal, or add --yes")
            for conversation in chosen:
                row = rows[conversation]
                print(f"  {conversation[:12]}  {plural(row['turns'], 'turn'):>9}  "
                      f"{_cell(row['title'] or '(untitled)')[:60]}")
            print(f"Delete {plural(len(chosen), 'conversation')} (every branch and the recordings)? The ledger keeps "
                  "its rows. [y/N] ", end="", flush=True)
            answer = stdin.readline().strip().lower()
            if answer not in ("y", "yes"):
                print("nothing deleted")
                return 1
        for conversation in chosen:
            try:
                removed = delete_conversation(store, conversation, recordings_dir())
            except ConversationBusy as exc:  # taken up since the look above: this one and those after it stay
                return fail(str(exc))
            files = f" and {plural(len(removed), 'recording file')}" if removed else ""
            print(f"deleted {conversation}{files}")
    finally:
        store.close()
    return 0


def rename_cmd(conversation: str, title: str) -> int:
    store = open_store()
    try:
        whole = store.resolve(conversation)
        try:
            shown = store.rename(whole, title)
        except ValueError as exc:
            return fail(str(exc))
    finally:
        store.close()
    print(f"{whole[:12]} is now titled {inert(shown)!r}")
    return 0


def export_cmd(conversation: str, form: str) -> int:
    from ..files.paths import data_dir
    from ..settings.checks import ConfigError
    from ..settings.config import load_config
    from ..store import export_document, markdown_of
    from ..tools.registry import Registry

    store = open_store()
    try:
        stored = store.load(store.resolve(conversation))
    finally:
        store.close()
    if stored is None:
        return fail(f"no stored conversation {conversation!r} (callstream transcripts lists them)")
    try:
        config = load_config()
    except ConfigError:
        config = None
    prices = _prices(config)
    if form in ("callstream", "json"):
        sys.stdout.write(inert_json(export_document(stored, prices)))
        sys.stdout.write("\n")
        return 0
    if form == "jsonl-openai":
        from ..store.interchange.openai_jsonl import messages_of

        for message in messages_of(stored):
            sys.stdout.write(inert_json(message, indent=None) + "\n")
        return 0
    registry = Registry.default(data_dir(), config)
    sys.stdout.write(inert(markdown_of(stored, registry.display_specs, prices)))
    return 0


def _prices(config: Any) -> Any:
    """The price book an export is priced by: the config's default profile and every profile's own
    prices (the table alone when the config cannot be read)."""
    from ..rules.prices import PriceBook
    from ..settings.checks import ConfigError
    from ..settings.profiles import price_book

    if config is None:
        return PriceBook()
    try:
        return price_book(config.providers.values(), config.profile())
    except ConfigError:
        return PriceBook()


def import_cmd(file: str, source: str = "auto", as_new: bool = False) -> int:
    from ..store import ImportError_, import_document, store_conversation
    from ..store.interchange import detect, read_foreign, skipped_words
    from ..store.native import store_new_entries
    from ..stream.limits import loads

    path = Path(file)
    try:
        form = detect(path) if source == "auto" else source
        if form == "callstream":
            try:
                document = loads(path.read_text(encoding="utf-8"))
            except UnicodeDecodeError:
                return fail(f"{file} is not a text file (an export is UTF-8 JSON)")
            except ValueError as exc:
                return fail(f"{file} is not JSON that callstream reads: {exc}")
            foreign = None
        else:
            foreign = read_foreign(path, form)
    except OSError as exc:
        return fail(f"cannot read {file}: {exc.strerror or exc}")
    except ImportError_ as exc:
        return fail(f"{file}: {exc}")
    except RecursionError:
        return fail(f"{file}: nested too deeply to be a transcript")
    store = open_store()
    try:
        if foreign is None:
            print(f"imported conversation {import_document(store, document, as_new)}")
            return 0
        for imported in foreign:
            if form == "llm" and not as_new and store.exists(str(imported.meta.get("id"))):
                # llm's logs.db grows: a conversation imported before gets what is new in it
                conversation, added = store_new_entries(store, imported.meta, imported.entries)
                print(f"imported {plural(added, 'new entry', 'new entries')} into conversation {conversation} from "
                      f"llm" if added else f"conversation {conversation} is up to date (nothing new in the file)")
                continue
            conversation = store_conversation(store, imported.meta, imported.entries, imported.head, as_new=as_new)
            dropped = f" ({imported.orphans} results without their call left out)" if imported.orphans else ""
            print(f"imported conversation {conversation} from {form}{dropped}{skipped_words(imported.skipped)}")
    except ImportError_ as exc:
        return fail(f"{file}: {exc}")
    finally:
        store.close()
    return 0
