"""Transcripts: every turn saved in the block shape it was shown in.

One sqlite file in the data dir (the ledger's), three tables: conversations;
entries (a user message, or an assistant turn with its attempts, outcome,
note and the notes of its failed attempts); blocks (each block's full record,
as ``block_record`` writes it). ``Recorder`` below writes them as the turn
progresses — a turn's row at every transition, a block when it completes,
prose in progress every half second — so a process killed mid-turn leaves
every completed turn whole and the turn in progress marked ``streaming``,
which a reopen shows as interrupted.

Nothing here stores a key: requests are not stored at all, only what the
conversation says.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..chat.events import (
    AttemptFailed,
    AttemptStarted,
    BlockGrew,
    BlockOpened,
    CallState,
    ChatEvent,
    ExchangeDone,
    TurnDone,
    UserSent,
)
from ..conversation import Assistant, CallRecord, Entry, ToolResult, User
from ..dbfile import connect
from ..ids import InvalidId, check_id
from ..stream import Block, TextBlock, ToolCallBlock, Turn, block_from_record, block_record
from ..stream.limits import TooDeep, check_depth, loads
from ..words import interrupted_note

if TYPE_CHECKING:  # the loop (httpx, the dispatcher, jsonschema) is imported where it is used, not to list the store
    from ..chat.session import ChatSession, Resync

__all__ = ["Store", "StoredTurn", "StoredUser", "Conversation", "TranscriptWriter", "history_of", "retry_point",
           "export_document",
           "import_document", "markdown_of", "ImportError_"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
    provider TEXT NOT NULL, model TEXT NOT NULL, dialect TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,                 -- user | turn
    text TEXT,                          -- the user's message
    turn INTEGER,                       -- the turn index (the ledger's)
    state TEXT NOT NULL,                -- streaming | done
    attempts INTEGER NOT NULL DEFAULT 0,
    outcome TEXT, stop_reason TEXT, error TEXT, cause TEXT, note TEXT,
    failures TEXT NOT NULL DEFAULT '[]',
    exchange TEXT, exchange_message TEXT,  -- on user rows: how the exchange ended
    started REAL NOT NULL, finished REAL,
    PRIMARY KEY (conversation, seq));
CREATE TABLE IF NOT EXISTS blocks (
    conversation TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (conversation, seq, idx));
-- a call's argument buffer, apart from its record: written once when it stops
-- growing, while the small record is rewritten at each state (older files keep
-- the buffer inside the record; both load)
CREATE TABLE IF NOT EXISTS call_arguments (
    conversation TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL, raw TEXT NOT NULL,
    PRIMARY KEY (conversation, seq, idx));
"""

#: What a reopen says about a turn the process did not live to finish.
KILLED = "callstream stopped"


@dataclass(slots=True)
class StoredUser:
    seq: int
    text: str
    exchange: str | None = None
    exchange_message: str | None = None


@dataclass(slots=True)
class StoredTurn:
    seq: int
    turn: int
    blocks: list[Block]
    attempts: int = 1
    outcome: str | None = None
    stop_reason: str | None = None
    error: str | None = None
    cause: str | None = None
    note: str | None = None
    failures: list[str] = field(default_factory=list)
    #: The process died while this turn streamed.
    killed: bool = False


