"""Transcripts: every turn saved in the block shape it was shown in.

One sqlite file in the data dir (the ledger's), three tables: conversations;
entries (a user message, or an assistant turn with its attempts, outcome,
note and the notes of its failed attempts); blocks (each block's full record,
as ``block_record`` writes it, but for a call's buffer, kept in
``call_arguments``, and prose, kept in ``prose_parts`` and appended to as
it streams) — plus the search index (``search.py``), all
versioned by ``schema.py``. A conversation is a tree: each entry follows a
parent entry, on a branch; an edited message or a regenerated reply is a new
child of the entry before it, so nothing is ever overwritten, and ``load``
returns the path to one leaf (``items``) and the whole tree (``tree``).
``TranscriptWriter`` below writes them as the turn
progresses — a turn's row at every transition, a block when it completes,
the prose added since the last flush every half second — so a process killed mid-turn leaves
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
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files.dbfile import connect, put_text
from ..rules.ids import InvalidId, check_id
from ..rules.titles import clean_title
from ..rules.told import told, turn_note
from ..rules.words import UNKNOWN_OUTCOME, interrupted_note
from ..stream import (
    Block,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    Turn,
    block_from_record,
    block_record,
    dispatched,
)
from ..stream.history import Assistant, Entry, User
from ..stream.limits import TooDeep, check_depth, full_text, loads, one_line
from ..stream.redact import safe_cut
from ..stream.usage import Usage, total, usage_words
from . import search
from .schema import migrate
from .search import Display

__all__ = ["Store", "StoredTurn", "StoredUser", "StoredEntry", "Conversation", "history_of",
           "retry_point", "export_document", "import_document", "store_conversation", "markdown_of", "ImportError_",
           "VERSION", "resolve_among", "UnresolvedConversation", "ConversationNotFound", "AmbiguousConversation"]

#: The most one stored piece of prose holds.
_PROSE_PART = 1 << 20
#: Characters before the written end that are read back to choose the next cut (``safe_cut`` looks that far).
_PROSE_BACK = 1024

#: What a reopen says about a turn the process did not live to finish.
KILLED = "callstream stopped"
#: How many of the conversations an ambiguous prefix names are listed.
_LISTED = 10


class UnresolvedConversation(LookupError):
    """An id, or the start of one, that names no stored conversation or more
    than one; the message says which (several lines for an ambiguous one)."""


class ConversationNotFound(UnresolvedConversation):
    pass


class AmbiguousConversation(UnresolvedConversation):
    def __init__(self, message: str, matches: list[str]) -> None:
        super().__init__(message)
        self.matches = matches


@dataclass(slots=True)
class StoredUser:
    seq: int
    text: str
    exchange: str | None = None
    exchange_message: str | None = None
    #: The entry it follows in the conversation's tree (None: the first), its branch,
    #: and its place among the entries that follow the same one (1-based, of how many).
    parent: int | None = None
    branch: str = ""
    siblings: tuple[int, int] = (1, 1)


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
    #: A provider error's whole text (``limits.full_text``), beside its one line in ``error``.
    detail: str | None = None
    parent: int | None = None
    branch: str = ""
    siblings: tuple[int, int] = (1, 1)
    #: What the turn's requests cost, as the provider said (None: it said nothing), and who answered.
    usage: Usage | None = None
    model: str | None = None


StoredEntry = StoredUser | StoredTurn


@dataclass(slots=True)
class Conversation:
    """A stored conversation: ``items`` is the path shown (from the first
    entry to ``head``), ``tree`` every entry of every branch, in the order
    they were written."""

    id: str
    title: str
    created: float
    updated: float
    provider: str
    model: str
    dialect: str
    items: list[StoredEntry] = field(default_factory=list)
    tree: list[StoredEntry] = field(default_factory=list)
    head: int | None = None
    #: The highest turn index of the whole tree plus one: no branch reuses an index.
    next_turn: int = 0
    forked_from: str | None = None
    forked_at: int | None = None
    forked_len: int = 0

    @property
    def turn_count(self) -> int:
        return sum(1 for item in self.items if isinstance(item, StoredTurn))

    @property
    def path_turns(self) -> set[int]:
        return {item.turn for item in self.items if isinstance(item, StoredTurn)}

    def entry(self, seq: int) -> StoredEntry | None:
        return next((e for e in self.tree if e.seq == seq), None)

    def children(self, seq: int | None) -> list[StoredEntry]:
        return [e for e in self.tree if e.parent == seq]

    def leaf_under(self, seq: int) -> int:
        """The most recently written entry at or below ``seq`` (a child is
        always written after its parent, so that entry is a leaf)."""
        below = {seq}
        for entry in self.tree:  # seq order: a parent comes before its children
            if entry.parent in below:
                below.add(entry.seq)
        return max(below)

    def path_to(self, seq: int | None) -> list[StoredEntry]:
        by_seq = {e.seq: e for e in self.tree}
        path: list[StoredEntry] = []
        while seq is not None and seq in by_seq and len(path) <= len(by_seq):
            path.append(by_seq[seq])
            seq = by_seq[seq].parent
        return path[::-1]


class Store:
    def __init__(self, path: Path, display: Display | None = None) -> None:
        self.path = path
        #: The tools' allow-lists, for the search index (None: calls are found by name only).
        self.display = display
        self._db = connect(path)
        try:
            self._db.execute("PRAGMA foreign_keys=ON")
            migrate(self._db, str(path))
        except BaseException:
            self._db.close()
            raise
        #: (conversation, seq, index) → (length, hash) of the argument buffer last written there
        self._written: dict[tuple[str, int, int], tuple[int, int]] = {}
        #: (conversation, seq, index) → how much of that prose block is in ``prose_parts``
        #: (characters, parts) and whether it was written complete (and indexed)
        self._prose: dict[tuple[str, int, int], tuple[int, int, bool]] = {}

    def close(self) -> None:
        self._db.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing (the connection autocommits otherwise)."""
        if self._db.in_transaction:
            yield  # already inside one: it decides
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- writing -------------------------------------------------------------

    def create(self, conversation: str, provider: str, model: str, dialect: str, title: str = "",
               forked_from: str | None = None, forked_at: int | None = None) -> None:
        now = time.time()
        self._db.execute("INSERT OR IGNORE INTO conversations (id, title, created, updated, provider, model, dialect, "
                         "forked_from, forked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (conversation, title, now, now, provider, model, dialect, forked_from, forked_at))

    def _touch(self, conversation: str, head: int | None = None) -> None:
        if head is None:
            self._db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (time.time(), conversation))
        else:
            self._db.execute("UPDATE conversations SET updated = ?, head = ? WHERE id = ?",
                             (time.time(), head, conversation))

    def set_head(self, conversation: str, seq: int) -> None:
        """The entry a reopen shows the conversation at (the branch last looked at)."""
        self._db.execute("UPDATE conversations SET head = ? WHERE id = ?", (seq, conversation))

    def add_user(self, conversation: str, text: str, parent: int | None = None, branch: str = "") -> int:
        with self.transaction():  # the seq is chosen under the write lock: two processes never share one
            seq = self._next_seq(conversation)
            parent = self._attach(conversation, parent, branch)
            self._db.execute("INSERT INTO entries (conversation, seq, kind, text, state, started, parent, branch) "
                             "VALUES (?, ?, 'user', ?, 'done', ?, ?, ?)",
                             (conversation, seq, text, time.time(), parent, branch))
            self._db.execute("UPDATE conversations SET title = ? WHERE id = ? AND title = ''",
                             (" ".join(text.split())[:80], conversation))
            search.put(self._db, conversation, seq, search.USER, text)
            self._touch(conversation, seq)
        return seq

    def _attach(self, conversation: str, parent: int | None, branch: str) -> int | None:
        """Where a new entry goes (inside the write transaction): after
        ``parent``, unless another process on the same branch has already
        written after it — then after the latest entry it wrote there, so two
        writers on one line of conversation interleave along it instead of
        forking it. A new branch is one session's alone, so an edit or a
        regeneration stays beside the entry it replaces."""
        if parent is None:
            row = self._db.execute("SELECT MIN(seq) FROM entries WHERE conversation = ? AND parent IS NULL AND "
                                   "branch = ?", (conversation, branch)).fetchone()
            if row[0] is None:
                return None
            parent = row[0]
        row = self._db.execute(
            "WITH RECURSIVE below(seq) AS (SELECT ? UNION ALL SELECT e.seq FROM entries e JOIN below b "
            "ON e.parent = b.seq WHERE e.conversation = ? AND e.branch = ?) SELECT MAX(seq) FROM below",
            (parent, conversation, branch)).fetchone()
        return int(row[0])

    def _next_seq(self, conversation: str) -> int:
        row = self._db.execute("SELECT MAX(seq) FROM entries WHERE conversation = ?", (conversation,)).fetchone()
        return (row[0] if row[0] is not None else -1) + 1

    def allocate_turn(self, conversation: str, parent: int | None = None, branch: str = "") -> tuple[int, int]:
        """The next turn number of ``conversation``, chosen and reserved (its
        row inserted, after ``parent`` on ``branch``) in one write
        transaction, so two processes on one conversation never get the same
        number — and so never the same ledger keys, nor each other's rows.
        The number is the whole tree's next: no branch reuses one."""
        with self.transaction():
            row = self._db.execute("SELECT MAX(turn) FROM entries WHERE conversation = ? AND kind = 'turn'",
                                   (conversation,)).fetchone()
            turn = (row[0] if row[0] is not None else -1) + 1
            seq = self._next_seq(conversation)
            parent = self._attach(conversation, parent, branch)
            self._db.execute("INSERT INTO entries (conversation, seq, kind, turn, state, attempts, started, parent, "
                             "branch) VALUES (?, ?, 'turn', ?, 'streaming', 0, ?, ?, ?)",
                             (conversation, seq, turn, time.time(), parent, branch))
            self._touch(conversation, seq)
        return turn, seq

    def entry_count(self, conversation: str) -> int:
        row = self._db.execute("SELECT COUNT(*) FROM entries WHERE conversation = ?", (conversation,)).fetchone()
        return int(row[0])

    def start_turn(self, conversation: str, turn: int, attempt: int, parent: int | None = None,
                   branch: str = "") -> int:
        """A turn's (new) attempt: the row exists once per turn index; blocks
        of an earlier attempt are dropped, as they are on screen. The note an
        earlier run of the turn ended with (a Ctrl+R retry) stays on screen,
        so it joins the turn's failure notes here."""
        with self.transaction():
            row = self._db.execute("SELECT seq, note, failures FROM entries WHERE conversation = ? AND kind = 'turn' "
                                   "AND turn = ?", (conversation, turn)).fetchone()
            if row is None:
                seq = self._next_seq(conversation)
                parent = self._attach(conversation, parent, branch)
                self._db.execute("INSERT INTO entries (conversation, seq, kind, turn, state, attempts, started, "
                                 "parent, branch) VALUES (?, ?, 'turn', ?, 'streaming', ?, ?, ?, ?)",
                                 (conversation, seq, turn, attempt, time.time(), parent, branch))
            else:
                seq = row["seq"]
                failures = json.loads(row["failures"] or "[]") + ([row["note"]] if row["note"] else [])
                self._db.execute("UPDATE entries SET state = 'streaming', attempts = ?, outcome = NULL, note = NULL, "
                                 "failures = ? WHERE conversation = ? AND seq = ?",
                                 (attempt, json.dumps(failures), conversation, seq))
                self._db.execute("DELETE FROM blocks WHERE conversation = ? AND seq = ?", (conversation, seq))
                self._db.execute("DELETE FROM call_arguments WHERE conversation = ? AND seq = ?", (conversation, seq))
                self._db.execute("DELETE FROM prose_parts WHERE conversation = ? AND seq = ?", (conversation, seq))
                self._written = {k: v for k, v in self._written.items() if k[:2] != (conversation, seq)}
                self._prose = {k: v for k, v in self._prose.items() if k[:2] != (conversation, seq)}
                search.drop(self._db, conversation, seq, blocks_only=True)
            self._touch(conversation, seq)
        return seq

    def add_failure(self, conversation: str, seq: int, message: str) -> None:
        row = self._db.execute("SELECT failures FROM entries WHERE conversation = ? AND seq = ?",
                               (conversation, seq)).fetchone()
        failures = loads(row[0]) if row else []
        failures.append(message)
        self._db.execute("UPDATE entries SET failures = ? WHERE conversation = ? AND seq = ?",
                         (json.dumps(failures), conversation, seq))

    def put_block(self, conversation: str, seq: int, index: int, block: Block, growing: bool = False) -> None:
        """A block's record, and its searchable text; for a call, the record
        without its arguments (its buffer goes to ``call_arguments``, only when
        it changed; the parsed arguments are not stored at all: they are the
        buffer, parsed); for prose, the record without its text (``_put_prose``).
        ``growing``: prose still streaming (written as far as it is settled,
        not indexed yet)."""
        if isinstance(block, TextBlock | ReasoningBlock):
            self._put_prose(conversation, seq, index, block, growing)
            return
        record = block_record(block)
        with self.transaction():
            if isinstance(block, ToolCallBlock):
                raw = record.pop("arguments_raw")
                record.pop("arguments", None)
                key = (conversation, seq, index)
                # what was written is remembered by its length and hash, not kept: a forming call's
                # earlier buffer would otherwise stay in memory beside the grown one
                mark = (len(raw), hash(raw))
                last = self._written.get(key)
                if last != mark and (raw or last is not None):  # no row for a buffer not begun
                    put_text(self._db, "call_arguments", {"conversation": conversation, "seq": seq, "idx": index},
                             "raw", raw)
                    self._written[key] = mark
            self._db.execute("INSERT OR REPLACE INTO blocks (conversation, seq, idx, record) VALUES (?, ?, ?, ?)",
                             (conversation, seq, index, json.dumps(record, ensure_ascii=False)))
            search.put(self._db, conversation, seq, index, search.block_text(block, self.display))

    def _put_prose(self, conversation: str, seq: int, index: int, block: TextBlock | ReasoningBlock,
                   growing: bool) -> None:
        """Prose as pieces appended to ``prose_parts``: each write costs what
        the text grew by since the last one, never the whole text again. A
        piece ends where ``safe_cut`` says a secret cannot straddle it (each
        piece is redacted alone, as every parameter is); while the block still
        grows, its last characters wait for the next write."""
        key = (conversation, seq, index)
        written, parts, complete = self._prose.get(key, (0, 0, False))
        total = sum(map(len, block.parts))
        if complete and written == total:
            return  # already whole (a turn's end writes every block again)
        back = min(written, _PROSE_BACK)
        window = _tail(block.parts, total - written + back)
        pieces: list[str] = []
        start = back
        while start < len(window):
            end = safe_cut(window, start, start + _PROSE_PART)
            if end == start:
                if growing:
                    break
                end = len(window) if len(window) - start <= _PROSE_PART + _PROSE_BACK else start + _PROSE_PART
            pieces.append(window[start:end])
            start = end
        with self.transaction():
            if key not in self._prose:
                self._db.execute("DELETE FROM prose_parts WHERE conversation = ? AND seq = ? AND idx = ?", key)
                self._db.execute("INSERT OR REPLACE INTO blocks (conversation, seq, idx, record) VALUES (?, ?, ?, ?)",
                                 (*key, json.dumps({"type": block.kind, "text": ""})))
            self._db.executemany("INSERT INTO prose_parts (conversation, seq, idx, part, text) VALUES (?, ?, ?, ?, ?)",
                                 [(*key, parts + n, piece) for n, piece in enumerate(pieces)])
            if not growing:
                search.put(self._db, conversation, seq, index, search.block_text(block, self.display))
        self._prose[key] = (written + sum(map(len, pieces)), parts + len(pieces), not growing)

    def finish_turn(self, conversation: str, seq: int, turn: Turn, attempts: int, note: str | None,
                    blocks: list[Block], usage: Usage | None = None, model: str | None = None) -> None:
        with self.transaction():
            for index, block in enumerate(blocks):
                self.put_block(conversation, seq, index, block)
            # a turn re-issued under its own index (Ctrl+R) keeps what its earlier runs cost: those tokens were spent
            row = self._db.execute("SELECT usage FROM entries WHERE conversation = ? AND seq = ?",
                                   (conversation, seq)).fetchone()
            usage = total([_stored_usage(row[0]) if row else None, usage])
            self._db.execute(
                "UPDATE entries SET state = 'done', attempts = ?, outcome = ?, stop_reason = ?, error = ?, cause = ?, "
                "note = ?, finished = ?, usage = ?, model = ?, detail = ? WHERE conversation = ? AND seq = ?",
                (attempts, turn.outcome, turn.stop_reason, turn.error, turn.cause, note, time.time(),
                 _usage_column(usage), model, turn.detail, conversation, seq))
            self._touch(conversation)

    def finish_exchange(self, conversation: str, status: str, message: str | None, user: int | None = None) -> None:
        """How the exchange that ``user`` (the last user message, if not given) began ended."""
        if user is None:
            row = self._db.execute("SELECT MAX(seq) FROM entries WHERE conversation = ? AND kind = 'user'",
                                   (conversation,)).fetchone()
            user = row[0]
        if user is not None:
            self._db.execute("UPDATE entries SET exchange = ?, exchange_message = ? WHERE conversation = ? AND seq = ?",
                             (status, message, conversation, user))

    def delete(self, conversation: str) -> None:
        with self.transaction():
            search.drop(self._db, conversation)
            self._db.execute("DELETE FROM blocks WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM call_arguments WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM prose_parts WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM entries WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation,))

    def rename(self, conversation: str, title: str) -> str:
        """Give ``conversation`` (a whole id) a title (``clean_title``: one
        line, 1 to 200 characters; a ``ValueError`` saying so otherwise).
        Its first message no longer names it. Returns the title as stored."""
        line = clean_title(title)
        self._db.execute("UPDATE conversations SET title = ? WHERE id = ?", (line, conversation))
        return line

    def fork(self, source: Conversation, at: int, new_id: str) -> str:
        """A new conversation holding the path of ``source`` up to entry
        ``at`` (copies; the source is untouched), remembered as forked from it."""
        path = source.path_to(at)
        if not path:
            raise ValueError(f"conversation {source.id} has no entry {at}")
        with self.transaction():
            self.create(new_id, source.provider, source.model, source.dialect, source.title,
                        forked_from=source.id, forked_at=at)
            parent: int | None = None
            for seq, item in enumerate(path):
                self._insert_entry(new_id, seq, item, parent, "")
                parent = seq
            self._db.execute("UPDATE conversations SET head = ?, forked_len = ? WHERE id = ?",
                             (len(path) - 1, len(path), new_id))
        return new_id

    def fork_at(self, conversation: str, at: int | None = None) -> tuple[Conversation, int, str]:
        """Fork ``conversation`` (an id or a unique prefix) at entry ``at``
        (default: where it was last shown): (the source, the entry, the new
        id). Raises LookupError with a sentence when either is not there."""
        source = self.load(self.resolve(conversation))  # an unknown or ambiguous id: an UnresolvedConversation
        if source is None:
            raise ConversationNotFound(f"no stored conversation {conversation!r} (callstream transcripts lists them)")
        at = source.head if at is None else at
        if at is None or source.entry(at) is None:
            last = max((e.seq for e in source.tree), default=None)
            raise LookupError(f"conversation {source.id} has no entry {at}"
                              + (f" (its entries are 0 to {last})" if last is not None else " (it is empty)"))
        return source, at, self.fork(source, at, uuid.uuid4().hex)

    def _insert_entry(self, conversation: str, seq: int, item: StoredEntry, parent: int | None, branch: str) -> None:
        """Write a whole stored entry (a fork's copy, an import)."""
        now = time.time()
        if isinstance(item, StoredUser):
            self._db.execute(
                "INSERT INTO entries (conversation, seq, kind, text, state, exchange, exchange_message, started, "
                "parent, branch) VALUES (?, ?, 'user', ?, 'done', ?, ?, ?, ?, ?)",
                (conversation, seq, item.text, item.exchange, item.exchange_message, now, parent, branch))
            search.put(self._db, conversation, seq, search.USER, item.text)
            return
        self._db.execute(
            "INSERT INTO entries (conversation, seq, kind, turn, state, attempts, outcome, stop_reason, error, cause, "
            "note, failures, started, finished, parent, branch, usage, model, detail) "
            "VALUES (?, ?, 'turn', ?, 'done', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (conversation, seq, item.turn, item.attempts, item.outcome, item.stop_reason, item.error, item.cause,
             item.note, json.dumps(list(item.failures)), now, now, parent, branch, _usage_column(item.usage),
             item.model, item.detail))
        for index, block in enumerate(item.blocks):
            self.put_block(conversation, seq, index, block)

    # -- reading -------------------------------------------------------------

    def list(self, text: str | None = None) -> list[dict[str, Any]]:
        """Conversations, newest first: id, title, created, updated, model,
        turns; with ``text``, those whose title or searchable text has it."""
        sql = ("SELECT c.id, c.title, c.created, c.updated, c.provider, c.model, c.dialect, c.forked_from, "
               "(SELECT COUNT(*) FROM entries e WHERE e.conversation = c.id AND e.kind = 'turn') AS turns "
               "FROM conversations c")
        params: list[Any] = []
        if text:
            like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            sql += " WHERE c.title LIKE ? ESCAPE '\\'"
            params = [like]
            match = search.fts_query(text)
            if match:
                sql += (" OR c.id IN (SELECT t.conversation FROM search_fts JOIN search_text t "
                        "ON t.id = search_fts.rowid WHERE search_fts MATCH ?)")
                params.append(match)
        sql += " ORDER BY c.updated DESC"
        return [dict(row) for row in self._db.execute(sql, params)]

    def turn_branches(self) -> dict[tuple[str, int], str]:
        """(conversation, turn index) → the branch the turn is on."""
        rows = self._db.execute("SELECT conversation, turn, branch FROM entries WHERE kind = 'turn'").fetchall()
        return {(r[0], r[1]): r[2] for r in rows}

    def search(self, text: str, limit: int = 50, conversation: str | None = None) -> list[search.Hit]:
        """The best matches of ``text`` (in ``conversation`` only, a whole id, when given)."""
        return search.query(self._db, text, limit, conversation)

    def resolve(self, text: str, also: Iterable[str] = ()) -> str:
        """The whole id of the conversation ``text`` names: its id, or the
        start of exactly one stored id (or of one of ``also``: ids known
        elsewhere, such as the ledger's). The one rule every command that
        takes a conversation follows (``resolve_among`` without a store).
        ``InvalidId`` for text outside the id alphabet (checked first),
        ``ConversationNotFound`` when nothing starts so,
        ``AmbiguousConversation`` (listing them) when several do."""
        check_id(text)
        if self._db.execute("SELECT 1 FROM conversations WHERE id = ?", (text,)).fetchone():
            return text
        rows = self._db.execute("SELECT id, title, updated FROM conversations WHERE substr(id, 1, ?) = ? "
                                "ORDER BY updated DESC", (len(text), text)).fetchall()
        return _pick(text, [(row["id"], row["title"], row["updated"]) for row in rows], also)

    def load(self, conversation: str, head: int | None = None) -> Conversation | None:
        """A stored conversation (its id, or a unique prefix of it: ``resolve``),
        shown at ``head`` (default: where it was last shown); None when it does
        not name exactly one; ``InvalidId`` for an id outside the alphabet."""
        try:
            conversation = self.resolve(conversation)
        except UnresolvedConversation:
            return None
        row = self._db.execute("SELECT * FROM conversations WHERE id = ?", (conversation,)).fetchone()
        if row is None:
            return None
        result = Conversation(row["id"], row["title"], row["created"], row["updated"], row["provider"],
                              row["model"], row["dialect"], forked_from=row["forked_from"],
                              forked_at=row["forked_at"], forked_len=row["forked_len"] or 0)
        blocks: dict[int, list[tuple[int, str]]] = {}
        for b in self._db.execute("SELECT seq, idx, record FROM blocks WHERE conversation = ?", (result.id,)):
            blocks.setdefault(b["seq"], []).append((b["idx"], b["record"]))
        raws = {(a["seq"], a["idx"]): a["raw"] for a in
                self._db.execute("SELECT seq, idx, CAST(raw AS TEXT) AS raw FROM call_arguments "
                                 "WHERE conversation = ?", (result.id,))}
        prose: dict[tuple[int, int], list[str]] = {}
        for p in self._db.execute("SELECT seq, idx, text FROM prose_parts WHERE conversation = ? ORDER BY seq, idx, "
                                  "part", (result.id,)):
            prose.setdefault((p["seq"], p["idx"]), []).append(p["text"])
        for entry in self._db.execute("SELECT * FROM entries WHERE conversation = ? ORDER BY seq", (result.id,)):
            item: StoredEntry
            if entry["kind"] == "user":
                item = StoredUser(entry["seq"], entry["text"] or "", entry["exchange"], entry["exchange_message"],
                                  entry["parent"], entry["branch"])
            else:
                records = [_stored_block(rec, raws.get((entry["seq"], idx)), prose.get((entry["seq"], idx)))
                           for idx, rec in sorted(blocks.get(entry["seq"], []))]
                item = StoredTurn(entry["seq"], entry["turn"], records, entry["attempts"], entry["outcome"],
                                  entry["stop_reason"], entry["error"], entry["cause"], entry["note"],
                                  loads(entry["failures"] or "[]"), parent=entry["parent"],
                                  branch=entry["branch"], usage=_stored_usage(entry["usage"]),
                                  model=entry["model"], detail=entry["detail"])
                if entry["state"] == "streaming":
                    _mark_killed(item)
                result.next_turn = max(result.next_turn, item.turn + 1)
            result.tree.append(item)
        family: dict[int | None, list[StoredEntry]] = {}
        for item in result.tree:
            family.setdefault(item.parent, []).append(item)
        for members in family.values():
            for position, item in enumerate(members, 1):
                item.siblings = (position, len(members))
        seqs = {item.seq for item in result.tree}
        wanted = head if head is not None else row["head"]
        if wanted not in seqs:
            wanted = max(seqs) if seqs else None
        result.head = wanted
        result.items = result.path_to(wanted)
        return result


