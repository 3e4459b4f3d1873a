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
from ..rules.prices import PriceBook
from ..rules.titles import TITLE_LIMIT, clean_title
from ..stream.blocks import PENDING_APPROVAL, ToolCallBlock, block_from_record, block_record
from ..stream.limits import TooDeep, check_depth, full_text, one_line
from ..stream.usage import Usage
from .native_attachments import attachments_document, attachments_of
from .tree import StoredEntry, StoredTree, StoredTurn, StoredUser

if TYPE_CHECKING:
    from .transcripts import Store

__all__ = ["FORMAT", "VERSION", "ImportError_", "export_document", "import_document", "store_conversation",
           "store_new_entries"]

FORMAT = "callstream-transcript"
#: The transcript format's version (docs/transcript-format.md; 3 adds a user item's ``attachments``);
#: versions 1 and 2 still import.
VERSION = 3


def _item_document(item: StoredEntry, prices: PriceBook | None = None) -> dict[str, Any]:
    tree = {"entry": item.seq, "parent": item.parent, "branch": item.branch}
    if isinstance(item, StoredUser):
        user: dict[str, Any] = {"kind": item.kind, "text": item.text, "exchange": item.exchange,
                "exchange_message": item.exchange_message, **tree}
        if item.attachments:
            user["attachments"] = attachments_document(item.attachments)
        return user
    document: dict[str, Any] = {"kind": "turn", "turn": item.turn, "attempts": item.attempts, "outcome": item.outcome,
                "stop_reason": item.stop_reason, "error": item.error, "cause": item.cause,
                "note": item.note, "failures": item.failures, "killed": item.killed,
                "blocks": [block_record(b) for b in item.blocks], **tree}
    if item.model is not None:
        document["model"] = item.model
    if item.usage is not None:
        document["usage"] = item.usage.to_dict()  # only the counts the provider gave: none is written as 0
    cost = prices.cost(item.usage, item.model) if prices is not None else None
    if cost is not None:
        document["cost_usd"] = f"{cost:f}"  # derived (rules.prices), never read back: absent where unpriced
    if item.detail is not None:
        document["detail"] = item.detail  # a provider error's whole text
    return document


def export_document(conversation: StoredTree, prices: PriceBook | None = None) -> dict[str, Any]:
    """The whole tree, every branch, in the order it was written (with ``prices``: each priced turn's
    ``cost_usd``, and the conversation's ``cost``)."""
    meta: dict[str, Any] = {
        "id": conversation.id, "title": conversation.title, "created": conversation.created,
        "updated": conversation.updated, "provider": conversation.provider, "model": conversation.model,
        "dialect": conversation.dialect, "head": conversation.head}
    if conversation.forked_from:
        meta.update(forked_from=conversation.forked_from, forked_at=conversation.forked_at)
    items = conversation.tree or conversation.items
    spend = prices.spend(items) if prices is not None else None
    if spend is not None and spend.known:
        meta["cost"] = spend.to_json()  # every turn of every branch was paid for
    return {"format": FORMAT, "version": VERSION, "conversation": meta,
            "items": [_item_document(item, prices) for item in items]}


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
    if isinstance(version, bool) or version not in (1, 2, 3):
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
    numbers: dict[int, int] = {}
    for seq, item in enumerate(items):
        where = f"item {seq}"
        if not isinstance(item, dict) or item.get("kind") not in ("user", "summary", "turn"):
            raise ImportError_(f"the transcript is damaged: {where} is neither a user message nor a turn")
        if version == 1:
            parent, branch = (seq - 1 if seq else None), ""
        else:
            parent = _place(item, seq, numbers, where)
            branch = _optional_text(item, "branch", where) or ""
        entries.append(_entry_of(item, seq, parent, branch, where))
    head = None
    if version >= 2 and meta.get("head") is not None:
        named = _whole(meta.get("head"), "conversation.head (an entry number)", 0, _MAX_TURN)
        head = numbers.get(named)
    return store_conversation(store, meta, entries, head, as_new)


def _place(item: dict[str, Any], seq: int, numbers: dict[int, int], where: str) -> int | None:
    """Where a version 2 item goes in the tree: its own entry number (a whole
    number no other item has) and the entry it follows (null, or the number
    of an item BEFORE it: never itself, never a later one, so no loop can be
    stored). ``numbers``: entry number → position, of the items before it."""
    number = _whole(item.get("entry", seq), f"{where}.entry (its entry number)", 0, _MAX_TURN)
    if number in numbers:
        raise ImportError_(f"the transcript is damaged: {where} uses entry number {number} again "
                           f"(item {numbers[number]} has it already)")
    named = item.get("parent")
    if named is not None:
        named = _whole(named, f"{where}.parent (the entry it follows)", 0, _MAX_TURN)
        if named == number:
            raise ImportError_(f"the transcript is damaged: {where} (entry {number}) follows itself")
        if named not in numbers:
            raise ImportError_(f"the transcript is damaged: {where} (entry {number}) follows entry {named}, "
                               "which is not before it (a parent comes before its children)")
    numbers[number] = seq
    return numbers[named] if named is not None else None


