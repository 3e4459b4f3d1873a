"""Transcripts from and to other clients, one module per format.

Each foreign reader turns its file into a list of neutral ``Step``s — a user
message, assistant prose or reasoning, a call, a call's result — and
``conversation_of`` builds callstream entries from them the one way: an
assistant turn runs until a user message or until results come back; a call
is ``ran`` (``failed`` where the source marked its result as an error) only
where the source recorded a result for its id, and a call without one is
``not run`` in a turn that carries an interruption note saying so. Nothing is
fabricated: no result for a call that has none, no call for a result that
has no call (such a result is dropped, and counted). Prose of one kind next
to prose of the same kind (Claude Code writes each content block of a
message on its own line; Codex writes consecutive messages after a
compaction) is one block, its pieces a blank line apart. A ``note`` (a
compaction's summary) is a turn of its own that holds only the note; a
``usage`` step is what the source said the current turn's request cost.
What a reader did not know (a record type, a block type of a newer
version) is counted in ``Imported.skipped``, and the import says so.

Readers: ``claude_code`` (session JSONL), ``codex`` (rollout JSONL), ``llm``
(simonw/llm's ``logs.db``). Writers: ``openai_jsonl`` (the messages array a
provider would accept); Markdown and the callstream format live in
``markdown.py`` and ``native.py``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...stream import ReasoningBlock, TextBlock, ToolCallBlock, block_record
from ...stream.limits import TooDeep, loads
from ...stream.usage import Usage
from ..native import ImportError_
from ..tree import StoredEntry, StoredTurn, StoredUser

__all__ = ["Step", "Imported", "add_branch", "conversation_of", "detect", "read_foreign", "imported_id",
           "skipped_words", "FORMATS", "ImportError_"]

#: The formats ``callstream import --from`` names.
FORMATS = ("callstream", "claude-code", "codex", "llm")


@dataclass(slots=True)
class Step:
    """One thing the source recorded, in order. ``kind``: user, text,
    reasoning, call (``call_id``, ``name``, ``arguments``: a dict, or the raw
    text when the source's was not a JSON object), result (``call_id``,
    ``text``, ``is_error``), note (``text``), usage (``usage``)."""

    kind: str
    text: str = ""
    call_id: str | None = None
    name: str = ""
    arguments: Any = None
    is_error: bool = False
    usage: Usage | None = None


@dataclass(slots=True)
class Imported:
    """A foreign conversation, ready for ``store_conversation``."""

    meta: dict[str, Any]
    entries: list[StoredEntry] = field(default_factory=list)
    #: Results whose call the source did not record (dropped, never invented into a call).
    orphans: int = 0
    #: What the reader did not know and left out: a description -> how many.
    skipped: dict[str, int] = field(default_factory=dict)
    #: The entry shown (the source's current path); None: the last one.
    head: int | None = None


def imported_id(program: str, source_id: str) -> str:
    """The id an imported conversation is stored under: the program's short
    name, a digest of the source's own id (so the first 12 characters, all
    ``transcripts`` shows, tell conversations apart; the same source gives
    the same id, so importing it twice is refused), then that id itself."""
    digest = hashlib.sha256(f"{program}\x1f{source_id}".encode()).hexdigest()[:10]
    tail = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in source_id)
    return f"{program}-{digest}-{tail}"[:128]


def skipped_words(skipped: dict[str, int]) -> str:
    """What a reader left out, as the import says it: "" when nothing."""
    if not skipped:
        return ""
    return "; left out what this version of callstream does not know: " + ", ".join(
        f"{n} × {what}" for what, n in sorted(skipped.items()))


def _same(a: StoredEntry, b: StoredEntry) -> bool:
    if isinstance(a, StoredUser) or isinstance(b, StoredUser):
        return isinstance(a, StoredUser) and isinstance(b, StoredUser) and a.text == b.text
    return (a.note == b.note and a.outcome == b.outcome
            and [block_record(x) for x in a.blocks] == [block_record(x) for x in b.blocks])


def add_branch(main: Imported, branch: Imported) -> None:
    """Another end of the source's tree beside ``main``: what it shares with
    an entry already placed (the longest run from the first entry) is that
    entry; the rest is written after it, a branch of its own. The head stays
    where ``main`` had it (the source's current path)."""
    if main.head is None and main.entries:
        main.head = main.entries[-1].seq
    children: dict[int | None, list[StoredEntry]] = {}
    for entry in main.entries:
        children.setdefault(entry.parent, []).append(entry)
    parent: int | None = None
    rest = branch.entries
    while rest:
        found = next((e for e in children.get(parent, []) if _same(e, rest[0])), None)
        if found is None:
            break
        parent, rest = found.seq, rest[1:]
    seq = max((e.seq for e in main.entries), default=-1) + 1
    turn = sum(isinstance(e, StoredTurn) for e in main.entries)
    for entry in rest:
        entry.seq, entry.parent = seq, parent
        if isinstance(entry, StoredTurn):
            entry.turn, turn = turn, turn + 1
        main.entries.append(entry)
        parent, seq = seq, seq + 1
    main.orphans += branch.orphans


def _join(block: TextBlock | ReasoningBlock, text: str) -> None:
    """More prose of the block's kind: a separate piece, a blank line apart."""
    if block.text and text and not block.text.endswith("\n\n"):
        block.append("\n\n")
    block.append(text)


def _call_block(step: Step) -> ToolCallBlock:
    if isinstance(step.arguments, dict):
        raw, arguments, final = json.dumps(step.arguments, ensure_ascii=False), step.arguments, True
    else:
        raw, arguments, final = ("" if step.arguments is None else str(step.arguments)), None, False
    return ToolCallBlock(id=step.call_id, name=step.name, fragments=[raw] if raw else [], size=len(raw), ended=True,
                         final=final, arguments=arguments, state="not run",
                         problem=None if final else "the source's arguments are not a JSON object")


def conversation_of(steps: list[Step], meta: dict[str, Any], source: str) -> Imported:
    """Entries from steps (see the module docstring)."""
    out = Imported(meta)
    turn: StoredTurn | None = None
    calls: dict[str, ToolCallBlock] = {}
    answered = False  # results came back since the current turn's last call: the next prose is a new turn

    def new_turn() -> StoredTurn:
        parent = out.entries[-1].seq if out.entries else None
        made = StoredTurn(len(out.entries), sum(isinstance(e, StoredTurn) for e in out.entries), [],
                          outcome="complete", parent=parent)
        out.entries.append(made)
        return made

    for step in steps:
        if step.kind == "user":
            if not step.text.strip():
                continue
            parent = out.entries[-1].seq if out.entries else None
            out.entries.append(StoredUser(len(out.entries), step.text, "done", None, parent))
            turn, answered = None, False
        elif step.kind == "note":
            if step.text.strip():
                made = new_turn()
                made.note = step.text
                turn, answered = None, False
        elif step.kind == "usage":
            if turn is not None and step.usage is not None:
                turn.usage = step.usage if turn.usage is None else turn.usage + step.usage
        elif step.kind in ("text", "reasoning", "call"):
            if turn is None or answered:
                turn, answered = new_turn(), False
            if step.kind == "call":
                block = _call_block(step)
                turn.blocks.append(block)
                if step.call_id:
                    calls[step.call_id] = block
            elif step.text:
                last = turn.blocks[-1] if turn.blocks else None
                kind = TextBlock if step.kind == "text" else ReasoningBlock
                if isinstance(last, kind):
                    _join(last, step.text)
                else:
                    turn.blocks.append(kind(step.text))
        elif step.kind == "result":
            call = calls.get(step.call_id or "")
            if call is None or call.state != "not run":
                out.orphans += 1
                continue
            call.state = "failed" if step.is_error else "ran"
            call.result = step.text
            answered = True
    for entry in out.entries:
        if isinstance(entry, StoredTurn):
            missing = [b.name or "a call" for b in entry.blocks if isinstance(b, ToolCallBlock)
                       and b.state == "not run"]
            for unanswered in entry.blocks:
                if isinstance(unanswered, ToolCallBlock) and unanswered.state == "not run":
                    unanswered.stop(f"the {source} transcript recorded no result for it")
            if missing:
                names = ", ".join(dict.fromkeys(missing))
                verb = "it" if len(missing) == 1 else "them"
                entry.outcome, entry.cause = "cut_off", "imported"
                entry.note = (f"Interrupted: the {source} transcript recorded no result for {names}; "
                              f"callstream did not run {verb}.")
    if not any(isinstance(e, StoredUser) for e in out.entries):
        raise ImportError_(f"the {source} transcript holds no user message")
    meta.setdefault("title", next(e.text for e in out.entries if isinstance(e, StoredUser))[:80])
    return out


def detect(path: Path) -> str:
    """Which format ``path`` is in (by content, not by name): a JSONL whose
    first record is Codex's or Claude Code's, llm's sqlite, else a single
    JSON document — ours, or the callstream reader says why not."""
    with path.open("rb") as f:
        head = f.read(16)
    if head.startswith(b"SQLite format 3"):
        return "llm"
    with path.open(encoding="utf-8", errors="replace") as text:
        lines = [line for line in (next(text, "") for _ in range(2)) if line.strip()]
    try:
        first = json.loads(lines[0]) if lines else None
    except (ValueError, RecursionError):
        return "callstream"  # not one JSON record per line: a document (pretty-printed, or not JSON at all)
    if isinstance(first, dict) and "payload" in first and first.get("type") in (
            "session_meta", "response_item", "event_msg", "turn_context"):
        return "codex"
    if isinstance(first, dict) and ("sessionId" in first or "parentUuid" in first or first.get("type") in (
            "summary", "user", "assistant", "file-history-snapshot")):
        return "claude-code"
    if len(lines) < 2 or (isinstance(first, dict) and "format" in first):
        return "callstream"
    raise ImportError_("not a format callstream imports (callstream, Claude Code JSONL, Codex rollout JSONL, "
                       "llm logs.db); name one with --from")


def read_foreign(path: Path, form: str) -> list[Imported]:
    """The conversations in a foreign file (llm's logs.db may hold many)."""
    if form == "claude-code":
        from . import claude_code

        return [claude_code.read(path)]
    if form == "codex":
        from . import codex

        return [codex.read(path)]
    if form == "llm":
        from . import llm

        return llm.read(path)
    raise ImportError_(f"unknown format {form!r} (one of {', '.join(FORMATS)})")


def jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file, one per line; a damaged line is a
    stated error naming it (a transcript cut mid-write loses only its last line)."""
    records: list[dict[str, Any]] = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except (ValueError, RecursionError, TooDeep):
            if number == len(lines):
                break  # the last line of a file still being written
            raise ImportError_(f"line {number} is not JSON") from None
        if isinstance(record, dict):
            records.append(record)
    return records