def _usage_column(usage: Usage | None) -> str | None:
    return json.dumps(usage.to_dict()) if usage is not None and usage.known else None


def _stored_usage(column: str | None) -> Usage | None:
    """A turn's stored usage; one that cannot be read is no usage (the turn still opens)."""
    if not column:
        return None
    try:
        return Usage.from_dict(loads(column))
    except ValueError:
        return None


def resolve_among(text: str, known: Iterable[str]) -> str:
    """``Store.resolve`` over ids known without a store (a ledger's)."""
    check_id(text)
    return _pick(text, [], known)


def _pick(text: str, stored: list[tuple[str, str, float | None]], also: Iterable[str]) -> str:
    """The one conversation ``text`` is the id or the start of, among
    ``stored`` (id, title, updated; newest first) and ``also``."""
    others = [known for known in dict.fromkeys(also) if known.startswith(text)]
    if text in others:
        return text
    seen = {found for found, _, _ in stored}
    matches = stored + [(known, "", None) for known in others if known not in seen]
    if len(matches) == 1:
        return matches[0][0]
    if not matches:
        raise ConversationNotFound(f"no stored conversation {text!r} (callstream transcripts lists them)")
    lines = [f"{text!r} is the start of {len(matches)} conversations' ids; give more of the one you mean:"]
    for found, title, updated in matches[:_LISTED]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(updated)) if updated is not None else "(in the ledger)"
        lines.append(f"  {found}  {when}  {one_line(title or '(untitled)', 60)}")
    if len(matches) > _LISTED:
        lines.append(f"  … and {len(matches) - _LISTED} more")
    raise AmbiguousConversation("\n".join(lines), [found for found, _, _ in matches])