@dataclass(slots=True)
class Conversation:
    id: str
    title: str
    created: float
    updated: float
    provider: str
    model: str
    dialect: str
    items: list[StoredUser | StoredTurn] = field(default_factory=list)

    @property
    def turn_count(self) -> int:
        return sum(1 for item in self.items if isinstance(item, StoredTurn))

    @property
    def next_turn(self) -> int:
        return max((i.turn for i in self.items if isinstance(i, StoredTurn)), default=-1) + 1


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path)
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        #: (conversation, seq, index) → the argument buffer last written there
        self._written: dict[tuple[str, int, int], str] = {}

    def close(self) -> None:
        self._db.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing (the connection autocommits otherwise)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- writing -------------------------------------------------------------

    def create(self, conversation: str, provider: str, model: str, dialect: str, title: str = "") -> None:
        now = time.time()
        self._db.execute("INSERT OR IGNORE INTO conversations VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (conversation, title, now, now, provider, model, dialect))

    def _touch(self, conversation: str) -> None:
        self._db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (time.time(), conversation))

    def add_user(self, conversation: str, text: str) -> int:
        with self.transaction():  # the seq is chosen under the write lock: two processes never share one
            seq = self._next_seq(conversation)
            self._db.execute("INSERT INTO entries (conversation, seq, kind, text, state, started) "
                             "VALUES (?, ?, 'user', ?, 'done', ?)", (conversation, seq, text, time.time()))
            self._db.execute("UPDATE conversations SET title = ? WHERE id = ? AND title = ''",
                             (" ".join(text.split())[:80], conversation))
            self._touch(conversation)
        return seq

    def _next_seq(self, conversation: str) -> int:
        row = self._db.execute("SELECT MAX(seq) FROM entries WHERE conversation = ?", (conversation,)).fetchone()
        return (row[0] if row[0] is not None else -1) + 1

    def allocate_turn(self, conversation: str) -> tuple[int, int]:
        """The next turn number of ``conversation``, chosen and reserved (its
        row inserted) in one write transaction, so two processes on one
        conversation never get the same number — and so never the same
        ledger keys, nor each other's rows."""
        with self.transaction():
            row = self._db.execute("SELECT MAX(turn) FROM entries WHERE conversation = ? AND kind = 'turn'",
                                   (conversation,)).fetchone()
            turn = (row[0] if row[0] is not None else -1) + 1
            seq = self._next_seq(conversation)
            self._db.execute("INSERT INTO entries (conversation, seq, kind, turn, state, attempts, started) "
                             "VALUES (?, ?, 'turn', ?, 'streaming', 0, ?)", (conversation, seq, turn, time.time()))
        return turn, seq

    def entry_count(self, conversation: str) -> int:
        row = self._db.execute("SELECT COUNT(*) FROM entries WHERE conversation = ?", (conversation,)).fetchone()
        return int(row[0])

    def start_turn(self, conversation: str, turn: int, attempt: int) -> int:
        """A turn's (new) attempt: the row exists once per turn index; blocks
        of an earlier attempt are dropped, as they are on screen. The note an
        earlier run of the turn ended with (a Ctrl+R retry) stays on screen,
        so it joins the turn's failure notes here."""
        with self.transaction():
            row = self._db.execute("SELECT seq, note, failures FROM entries WHERE conversation = ? AND kind = 'turn' "
                                   "AND turn = ?", (conversation, turn)).fetchone()
            if row is None:
                seq = self._next_seq(conversation)
                self._db.execute("INSERT INTO entries (conversation, seq, kind, turn, state, attempts, started) "
                                 "VALUES (?, ?, 'turn', ?, 'streaming', ?, ?)",
                                 (conversation, seq, turn, attempt, time.time()))
            else:
                seq = row["seq"]
                failures = json.loads(row["failures"] or "[]") + ([row["note"]] if row["note"] else [])
                self._db.execute("UPDATE entries SET state = 'streaming', attempts = ?, outcome = NULL, note = NULL, "
                                 "failures = ? WHERE conversation = ? AND seq = ?",
                                 (attempt, json.dumps(failures), conversation, seq))
                self._db.execute("DELETE FROM blocks WHERE conversation = ? AND seq = ?", (conversation, seq))
                self._db.execute("DELETE FROM call_arguments WHERE conversation = ? AND seq = ?", (conversation, seq))
                self._written = {k: v for k, v in self._written.items() if k[:2] != (conversation, seq)}
            self._touch(conversation)
        return seq

    def add_failure(self, conversation: str, seq: int, message: str) -> None:
        row = self._db.execute("SELECT failures FROM entries WHERE conversation = ? AND seq = ?",
                               (conversation, seq)).fetchone()
        failures = loads(row[0]) if row else []
        failures.append(message)
        self._db.execute("UPDATE entries SET failures = ? WHERE conversation = ? AND seq = ?",
                         (json.dumps(failures), conversation, seq))

    def put_block(self, conversation: str, seq: int, index: int, block: Block) -> None:
        """A block's record; for a call, the record without its arguments
        (its buffer goes to ``call_arguments``, only when it changed; the
        parsed arguments are not stored at all: they are the buffer, parsed)."""
        record = block_record(block)
        if isinstance(block, ToolCallBlock):
            raw = record.pop("arguments_raw")
            record.pop("arguments", None)
            key = (conversation, seq, index)
            last = self._written.get(key)
            if last is not raw and last != raw:
                self._db.execute("INSERT OR REPLACE INTO call_arguments VALUES (?, ?, ?, ?)",
                                 (conversation, seq, index, raw))
                self._written[key] = raw
        self._db.execute("INSERT OR REPLACE INTO blocks VALUES (?, ?, ?, ?)",
                         (conversation, seq, index, json.dumps(record, ensure_ascii=False)))

    def finish_turn(self, conversation: str, seq: int, turn: Turn, attempts: int, note: str | None,
                    blocks: list[Block]) -> None:
        with self.transaction():
            for index, block in enumerate(blocks):
                self.put_block(conversation, seq, index, block)
            self._db.execute(
                "UPDATE entries SET state = 'done', attempts = ?, outcome = ?, stop_reason = ?, error = ?, cause = ?, "
                "note = ?, finished = ? WHERE conversation = ? AND seq = ?",
                (attempts, turn.outcome, turn.stop_reason, turn.error, turn.cause, note, time.time(), conversation,
                 seq))
            self._touch(conversation)

    def finish_exchange(self, conversation: str, status: str, message: str | None) -> None:
        row = self._db.execute("SELECT MAX(seq) FROM entries WHERE conversation = ? AND kind = 'user'",
                               (conversation,)).fetchone()
        if row[0] is not None:
            self._db.execute("UPDATE entries SET exchange = ?, exchange_message = ? WHERE conversation = ? AND seq = ?",
                             (status, message, conversation, row[0]))

    def delete(self, conversation: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM blocks WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM call_arguments WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM entries WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation,))

    # -- reading -------------------------------------------------------------

    def list(self, text: str | None = None) -> list[dict[str, Any]]:
        """Conversations, newest first: id, title, created, updated, model, turns."""
        sql = ("SELECT c.*, (SELECT COUNT(*) FROM entries e WHERE e.conversation = c.id AND e.kind = 'turn') AS turns "
               "FROM conversations c")
        params: list[Any] = []
        if text:
            like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            sql += (" WHERE c.title LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM entries e WHERE e.conversation = c.id"
                    " AND e.text LIKE ? ESCAPE '\\') OR EXISTS (SELECT 1 FROM blocks b WHERE b.conversation = c.id "
                    "AND b.record LIKE ? ESCAPE '\\') OR EXISTS (SELECT 1 FROM call_arguments a "
                    "WHERE a.conversation = c.id AND a.raw LIKE ? ESCAPE '\\')")
            params = [like, like, like, like]
        sql += " ORDER BY c.updated DESC"
        return [dict(row) for row in self._db.execute(sql, params)]

    def load(self, conversation: str) -> Conversation | None:
        """A conversation by its id or a unique prefix; ``InvalidId`` for an id outside the alphabet."""
        check_id(conversation)
        row = self._db.execute("SELECT * FROM conversations WHERE id = ?", (conversation,)).fetchone()
        if row is None:
            matches = self._db.execute("SELECT * FROM conversations WHERE substr(id, 1, ?) = ?",
                                       (len(conversation), conversation)).fetchall()
            if len(matches) != 1:
                return None
            row = matches[0]
        result = Conversation(row["id"], row["title"], row["created"], row["updated"], row["provider"],
                              row["model"], row["dialect"])
        blocks: dict[int, list[tuple[int, str]]] = {}
        for b in self._db.execute("SELECT seq, idx, record FROM blocks WHERE conversation = ?", (result.id,)):
            blocks.setdefault(b["seq"], []).append((b["idx"], b["record"]))
        raws = {(a["seq"], a["idx"]): a["raw"] for a in
                self._db.execute("SELECT seq, idx, raw FROM call_arguments WHERE conversation = ?", (result.id,))}
        for entry in self._db.execute("SELECT * FROM entries WHERE conversation = ? ORDER BY seq", (result.id,)):
            if entry["kind"] == "user":
                result.items.append(StoredUser(entry["seq"], entry["text"] or "", entry["exchange"],
                                               entry["exchange_message"]))
                continue
            records = [_stored_block(rec, raws.get((entry["seq"], idx)))
                       for idx, rec in sorted(blocks.get(entry["seq"], []))]
            stored = StoredTurn(entry["seq"], entry["turn"], records, entry["attempts"], entry["outcome"],
                                entry["stop_reason"], entry["error"], entry["cause"], entry["note"],
                                loads(entry["failures"] or "[]"))
            if entry["state"] == "streaming":
                _mark_killed(stored)
            result.items.append(stored)
        return result