def _entry_of(item: dict[str, Any], seq: int, parent: int | None, branch: str, where: str) -> StoredEntry:
    """One checked item (every field, before anything is written)."""
    for name in ("text", "exchange", "exchange_message", "outcome", "stop_reason", "error", "cause", "note",
                 "model", "detail"):
        _optional_text(item, name, where)
    if item["kind"] in ("user", "summary"):
        return StoredUser(seq, item.get("text") or "", item.get("exchange"), item.get("exchange_message"), parent,
                          branch, kind=item["kind"],
                          attachments=attachments_of(item.get("attachments"), where, ImportError_))
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


def _title(value: Any) -> str:
    """An imported title by the one rule (``clean_title``: one line, so it
    cannot forge a row of ``transcripts``; what is printed of it is made
    inert there), cut to the limit; none at all when nothing is left."""
    text = "" if value is None else str(value)[: 4 * TITLE_LIMIT]
    for cut in (len(text), TITLE_LIMIT):
        try:
            return clean_title(text[:cut])
        except ValueError:  # blank, or longer than a title may be
            continue
    return ""


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
    _check_tree(entries)
    now = time.time()
    created = _number(meta.get("created"), "conversation.created", now)
    updated = _number(meta.get("updated"), "conversation.updated", now)
    with store.transaction():
        store.create(conversation, str(meta.get("provider", "")), str(meta.get("model", "")),
                     str(meta.get("dialect", "")), _title(meta.get("title")))
        store.set_dates(conversation, created, updated)
        for entry in entries:
            store.insert_entry(conversation, entry.seq, entry, entry.parent, entry.branch)
        if entries:
            store.set_head(conversation, head if head is not None else entries[-1].seq)
    return conversation


def _check_tree(entries: list[StoredEntry]) -> None:
    """Every reader's entries make a tree before anything is written: each
    number once, each parent written before its child (so never a loop)."""
    seen: set[int] = set()
    for entry in entries:
        if entry.seq in seen:
            raise ImportError_(f"the transcript is damaged: entry {entry.seq} is there twice")
        if entry.parent is not None and entry.parent not in seen:
            raise ImportError_(f"the transcript is damaged: entry {entry.seq} follows entry {entry.parent}, "
                               "which is not before it")
        seen.add(entry.seq)


def _same(stored: StoredEntry, read: StoredEntry) -> bool:
    """Whether a stored entry is the one a file's entry was imported as (its words, its blocks as recorded)."""
    if isinstance(stored, StoredUser) or isinstance(read, StoredUser):
        return isinstance(stored, StoredUser) and isinstance(read, StoredUser) and stored.text == read.text
    return ((stored.outcome, stored.note, stored.error) == (read.outcome, read.note, read.error)
            and [block_record(b) for b in stored.blocks] == [block_record(b) for b in read.blocks])


def store_new_entries(store: Store, meta: dict[str, Any], entries: list[StoredEntry]) -> tuple[str, int]:
    """A conversation imported before from a file that has grown since (llm's
    logs.db): the file's entries are followed down the stored tree while
    each is found there as it was imported; what follows — the new entries —
    is written after the last one found, in one transaction: (id, how many).
    An entry the file now tells differently (a call whose result came since)
    starts a branch beside the stored one, which is kept as it was (nothing
    stored is rewritten); a conversation continued in callstream keeps its
    own entries beside the new ones."""
    try:
        conversation = check_id(meta.get("id"))
    except InvalidId as exc:
        raise ImportError_(str(exc)) from None
    _check_tree(entries)
    with store.transaction():
        stored = store.load(conversation)
        if stored is None:
            raise ImportError_(f"conversation {conversation} is not stored")
        children: dict[int | None, list[StoredEntry]] = {}
        for item in stored.tree:
            children.setdefault(item.parent, []).append(item)
        placed: dict[int, int] = {}  # the file's entry → the stored one it is, or was written as
        branches = {item.seq: item.branch for item in stored.tree}
        seq = max(branches, default=-1) + 1
        turn, added, last = stored.next_turn, 0, None
        for entry in entries:
            parent = placed[entry.parent] if entry.parent is not None else None
            siblings = children.get(parent, [])
            found = next((item for item in siblings if _same(item, entry)), None)
            if found is not None:
                placed[entry.seq] = found.seq
                continue
            # beside entries already there: a branch of its own; else on its parent's
            branch = uuid.uuid4().hex[:8] if siblings else branches.get(parent, "") if parent is not None else ""
            if isinstance(entry, StoredTurn):
                entry.turn, turn = turn, turn + 1
            placed[entry.seq] = seq
            entry.seq, entry.parent, entry.branch = seq, parent, branch
            store.insert_entry(conversation, seq, entry, parent, branch)
            children.setdefault(parent, []).append(entry)
            branches[seq] = branch
            added, last, seq = added + 1, seq, seq + 1
        if last is not None:
            store.set_head(conversation, last)
            updated = _number(meta.get("updated"), "conversation.updated", time.time())
            store.set_dates(conversation, stored.created, max(updated, stored.updated))
    return conversation, added
