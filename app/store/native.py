"""callstream's own transcript format (docs/transcript-format.md): a whole
conversation tree as one JSON document, exported and imported; and
``store_conversation``, which writes a conversation read from any file
(ours, or another client's through ``interchange``) in one transaction.
Every field of an import is checked before anything is written."""

from __future__ import annotations

import math
import time
import uuid
from typing import TYPE_CHECKING, Any

from ..rules.ids import InvalidId, check_id
from ..stream.blocks import PENDING_APPROVAL, ToolCallBlock, block_from_record, block_record
from ..stream.limits import TooDeep, check_depth, full_text, one_line
from ..stream.usage import Usage
from .tree import StoredEntry, StoredTree, StoredTurn, StoredUser

if TYPE_CHECKING:
    from .transcripts import Store

__all__ = ["FORMAT", "VERSION", "ImportError_", "export_document", "import_document", "store_conversation"]

FORMAT = "callstream-transcript"
#: The transcript format's version (docs/transcript-format.md); version 1 files still import.
VERSION = 2


def _item_document(item: StoredEntry) -> dict[str, Any]:
    tree = {"entry": item.seq, "parent": item.parent, "branch": item.branch}
    if isinstance(item, StoredUser):
        return {"kind": "user", "text": item.text, "exchange": item.exchange,
                "exchange_message": item.exchange_message, **tree}
    document: dict[str, Any] = {"kind": "turn", "turn": item.turn, "attempts": item.attempts, "outcome": item.outcome,
                "stop_reason": item.stop_reason, "error": item.error, "cause": item.cause,
                "note": item.note, "failures": item.failures, "killed": item.killed,
                "blocks": [block_record(b) for b in item.blocks], **tree}
    if item.model is not None:
        document["model"] = item.model
    if item.usage is not None:
        document["usage"] = item.usage.to_dict()  # only the counts the provider gave: none is written as 0
    if item.detail is not None:
        document["detail"] = item.detail  # a provider error's whole text
    return document


def export_document(conversation: StoredTree) -> dict[str, Any]:
    """The whole tree, every branch, in the order it was written."""
    meta: dict[str, Any] = {
        "id": conversation.id, "title": conversation.title, "created": conversation.created,
        "updated": conversation.updated, "provider": conversation.provider, "model": conversation.model,
        "dialect": conversation.dialect, "head": conversation.head}
    if conversation.forked_from:
        meta.update(forked_from=conversation.forked_from, forked_at=conversation.forked_at)
    return {"format": FORMAT, "version": VERSION, "conversation": meta,
            "items": [_item_document(item) for item in conversation.tree or conversation.items]}


class ImportError_(ValueError):
    """The file is not a transcript callstream can import; the message says why."""


_MAX_TURN = 10**9


