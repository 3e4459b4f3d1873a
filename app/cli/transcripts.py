"""``callstream transcripts``, ``export`` and ``import``: the store from the shell."""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..stream.inert import inert, inert_json
from ..words import plural
from .common import fail

if TYPE_CHECKING:
    from ..store.transcripts import Store

__all__ = ["register", "run", "transcripts_cmd", "export_cmd", "import_cmd"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    transcripts = sub.add_parser("transcripts", help="list saved conversations",
                                 description="List saved conversations: id, date, model, turns, title.")
    transcripts.add_argument("--json", action="store_true", help="print them as a JSON array")
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
                    "recorded their result; a call without one is 'not run', with a note.")
    import_.add_argument("file")
    import_.add_argument("--from", dest="source", choices=["auto", "callstream", "claude-code", "codex", "llm"],
                         default="auto", help="the file's format (default: recognised by its content)")


def run(args: argparse.Namespace) -> int:
    if args.command == "transcripts":
        return transcripts_cmd(args.json)
    if args.command == "export":
        return export_cmd(args.id, args.format)
    return import_cmd(args.file, args.source)


def _store() -> Store:
    from ..paths import data_dir
    from ..store.transcripts import Store

    return Store(data_dir() / "callstream.db")


def transcripts_cmd(as_json: bool) -> int:
    store = _store()
    rows = store.list()
    store.close()
    if as_json:
        sys.stdout.write(inert_json(rows))
        sys.stdout.write("\n")
        return 0
    if not rows:
        print("no saved conversations yet")
        return 0
    for row in rows:
        when = datetime.datetime.fromtimestamp(row["updated"]).strftime("%Y-%m-%d %H:%M")
        print(f"{row['id'][:12]}  {when}  {inert(row['model'])[:20]:20}  {plural(row['turns'], 'turn'):>9}  "
              f"{inert(row['title'])[:60]}")
    return 0


def export_cmd(conversation: str, form: str) -> int:
    from ..config import ConfigError, load_config
    from ..ids import InvalidId
    from ..paths import data_dir
    from ..store.transcripts import export_document, markdown_of
    from ..tools.registry import Registry

    store = _store()
    try:
        stored = store.load(conversation)
    except InvalidId as exc:
        return fail(str(exc))
    finally:
        store.close()
    if stored is None:
        return fail(f"no stored conversation {conversation!r} (callstream transcripts lists them)")
    if form in ("callstream", "json"):
        sys.stdout.write(inert_json(export_document(stored)))
        sys.stdout.write("\n")
        return 0
    if form == "jsonl-openai":
        from ..store.interchange.openai_jsonl import messages_of

        for message in messages_of(stored):
            sys.stdout.write(inert_json(message, indent=None) + "\n")
        return 0
    try:
        config = load_config()
    except ConfigError:
        config = None
    registry = Registry.default(data_dir(), config)
    sys.stdout.write(inert(markdown_of(stored, registry.display_specs)))
    return 0


def import_cmd(file: str, source: str = "auto") -> int:
    from ..store.interchange import detect, read_foreign
    from ..store.transcripts import ImportError_, import_document, store_conversation
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
    store = _store()
    try:
        if foreign is None:
            print(f"imported conversation {import_document(store, document)}")
            return 0
        for imported in foreign:
            conversation = store_conversation(store, imported.meta, imported.entries)
            dropped = f" ({imported.orphans} results without their call left out)" if imported.orphans else ""
            print(f"imported conversation {conversation} from {form}{dropped}")
    except ImportError_ as exc:
        return fail(f"{file}: {exc}")
    finally:
        store.close()
    return 0