def _stored_block(record: str, raw: str | None = None, prose: list[str] | None = None) -> Block:
    """A stored block, its call buffer put back from ``call_arguments`` and
    its prose from ``prose_parts`` (older records hold them inline); one that
    cannot be read shows as a line saying so (the rest of the turn still opens)."""
    try:
        data = loads(record)
        if raw is not None and isinstance(data, dict) and data.get("type") == "tool_call":
            data["arguments_raw"] = raw
        block = block_from_record(data)
        if prose and isinstance(block, TextBlock | ReasoningBlock):
            block.parts[:] = [block.text + "".join(prose)]
        return block
    except ValueError as exc:
        return TextBlock(f"[this block could not be read back: {exc}]")


def _mark_killed(turn: StoredTurn) -> None:
    """A turn the process did not live to finish: what ran stays, what was
    running has an unknown outcome, the rest did not run."""
    turn.killed = True
    unfinished = []
    for block in turn.blocks:
        if isinstance(block, ToolCallBlock) and not block.provider_executed:
            if block.state == "running":
                block.state, block.result = "unknown", UNKNOWN_OUTCOME
            elif block.state in ("preparing", "waiting"):
                block.stop(f"{KILLED} while it was being prepared")
                unfinished.append(block.name or "a call")
    turn.outcome, turn.cause, turn.error = "cut_off", "killed", f"{KILLED} during this turn"
    if not turn.note:
        turn.note = interrupted_note(KILLED, unfinished) if unfinished else f"Interrupted: {KILLED} during this turn."


