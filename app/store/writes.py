"""The store's writes: a conversation's entries as they happen (a user
message, a turn's row reserved under the write lock, each attempt, each
block, the prose as it grows, the turn's end), and whole entries copied in
(a fork, an import). ``Store`` (``transcripts.py``) is these writes and the
paged reads (``reads.py``) over one sqlite connection.

A block is stored as ``block_record`` writes it, but for a call's buffer,
kept in ``call_arguments`` (rewritten only when it changed), and prose, kept
in ``prose_parts`` and appended to as it streams, a piece at a time.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator, Sequence

from ..files.dbfile import hand_back, put_text
from ..rules.titles import clean_title
from ..stream.attachments import Attachment
from ..stream.blocks import Block, ReasoningBlock, TextBlock, ToolCallBlock, Turn, block_record
from ..stream.limits import loads
from ..stream.redact import safe_cut
from ..stream.usage import Usage, total
from . import holds, search
from .attachfiles import AttachmentFiles
from .holds import ConversationBusy, Holder, check_there
from .reads import stored_usage
from .search import Display
from .tree import StoredEntry, StoredUser

__all__ = ["Writes"]

#: The most one stored piece of prose holds.
_PROSE_PART = 1 << 20
#: Characters before the written end that are read back to choose the next cut (``safe_cut`` looks that far).
_PROSE_BACK = 1024


class Writes:
    """The write half of ``Store``."""

    _db: sqlite3.Connection
    attachments: AttachmentFiles
    #: The tools' allow-lists, for the search index (None: calls are found by name only).
    display: Display | None
    #: (conversation, seq, index) → (length, hash) of the argument buffer last written there
    _written: dict[tuple[str, int, int], tuple[int, int]]
    #: (conversation, seq, index) → how much of that prose block is in ``prose_parts``
    #: (characters, parts) and whether it was written complete (and indexed)
    _prose: dict[tuple[str, int, int], tuple[int, int, bool]]

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

    def set_dates(self, conversation: str, created: float, updated: float) -> None:
        """When a conversation read from a file says it was created and last updated."""
        self._db.execute("UPDATE conversations SET created = ?, updated = ? WHERE id = ?",
                         (created, updated, conversation))

    def set_head(self, conversation: str, seq: int) -> None:
        """The entry a reopen shows the conversation at (the branch last looked at)."""
        self._db.execute("UPDATE conversations SET head = ? WHERE id = ?", (seq, conversation))

    def add_user(self, conversation: str, text: str, parent: int | None = None, branch: str = "",
                 attachments: Sequence[Attachment] = ()) -> int:
        refs = self._keep(attachments)
        with self.transaction():  # the seq is chosen under the write lock: two processes never share one
            check_there(self._db, conversation)  # deleted meanwhile: said, never re-created (holds.py)
            seq = self._next_seq(conversation)
            parent = self._attach(conversation, parent, branch)
            self._db.execute("INSERT INTO entries (conversation, seq, kind, text, state, started, parent, branch, "
                             "attachments) VALUES (?, ?, 'user', ?, 'done', ?, ?, ?, ?)",
                             (conversation, seq, text, time.time(), parent, branch, refs))
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
        # UNION, not UNION ALL: each entry is visited once, so a loop a damaged file holds (an entry
        # below itself) ends the walk instead of spinning forever; the depth bound stops it regardless
        # (the highest seq plus one: at least the count of entries, read from the key, not by counting)
        row = self._db.execute(
            "WITH RECURSIVE below(seq, depth) AS (SELECT ?, 0 UNION SELECT e.seq, b.depth + 1 FROM entries e "
            "JOIN below b ON e.parent = b.seq WHERE e.conversation = ? AND e.branch = ? AND b.depth < "
            "(SELECT MAX(seq) + 1 FROM entries WHERE conversation = ?)) SELECT MAX(seq) FROM below",
            (parent, conversation, branch, conversation)).fetchone()
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
            check_there(self._db, conversation)
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
            check_there(self._db, conversation)
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
                # the head stays at the end of the line: another process may have written after this turn
                # since it was reserved, and a head moved back onto it would load that line cut short
                # (its later turns "on another branch", the path missing them)
                last = self._attach(conversation, seq, branch)
                self._touch(conversation, seq if last is None else last)
                return int(seq)
            self._touch(conversation, seq)
        return int(seq)

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
        written = 0
        with self.transaction():
            check_there(self._db, conversation)
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
                    written = len(raw)
            self._db.execute("INSERT OR REPLACE INTO blocks (conversation, seq, idx, record) VALUES (?, ?, ?, ?)",
                             (conversation, seq, index, json.dumps(record, ensure_ascii=False)))
            search.put(self._db, conversation, seq, index, search.block_text(block, self.display))
        hand_back(self._db, written)

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
            check_there(self._db, conversation)
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
            usage = total([stored_usage(row[0]) if row else None, usage])
            self._db.execute(
                "UPDATE entries SET state = 'done', attempts = ?, outcome = ?, stop_reason = ?, error = ?, cause = ?, "
                "note = ?, finished = ?, usage = ?, model = ?, detail = ? WHERE conversation = ? AND seq = ?",
                (attempts, turn.outcome, turn.stop_reason, turn.error, turn.cause, note, time.time(),
                 _usage_column(usage), model, turn.detail, conversation, seq))
            self._touch(conversation)
        self._written_whole(conversation, seq, len(blocks))

    def _written_whole(self, conversation: str, seq: int, blocks: int) -> None:
        """A finished turn's blocks are whole in the store: what was remembered of their writes goes
        (``_written``, ``_prose``: only a block still being written needs it). Kept, a live sitting's
        dicts grew by every block it wrote (issue 31: a sitting's memory stays flat). A later write of
        one of them (none is made in a sitting) writes it whole again."""
        for index in range(blocks):
            self._written.pop((conversation, seq, index), None)
            self._prose.pop((conversation, seq, index), None)

    def set_note(self, conversation: str, seq: int, note: str | None) -> None:
        """A settled turn's ending note, changed after the fact (its approvals answered after a reopen)."""
        self._db.execute("UPDATE entries SET note = ? WHERE conversation = ? AND seq = ? AND kind = 'turn'",
                         (note, conversation, seq))

    def finish_exchange(self, conversation: str, status: str, message: str | None, user: int | None = None) -> None:
        """How the exchange that ``user`` (the last user message, if not given) began ended."""
        check_there(self._db, conversation)
        if user is None:
            row = self._db.execute("SELECT MAX(seq) FROM entries WHERE conversation = ? AND kind = 'user'",
                                   (conversation,)).fetchone()
            user = row[0]
        if user is not None:
            self._db.execute("UPDATE entries SET exchange = ?, exchange_message = ? WHERE conversation = ? AND seq = ?",
                             (status, message, conversation, user))

    def _keep(self, attachments: Sequence[Attachment]) -> str | None:
        """Write the attachments' bytes (once each, by hash) before the entry
        that names them: a reference never points at a file not yet there."""
        if not attachments:
            return None
        for item in attachments:
            if item.data:
                self.attachments.put(item)
        return json.dumps([item.ref() for item in attachments])

    def delete(self, conversation: str) -> None:
        """Every row of ``conversation``, in one transaction; ``ConversationBusy``
        (naming each holder, nothing deleted) while another live process is in
        the middle of an exchange on it (``holds.py``: why refuse)."""
        with self.transaction():
            found = holds.holders(self._db, conversation)
            if found:
                raise ConversationBusy(conversation, found)
            self._db.execute("DELETE FROM holds WHERE conversation = ?", (conversation,))  # dead processes' holds
            search.drop(self._db, conversation)
            self._db.execute("DELETE FROM blocks WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM call_arguments WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM prose_parts WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM entries WHERE conversation = ?", (conversation,))
            self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation,))

    def hold(self, conversation: str, doing: str) -> None:
        """This process is in the middle of an exchange on ``conversation``,
        doing ``doing`` (``ConversationDeleted`` if it is no longer stored)."""
        with self.transaction():
            check_there(self._db, conversation)
            holds.hold(self._db, conversation, doing)

    def release(self, conversation: str) -> None:
        """The exchange ended: this process no longer holds ``conversation``."""
        holds.release(self._db, conversation)

    def holders(self, conversation: str) -> list[Holder]:
        """The live processes in the middle of an exchange on ``conversation``."""
        return holds.holders(self._db, conversation)

    def rename(self, conversation: str, title: str) -> str:
        """Give ``conversation`` (a whole id) a title (``clean_title``: one
        line, 1 to 200 characters; a ``ValueError`` saying so otherwise).
        Its first message no longer names it. Returns the title as stored."""
        line = clean_title(title)
        self._db.execute("UPDATE conversations SET title = ? WHERE id = ?", (line, conversation))
        return line

    def add_summary(self, conversation: str, text: str, parent: int | None, branch: str,
                    recent: list[StoredEntry]) -> int:
        """A compaction, in one transaction: the summary note after ``parent`` on the new ``branch``, then
        copies of the ``recent`` entries (turn numbers kept: they are the same turns, and the ledger
        knows their calls by them); the original entries stay where they were. Returns the last seq."""
        with self.transaction():
            last = self._next_seq(conversation)
            self.insert_entry(conversation, last, StoredUser(last, text, "done", kind="summary"), parent, branch)
            for item in recent:
                self.insert_entry(conversation, last + 1, item, last, branch)
                last += 1
            self._touch(conversation, last)
        return last

    def insert_entry(self, conversation: str, seq: int, item: StoredEntry, parent: int | None, branch: str) -> None:
        """Write a whole stored entry (a fork's copy, an import)."""
        now = time.time()
        if isinstance(item, StoredUser):
            self._db.execute(
                "INSERT INTO entries (conversation, seq, kind, text, state, exchange, exchange_message, started, "
                "parent, branch, attachments) VALUES (?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?)",
                (conversation, seq, item.kind, item.text, item.exchange, item.exchange_message, now, parent, branch,
                 self._keep(item.attachments)))
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


def _usage_column(usage: Usage | None) -> str | None:
    return json.dumps(usage.to_dict()) if usage is not None and usage.known else None



def _tail(parts: list[str], count: int) -> str:
    """The last ``count`` characters of the text ``parts`` make, without joining the rest."""
    out: list[str] = []
    for part in reversed(parts):
        if count <= 0:
            break
        out.append(part[-count:] if len(part) > count else part)
        count -= len(part)
    return "".join(reversed(out))