def _stored_block(record: str, raw: str | None = None) -> Block:
    """A stored block, its call buffer put back from ``call_arguments`` (older
    records hold it inline); one that cannot be read shows as a line saying
    so (the rest of the turn still opens)."""
    try:
        data = loads(record)
        if raw is not None and isinstance(data, dict) and data.get("type") == "tool_call":
            data["arguments_raw"] = raw
        return block_from_record(data)
    except ValueError as exc:
        return TextBlock(f"[this block could not be read back: {exc}]")


def _mark_killed(turn: StoredTurn) -> None:
    """A turn the process did not live to finish: what ran stays, what was
    running has an unknown outcome, the rest did not run."""
    from ..tools.dispatcher import UNKNOWN_OUTCOME

    turn.killed = True
    unfinished = []
    for block in turn.blocks:
        if isinstance(block, ToolCallBlock) and not block.provider_executed:
            if block.state == "running":
                block.state, block.result = "unknown", UNKNOWN_OUTCOME
            elif block.state in ("preparing", "waiting"):
                block.state = "not run"
                block.result = f"Not run: {KILLED} while it was being prepared."
                unfinished.append(block.name or "a call")
    turn.outcome, turn.cause, turn.error = "cut_off", "killed", f"{KILLED} during this turn"
    if not turn.note:
        turn.note = interrupted_note(KILLED, unfinished) if unfinished else f"Interrupted: {KILLED} during this turn."