def _tail(parts: list[str], count: int) -> str:
    """The last ``count`` characters of the text ``parts`` make, without joining the rest."""
    out: list[str] = []
    for part in reversed(parts):
        if count <= 0:
            break
        out.append(part[-count:] if len(part) > count else part)
        count -= len(part)
    return "".join(reversed(out))


def history_of(conversation: Conversation | list[StoredEntry]) -> list[Entry]:
    """The provider-neutral history a stored conversation (the path shown,
    or any path of its tree) continues from: each turn tells the model what
    ``rules.told`` says a finished turn tells it."""
    history: list[Entry] = []
    for item in conversation.items if isinstance(conversation, Conversation) else conversation:
        if isinstance(item, StoredUser):
            history.append(User(item.text))
            continue
        ended = Turn("", item.outcome or "complete", item.stop_reason, item.error, item.blocks,  # type: ignore[arg-type]
                     item.cause)
        history += told(item.turn, item.blocks, turn_note(ended, item.note))
    return history


def retry_point(conversation: Conversation | list[StoredEntry],
                history: list[Entry]) -> tuple[int, int | None] | None:
    """Where Ctrl+R starts in a reopened conversation (the path shown, or any
    path of its tree) whose last turn failed (``ChatSession._failed``):
    re-issue that turn under its own index when none of its calls was
    dispatched, else continue after it as a new turn."""
    items = conversation.items if isinstance(conversation, Conversation) else conversation
    if not items or not isinstance(items[-1], StoredTurn):
        return None
    last = items[-1]
    if last.outcome == "complete":
        return None
    if dispatched(last.blocks):
        return len(history), None
    return max(i for i, e in enumerate(history) if isinstance(e, Assistant)), last.turn