def _number(value: Any, where: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ImportError_(f"the transcript is damaged: {where} must be a finite number of seconds "
                           f"(got {str(value)[:40]!r})")
    return float(value)


def _whole(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ImportError_(f"the transcript is damaged: {where} must be a whole number from {low} to {high} "
                           f"(got {str(value)[:40]!r})")
    return value


def _optional_text(item: dict[str, Any], name: str, where: str) -> str | None:
    value = item.get(name)
    if value is not None and not isinstance(value, str):
        raise ImportError_(f"the transcript is damaged: {where}.{name} must be text")
    return value


def import_document(store: Store, document: Any, as_new: bool = False) -> str:
    """Store an exported transcript (version 1: one line of entries; 2: a
    tree); returns its conversation id. Every field is checked before
    anything is written (a wrong one is an ``ImportError_`` naming it), and
    the whole import is one transaction: nothing half-stored. ``as_new``:
    under a fresh id, beside any stored copy, instead of refusing."""
    try:
        check_depth(document)
    except TooDeep as exc:
        raise ImportError_(f"the transcript is nested too deep ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ImportError_("not a callstream transcript export (no \"format\": \"callstream-transcript\")")
    version = document.get("version")
    if isinstance(version, bool) or version not in (1, 2):
        raise ImportError_(f"unsupported transcript version {str(version)[:20]!r}")
    meta = document.get("conversation")
    items = document.get("items")
    if not isinstance(meta, dict) or not isinstance(items, list) or (
            not as_new and not isinstance(meta.get("id"), str)):
        raise ImportError_("the transcript has no conversation id or no items")
    if not as_new:
        try:
            check_id(meta["id"])
        except InvalidId as exc:
            raise ImportError_(str(exc)) from None
    entries: list[StoredEntry] = []
    numbers: dict[Any, int] = {}
    for seq, item in enumerate(items):
        where = f"item {seq}"
        if not isinstance(item, dict) or item.get("kind") not in ("user", "turn"):
            raise ImportError_(f"the transcript is damaged: {where} is neither a user message nor a turn")
        if version == 1:
            parent, branch = (seq - 1 if seq else None), ""
        else:
            numbers[item.get("entry", seq)] = seq
            named = item.get("parent")
            if named is not None and named not in numbers:
                raise ImportError_(f"the transcript is damaged: {where} follows an entry that is not before it")
            parent = numbers[named] if named is not None else None
            branch = _optional_text(item, "branch", where) or ""
        entries.append(_entry_of(item, seq, parent, branch, where))
    head = numbers.get(meta.get("head")) if version == 2 else None
    return store_conversation(store, meta, entries, head, as_new)


def _entry_of(item: dict[str, Any], seq: int, parent: int | None, branch: str, where: str) -> StoredEntry:
    """One checked item (every field, before anything is written)."""
    for name in ("text", "exchange", "exchange_message", "outcome", "stop_reason", "error", "cause", "note",
                 "model", "detail"):
        _optional_text(item, name, where)
    if item["kind"] == "user":
        return StoredUser(seq, item.get("text") or "", item.get("exchange"), item.get("exchange_message"), parent,
                          branch)
    turn = _whole(item.get("turn"), f"{where}.turn", 0, _MAX_TURN)
    attempts = _whole(item.get("attempts", 1), f"{where}.attempts", 0, 1000)
    failures = item.get("failures", [])
    if not isinstance(failures, list) or not all(isinstance(f, str) for f in failures):
        raise ImportError_(f"the transcript is damaged: {where}.failures must be a list of lines")
    records = item.get("blocks", [])
    if not isinstance(records, list):
        raise ImportError_(f"the transcript is damaged: {where}.blocks must be a list")
    try:
        blocks = [block_from_record(b) for b in records]
    except (TypeError, ValueError, AttributeError) as exc:
        raise ImportError_(f"the transcript is damaged: {where} has a damaged block: {exc}") from None
    usage = item.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise ImportError_(f"the transcript is damaged: {where}.usage must be an object of token counts")
    model = item.get("model")
    return _never_pending(StoredTurn(
        seq, turn, blocks, attempts, item.get("outcome"), item.get("stop_reason"), item.get("error"),
        item.get("cause"), item.get("note"), list(failures), parent=parent, branch=branch,
        usage=Usage.from_dict(usage), model=one_line(model, 120) if model else None,
        detail=full_text(item.get("detail"))))


#: Why a call a file holds waiting for an approval did not run (its card and its result say so).
IMPORTED_PENDING = "it was waiting for approval in the imported file, and callstream never runs a call from a file"


def _never_pending(turn: StoredTurn) -> StoredTurn:
    """A call the file holds in ``needs approval`` / ``awaiting approval`` is
    ``not run``, whatever key and arguments the file gives it: an import is
    never dispatched, so nothing is left for a reopen or ``--approve`` to
    answer (as the foreign readers in ``interchange`` do). The turn's note
    tells the model."""
    names = []
    for block in turn.blocks:
        if isinstance(block, ToolCallBlock) and block.state in PENDING_APPROVAL:
            block.stop(IMPORTED_PENDING)
            names.append(block.name or "a call")
    if names and (turn.note is None or turn.note.startswith("Waiting for approval")):
        listed = ", ".join(dict.fromkeys(names))
        turn.note = (f"Imported: {listed} waited for approval in the file; callstream does not run a call from a "
                     f"file, so {'it' if len(names) == 1 else 'they'} did not run.")
    return turn


def store_conversation(store: Store, meta: dict[str, Any], entries: list[StoredEntry],
                       head: int | None = None, as_new: bool = False) -> str:
    """Write a whole conversation read from a file (ours or another
    client's), in one transaction: entries in order, each after its parent.
    Refuses an id outside the alphabet or already stored, unless ``as_new``:
    then it is stored under a fresh id (the file's id is not used at all)."""
    if as_new:
        conversation = uuid.uuid4().hex
    else:
        try:
            conversation = check_id(meta.get("id"))
        except InvalidId as exc:
            raise ImportError_(str(exc)) from None
        if store.exists(conversation):
            raise ImportError_(f"conversation {conversation} is already stored (import --as-new imports it "
                               "under a new id beside it)")
    now = time.time()
    created = _number(meta.get("created"), "conversation.created", now)
    updated = _number(meta.get("updated"), "conversation.updated", now)
    with store.transaction():
        store.create(conversation, str(meta.get("provider", "")), str(meta.get("model", "")),
                     str(meta.get("dialect", "")), str(meta.get("title", "")))
        store.set_dates(conversation, created, updated)
        for entry in entries:
            store.insert_entry(conversation, entry.seq, entry, entry.parent, entry.branch)
        if entries:
            store.set_head(conversation, head if head is not None else entries[-1].seq)
    return conversation