def history_of(conversation: Conversation) -> list[Entry]:
    """The provider-neutral history a stored conversation continues from:
    every answered call with its real result; unfinished calls absent; an
    interrupted turn's prose carries its note."""
    from ..chat.session import ANSWERED, interruption_note

    history: list[Entry] = []
    for item in conversation.items:
        if isinstance(item, StoredUser):
            history.append(User(item.text))
            continue
        text = "".join(b.text for b in item.blocks if b.type == "text")
        answered = [b for b in item.blocks if isinstance(b, ToolCallBlock) and b.state in ANSWERED
                    and not b.provider_executed]
        records = [CallRecord(c.id or f"call_{item.turn}_{i}", c.name, c.arguments or {})
                   for i, c in enumerate(answered)]
        note = item.note
        if note is None and item.outcome not in (None, "complete"):
            turn = Turn("", item.outcome, item.stop_reason, item.error, item.blocks, item.cause)  # type: ignore[arg-type]
            note = interruption_note(turn, [b.name for b in item.blocks if isinstance(b, ToolCallBlock)
                                           and b.state == "not run"])
        history.append(Assistant(text, records, note))
        for call, record in zip(answered, records, strict=True):
            history.append(ToolResult(record.id, call.name, call.result or "", call.state != "ran"))
    return history


def retry_point(conversation: Conversation, history: list[Entry]) -> tuple[int, int | None] | None:
    """Where Ctrl+R starts in a reopened conversation whose last turn failed
    (``ChatSession._failed``): re-issue that turn under its own index when
    none of its calls was dispatched, else continue after it as a new turn."""
    from ..chat.session import dispatched

    if not conversation.items or not isinstance(conversation.items[-1], StoredTurn):
        return None
    last = conversation.items[-1]
    if last.outcome == "complete":
        return None
    if dispatched(last.blocks):
        return len(history), None
    return max(i for i, e in enumerate(history) if isinstance(e, Assistant)), last.turn