# -- export and import ---------------------------------------------------------

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


def export_document(conversation: Conversation) -> dict[str, Any]:
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
    return StoredTurn(seq, turn, blocks, attempts, item.get("outcome"), item.get("stop_reason"), item.get("error"),
                      item.get("cause"), item.get("note"), list(failures), parent=parent, branch=branch,
                      usage=Usage.from_dict(usage), model=one_line(model, 120) if model else None,
                      detail=full_text(item.get("detail")))


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
        if store._db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation,)).fetchone():
            raise ImportError_(f"conversation {conversation} is already stored (import --as-new imports it "
                               "under a new id beside it)")
    now = time.time()
    created = _number(meta.get("created"), "conversation.created", now)
    updated = _number(meta.get("updated"), "conversation.updated", now)
    with store.transaction():
        store.create(conversation, str(meta.get("provider", "")), str(meta.get("model", "")),
                     str(meta.get("dialect", "")), str(meta.get("title", "")))
        store._db.execute("UPDATE conversations SET created = ?, updated = ? WHERE id = ?",
                          (created, updated, conversation))
        for entry in entries:
            store._insert_entry(conversation, entry.seq, entry, entry.parent, entry.branch)
        if entries:
            store.set_head(conversation, head if head is not None else entries[-1].seq)
    return conversation


