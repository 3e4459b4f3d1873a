"""``callstream transcripts``, ``export`` and ``import``: the store from the shell."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

from .config import ConfigError, load_config
from .paths import data_dir
from .store.transcripts import ImportError_, Store, export_document, import_document, markdown_of
from .stream.inert import inert
from .tools.registry import Registry

__all__ = ["transcripts_cmd", "export_cmd", "import_cmd"]


def _store() -> Store:
    return Store(data_dir() / "callstream.db")


def _fail(message: str) -> int:
    print(f"callstream: {inert(message)}", file=sys.stderr)
    return 2


def transcripts_cmd(as_json: bool) -> int:
    store = _store()
    rows = store.list()
    store.close()
    if as_json:
        json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    if not rows:
        print("no saved conversations yet")
        return 0
    for row in rows:
        when = datetime.datetime.fromtimestamp(row["updated"]).strftime("%Y-%m-%d %H:%M")
        print(f"{row['id'][:12]}  {when}  {inert(row['model'])[:20]:20}  {row['turns']:>3} turns  "
              f"{inert(row['title'])[:60]}")
    return 0


def export_cmd(conversation: str, form: str) -> int:
    store = _store()
    stored = store.load(conversation)
    store.close()
    if stored is None:
        return _fail(f"no stored conversation {conversation!r} (callstream transcripts lists them)")
    if form == "json":
        json.dump(export_document(stored), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    try:
        config = load_config()
    except ConfigError:
        config = None
    registry = Registry.default(data_dir(), config)

    def display(name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        tool = registry.get(name)
        if tool is None:
            return [], []
        return [(f.path, f.label) for f in tool.display], [(f.path, f.label) for f in tool.result_display]

    sys.stdout.write(inert(markdown_of(stored, display)))
    return 0


def import_cmd(file: str) -> int:
    try:
        document = json.loads(Path(file).read_text(encoding="utf-8"))
    except OSError as exc:
        return _fail(f"cannot read {file}: {exc.strerror or exc}")
    except ValueError as exc:
        return _fail(f"{file} is not JSON: {exc}")
    store = _store()
    try:
        conversation = import_document(store, document)
    except ImportError_ as exc:
        return _fail(f"{file}: {exc}")
    finally:
        store.close()
    print(f"imported conversation {conversation}")
    return 0