class TranscriptWriter:
    """A ChatSession listener that writes the conversation as it happens, and
    the session's link to the store across processes: it allocates turn
    numbers (``allocate_turn``) and notices turns others added (``resync``)."""

    def __init__(self, store: Store, session: ChatSession, provider: str,
                 stored: Conversation | None = None) -> None:
        self.store = store
        self.session = session
        self.conversation = session.conversation
        self._seq: dict[int, int] = {}
        self._last_flush = 0.0
        self._provider = provider
        #: The entries this session knows: loaded with it, or written by it.
        self._known: set[int] = {item.seq for item in stored.items} if stored else set()

    def allocate_turn(self) -> int:
        self._ensure_conversation()
        turn, seq = self.store.allocate_turn(self.conversation)
        self._seq[turn] = seq
        self._known.add(seq)
        return turn

    def resync(self) -> Resync | None:
        """The stored conversation as it is now, if another process added to it."""
        from ..chat.session import Resync

        if self.store.entry_count(self.conversation) <= len(self._known):
            return None
        stored = self.store.load(self.conversation)
        if stored is None or stored.id != self.conversation:
            return None
        added = [item for item in stored.items if item.seq not in self._known]
        self._known.update(item.seq for item in stored.items)
        history = history_of(stored)
        self.session.stored = stored
        return Resync(history, retry_point(stored, history), added)

    def _ensure_conversation(self) -> None:
        # created with its first message: an app opened and closed leaves nothing behind
        self.store.create(self.conversation, self._provider, self.session.endpoint.model,
                          self.session.endpoint.dialect)

    def __call__(self, event: ChatEvent) -> None:
        conv = self.conversation
        if isinstance(event, UserSent):
            self._ensure_conversation()
            self._known.add(self.store.add_user(conv, event.text))
        elif isinstance(event, AttemptStarted):
            self._seq[event.turn] = seq = self.store.start_turn(conv, event.turn, event.attempt)
            self._known.add(seq)
        elif isinstance(event, BlockOpened):
            if event.index > 0:  # the block before it is complete
                self._put(event.turn, event.index - 1)
        elif isinstance(event, BlockGrew):
            now = time.monotonic()
            if now - self._last_flush > 0.5 and self._is_prose(event.turn, event.index):
                # prose in progress, at most twice a second; a call's buffer waits for the call to end
                self._last_flush = now
                self._put(event.turn, event.index)
        elif isinstance(event, CallState):
            if event.state != "waiting":  # "waiting" reopens as "not run" either way: skip rewriting a big buffer
                self._put(event.turn, event.index)
        elif isinstance(event, AttemptFailed):
            seq = self._seq.get(event.turn)
            if seq is not None:
                self.store.add_failure(conv, seq, event.message)
        elif isinstance(event, TurnDone):
            seq = self._seq.get(event.turn)
            record = self._record(event.turn)
            if seq is not None and record is not None:
                self.store.finish_turn(conv, seq, event.result, event.attempts, event.note, record.blocks)
        elif isinstance(event, ExchangeDone):
            self.store.finish_exchange(conv, event.status, event.message)

    def _record(self, turn: int) -> Any:
        """The latest run of ``turn`` (a Ctrl+R retry re-runs an index: its
        record, not the failed one's, is what ran)."""
        turns = self.session.turns
        if turns and turns[-1].index == turn:
            return turns[-1]  # the turn in progress: the common case, no search
        return next((t for t in reversed(turns) if t.index == turn), None)

    def _is_prose(self, turn: int, index: int) -> bool:
        record = self._record(turn)
        return record is not None and index < len(record.blocks) and record.blocks[index].type != "tool_call"

    def _put(self, turn: int, index: int) -> None:
        seq = self._seq.get(turn)
        record = self._record(turn)
        if seq is None or record is None or index >= len(record.blocks):
            return
        self.store.put_block(self.conversation, seq, index, record.blocks[index])



# -- export and import ---------------------------------------------------------

FORMAT = "callstream-transcript"


def export_document(conversation: Conversation) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for item in conversation.items:
        if isinstance(item, StoredUser):
            items.append({"kind": "user", "text": item.text, "exchange": item.exchange,
                          "exchange_message": item.exchange_message})
        else:
            items.append({"kind": "turn", "turn": item.turn, "attempts": item.attempts, "outcome": item.outcome,
                          "stop_reason": item.stop_reason, "error": item.error, "cause": item.cause,
                          "note": item.note, "failures": item.failures, "killed": item.killed,
                          "blocks": [block_record(b) for b in item.blocks]})
    return {"format": FORMAT, "version": 1, "conversation": {
        "id": conversation.id, "title": conversation.title, "created": conversation.created,
        "updated": conversation.updated, "provider": conversation.provider, "model": conversation.model,
        "dialect": conversation.dialect}, "items": items}


class ImportError_(ValueError):
    """The file is not a callstream transcript export; the message says why."""


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