def markdown_of(conversation: Conversation, display: Any) -> str:
    """A readable export: prose as written, each call with its allow-listed
    fields and its state (``display(name)`` gives the allow-lists)."""
    from ..stream.preview import result_line, shown_result, visible_fields

    lines = [f"# {conversation.title or 'Conversation'}", "",
             f"*{conversation.model} via {conversation.provider} · conversation {conversation.id}*", ""]
    spent = usage_words(total(i.usage for i in conversation.tree or conversation.items if isinstance(i, StoredTurn)))
    if spent:
        lines[-2:-1] = [lines[-2], "", f"*{spent} in all (every turn, every branch)*"]
    for item in conversation.items:
        if isinstance(item, StoredUser):
            lines += ["## You", "", item.text, ""]
            continue
        heading = "## Assistant"
        cost = " · ".join(part for part in (item.model, usage_words(item.usage)) if part)
        lines += [heading, "", f"*{cost}*", ""] if cost else [heading, ""]
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
                    lines.append(f"  - → {result_line(shown_result(block), spec, 300)}")
                if block.other_branch is not None:
                    lines.append("  - ↺ reused from another branch" if block.reused else
                                 f"  - ⚠ ran on another branch: {result_line(block.other_branch, result_spec, 200)}")
                lines.append("")
        if item.note:
            lines += [f"> {item.note}", ""]
        if item.detail:  # the provider's whole error text, folded
            fence = "~~~~" if "```" in item.detail else "```"
            lines += ["<details><summary>Details</summary>", "", fence, item.detail, fence, "", "</details>", ""]
    return "\n".join(lines).rstrip() + "\n"