def import_document(store: Store, document: Any) -> str:
    """Store an exported transcript; returns its conversation id. Every field
    is checked before anything is written (a wrong one is an ``ImportError_``
    naming it), and the whole import is one transaction: nothing half-stored."""
    try:
        check_depth(document)
    except TooDeep as exc:
        raise ImportError_(f"the transcript is nested too deep ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ImportError_("not a callstream transcript export (no \"format\": \"callstream-transcript\")")
    if document.get("version") != 1:
        raise ImportError_(f"unsupported transcript version {str(document.get('version'))[:20]!r}")
    meta = document.get("conversation")
    items = document.get("items")
    if not isinstance(meta, dict) or not isinstance(items, list) or not isinstance(meta.get("id"), str):
        raise ImportError_("the transcript has no conversation id or no items")
    try:
        conversation = check_id(meta["id"])
    except InvalidId as exc:
        raise ImportError_(str(exc)) from None
    now = time.time()
    created = _number(meta.get("created"), "conversation.created", now)
    updated = _number(meta.get("updated"), "conversation.updated", now)
    rows: list[tuple[str, dict[str, Any], list[Block]]] = []
    for seq, item in enumerate(items):
        where = f"item {seq}"
        if not isinstance(item, dict) or item.get("kind") not in ("user", "turn"):
            raise ImportError_(f"the transcript is damaged: {where} is neither a user message nor a turn")
        for name in ("text", "exchange", "exchange_message", "outcome", "stop_reason", "error", "cause", "note"):
            _optional_text(item, name, where)
        if item["kind"] == "turn":
            _whole(item.get("turn"), f"{where}.turn", 0, _MAX_TURN)
            _whole(item.get("attempts", 1), f"{where}.attempts", 0, 1000)
            failures = item.get("failures", [])
            if not isinstance(failures, list) or not all(isinstance(f, str) for f in failures):
                raise ImportError_(f"the transcript is damaged: {where}.failures must be a list of lines")
            records = item.get("blocks", [])
            if not isinstance(records, list):
                raise ImportError_(f"the transcript is damaged: {where}.blocks must be a list")
            try:
                blocks = [block_from_record(b) for b in records]
            except (TypeError, ValueError) as exc:
                raise ImportError_(f"the transcript is damaged: {where} has a damaged block: {exc}") from None
            rows.append(("turn", item, blocks))
        else:
            rows.append(("user", item, []))
    existing = store.load(conversation)
    if existing is not None and existing.id == conversation:
        raise ImportError_(f"conversation {conversation} is already stored")
    with store.transaction():
        store._db.execute("INSERT INTO conversations (id, title, created, updated, provider, model, dialect) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?)",
                          (conversation, str(meta.get("title", "")), created, updated, str(meta.get("provider", "")),
                           str(meta.get("model", "")), str(meta.get("dialect", ""))))
        for seq, (kind, item, blocks) in enumerate(rows):
            if kind == "user":
                store._db.execute(
                    "INSERT INTO entries (conversation, seq, kind, text, state, exchange, exchange_message, "
                    "started) VALUES (?, ?, 'user', ?, 'done', ?, ?, ?)",
                    (conversation, seq, item.get("text") or "", item.get("exchange"), item.get("exchange_message"),
                     now))
                continue
            store._db.execute(
                "INSERT INTO entries (conversation, seq, kind, turn, state, attempts, outcome, stop_reason, "
                "error, cause, note, failures, started, finished) VALUES (?, ?, 'turn', ?, 'done', ?, ?, ?, ?, "
                "?, ?, ?, ?, ?)",
                (conversation, seq, item["turn"], item.get("attempts", 1), item.get("outcome"),
                 item.get("stop_reason"), item.get("error"), item.get("cause"), item.get("note"),
                 json.dumps(item.get("failures", [])), now, now))
            for index, block in enumerate(blocks):
                store.put_block(conversation, seq, index, block)
    return conversation


def markdown_of(conversation: Conversation, display: Any) -> str:
    """A readable export: prose as written, each call with its allow-listed
    fields and its state (``display(name)`` gives the allow-lists)."""
    from ..stream.preview import result_line, visible_fields

    lines = [f"# {conversation.title or 'Conversation'}", "",
             f"*{conversation.model} via {conversation.provider} · conversation {conversation.id}*", ""]
    for item in conversation.items:
        if isinstance(item, StoredUser):
            lines += ["## You", "", item.text, ""]
            continue
        lines += ["## Assistant", ""]
        for failure in item.failures:
            lines += [f"> {failure}", ""]
        for block in item.blocks:
            if block.type == "text":
                lines += [block.text, ""]
            elif block.type == "reasoning":
                lines += ["<details><summary>Reasoning</summary>", "", block.text, "", "</details>", ""]
            elif isinstance(block, ToolCallBlock):
                args_spec, result_spec = display(block.name)
                lines.append(f"- **{block.name}** — {block.state}")
                for label, value in visible_fields(block.arguments or {}, args_spec):
                    lines.append(f"  - {label}: {value}")
                if block.result:
                    spec = result_spec if block.state == "ran" else []
                    lines.append(f"  - → {result_line(block.summary or block.result, spec, 300)}")
                lines.append("")
        if item.note:
            lines += [f"> {item.note}", ""]
    return "\n".join(lines).rstrip() + "\n"
