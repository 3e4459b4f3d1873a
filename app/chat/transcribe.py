"""The transcript writer: a ``ChatSession`` listener that writes the
conversation into the store as it happens — a turn's row at every
transition, a block when it completes, the prose added since the last flush
every half second — so a process killed mid-turn leaves every completed turn
whole and the turn in progress marked ``streaming``, which a reopen shows as
interrupted. It only writes: it calls the store's write API with what the
events say.

While an exchange runs it holds the conversation (``app/store/holds.py``:
what this process is doing, so a delete elsewhere refuses and names it), and
lets go when the exchange ends. A conversation deleted under it all the same
is never re-created: the store raises ``ConversationDeleted``; from an entry
number the session asked for, that ends the exchange at once (nothing has
run yet in it); from a write mid-turn, the writer stops the session's turn
(a cancel) and raises it when the exchange is over, so the exchange ends in
that stated failure with its tools stopped as a cancel stops them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING

from ..store import ConversationDeleted, Store, StoredTree, StoredTurn, StoredUser, history_of, retry_point
from ..store.numbers import EntryNumbers
from ..stream import ToolCallBlock
from ..stream.attachments import Attachment
from ..stream.history import Entry
from .events import (
    AttemptFailed,
    BlockGrew,
    BlockOpened,
    CallState,
    ChatEvent,
    ExchangeDone,
    Notice,
    TurnNoted,
    TurnSettled,
)
from .place import Resync
from .turns import LiveTurn

if TYPE_CHECKING:
    from .session import ChatSession

__all__ = ["TranscriptWriter"]

#: A forming call's buffer up to this size is rewritten at every flush; past it, only as it grows by a quarter.
_SMALL_BUFFER = 65_536


class TranscriptWriter:
    """A ChatSession listener that writes the conversation as it happens, and
    the session's entry book: the store numbers each entry the session adds
    (``user_entry``, ``turn_entry``, ``attempt_entry``) under its write lock,
    and ``resync`` reports what other processes added. It never moves the
    session: the session places itself from the numbers it is given."""

    def __init__(self, store: Store, session: ChatSession, provider: str,
                 stored: StoredTree | None = None) -> None:
        self.store = store
        self.session = session
        self.conversation = session.conversation
        self._seq: dict[int, int] = {}
        self._last_flush = 0.0
        #: Block index → the size of a forming call's buffer when it was last written.
        self._flushed: dict[int, int] = {}
        self._provider = provider
        #: The entries this session knows (every branch): loaded with it, or written by it.
        self._known = EntryNumbers(item.seq for item in stored.tree) if stored else EntryNumbers()
        #: The user message the exchange in progress began with (None: the last one stored).
        self._user: int | None = None
        #: The conversation is stored (loaded, or created with the first message): never created again.
        self._created = stored is not None
        #: The store said the conversation was deleted under this session: nothing more is written.
        self.deleted: ConversationDeleted | None = None
        #: What the hold on the conversation last said this process was doing (None: no hold).
        self._doing: str | None = None

    # -- the session's entry book (``place.EntryBook``): the store numbers each new entry ----

    def user_entry(self, text: str, after: int | None, branch: str,
                   attachments: Sequence[Attachment] = ()) -> int:
        with self._storing():
            self._ensure_conversation()
            seq = self._user = self.store.add_user(self.conversation, text, after, branch, attachments)
            self._hold("sending a message")
        self._known.add(seq)
        return seq

    def turn_entry(self, after: int | None, branch: str) -> tuple[int, int]:
        with self._storing():
            self._ensure_conversation()
            turn, seq = self.store.allocate_turn(self.conversation, after, branch)
            self._hold(f"streaming turn {turn}")
        self._seq[turn] = seq
        self._known.add(seq)
        return turn, seq

    def attempt_entry(self, turn: int, attempt: int, after: int | None, branch: str) -> int:
        with self._storing():
            seq = self._seq[turn] = self.store.start_turn(self.conversation, turn, attempt, after, branch)
            self._hold(f"streaming turn {turn}" + (f" (attempt {attempt})" if attempt > 1 else ""))
        self._known.add(seq)
        self._flushed.clear()
        return seq

    @contextlib.contextmanager
    def _storing(self) -> Iterator[None]:
        """An entry number the session needs: none once the conversation is gone (the exchange ends)."""
        if self.deleted is not None:
            raise self.deleted
        try:
            yield
        except ConversationDeleted as exc:
            self._gone(exc)
            raise

    def _gone(self, exc: ConversationDeleted) -> None:
        """The conversation was deleted under this session: nothing more is written, and its hold goes."""
        self.deleted, self._doing = exc, None
        self.store.release(self.conversation)

    def _hold(self, doing: str) -> None:
        if doing != self._doing:
            self.store.hold(self.conversation, doing)
            self._doing = doing

    def _holding(self, turn: int) -> None:
        """The hold says what the turn's calls are doing now (waiting for an answer, running) or that it streams."""
        record = self._record(turn)
        calls = [b for b in record.blocks if isinstance(b, ToolCallBlock)] if record is not None else []
        waiting = [c.name or "a call" for c in calls if c.state == "awaiting approval"]
        running = [c.name or "a call" for c in calls if c.state == "running"]
        if waiting:
            self._hold(f"waiting for approval of {', '.join(dict.fromkeys(waiting))} in turn {turn}")
        elif running:
            self._hold(f"running {', '.join(dict.fromkeys(running))} in turn {turn}")
        else:
            self._hold(f"streaming turn {turn}")

    def resync(self) -> Resync | None:
        """The stored conversation as it is now, if another process added to it: its tree without the
        text (``Store.load(whole=False)``), the entries added on the path shown read whole (for the
        screen), and the path's history a reader called on first use (``DeferredHistory``), which
        reads the path page by page — never every block of every branch. A last turn with calls
        awaiting approval has its path read whole, as at open (``Runtime.tree``): answering them
        rebuilds the history from it."""
        if self.store.entry_count(self.conversation) <= len(self._known):
            return None
        stored = self.store.load(self.conversation, whole=False)
        if stored is not None and stored.pending_approvals():
            stored = self.store.load_path(stored.id)
        if stored is None or stored.id != self.conversation:
            return None
        path = stored.items
        added = [item for item in path if item.seq not in self._known]
        places = {item.seq: item.siblings for item in added}  # (a page does not count siblings: the tree did)
        added = list(self.store.entries(stored.id, [item.seq for item in added]))
        for item in added:
            item.siblings = places[item.seq]
        self._known.update(item.seq for item in stored.tree)
        self._user = next((e.seq for e in reversed(path) if isinstance(e, StoredUser)), None)
        seqs = [item.seq for item in path]
        conversation = stored.id

        def read() -> list[Entry]:
            return history_of(self.store.entries(conversation, seqs))

        return Resync(read, partial(retry_point, path), added, stored)

    def _ensure_conversation(self) -> None:
        # created with its first message (an app opened and closed leaves nothing behind), and only then:
        # one deleted since is gone (the store says so), never brought back untitled
        if not self._created:
            self.store.create(self.conversation, self._provider, self.session.endpoint.model,
                              self.session.endpoint.dialect)
            self._created = True

    def __call__(self, event: ChatEvent) -> None:
        if self.deleted is not None:
            if isinstance(event, ExchangeDone):
                raise self.deleted  # the exchange is over (its tools stopped): it ends in the stated failure
            return
        try:
            self._write(event)
        except ConversationDeleted as exc:
            self._gone(exc)
            if isinstance(event, ExchangeDone):
                raise
            self.session.cancel()  # stop the turn: nothing more of it can be saved

    def _write(self, event: ChatEvent) -> None:
        conv = self.conversation
        if isinstance(event, BlockOpened):
            if event.index > 0:  # the block before it is complete
                self._put(event.turn, event.index - 1)
            if event.block.type == "tool_call":
                # a forming call is on screen from its announcement, so it is in the store from then:
                # a process killed while it forms reopens showing it (name, stable fields, raw buffer)
                self._put(event.turn, event.index)
                self._flushed[event.index] = 0
        elif isinstance(event, BlockGrew):
            now = time.monotonic()
            if now - self._last_flush > 0.5 and self._worth_flushing(event.turn, event.index):
                # work in progress, at most twice a second (prose: what it grew by)
                self._last_flush = now
                self._put(event.turn, event.index, growing=True)
        elif isinstance(event, CallState):
            if event.state != "waiting":  # "waiting" reopens as "not run" either way: skip rewriting a big buffer
                self._put(event.turn, event.index)
            self._holding(event.turn)
        elif isinstance(event, AttemptFailed | Notice):  # a turn's notes, shown again on a reopen
            seq = self._seq.get(event.turn)
            if seq is not None:
                self.store.add_failure(conv, seq, event.message)
        elif isinstance(event, TurnSettled):
            seq = self._seq.get(event.turn)
            record = self._record(event.turn)
            if seq is not None and record is not None:
                self.store.finish_turn(conv, seq, event.result, event.attempts, event.note, record.blocks,
                                       event.usage, event.model)
        elif isinstance(event, TurnNoted):  # a stored turn's approvals answered after a reopen: its note now
            seq = self._stored_seq(event.turn)
            if seq is not None:
                self.store.set_note(conv, seq, event.note)
        elif isinstance(event, ExchangeDone):
            self.store.finish_exchange(conv, event.status, event.message, self._user)
            self.store.release(conv)
            self._doing = None

    def moved(self, user: int | None, stored: StoredTree | None = None) -> None:
        """The session now continues another path of the tree; ``user`` is its last user message."""
        self._user = user
        if stored is not None:
            self._known.update(item.seq for item in stored.tree)

    def _record(self, turn: int) -> LiveTurn | None:
        """The latest run of ``turn`` (a Ctrl+R retry re-runs an index: its
        record, not the failed one's, is what ran)."""
        turns = self.session.turns
        if turns and turns[-1].index == turn:
            return turns[-1]  # the turn in progress: the common case, no search
        return next((t for t in reversed(turns) if t.index == turn), None)

    def _worth_flushing(self, turn: int, index: int) -> bool:
        """Prose always; a forming call's buffer while small, then each time it
        grew by a quarter, so rewriting it stays linear in its size overall."""
        record = self._record(turn)
        if record is None or index >= len(record.blocks):
            return False
        block = record.blocks[index]
        if not isinstance(block, ToolCallBlock):
            return True
        last = self._flushed.get(index, 0)
        if block.size == last or (block.size > _SMALL_BUFFER and block.size < last * 1.25):
            return False
        self._flushed[index] = block.size
        return True

    def _put(self, turn: int, index: int, growing: bool = False) -> None:
        seq = self._stored_seq(turn)
        record = self._record(turn)
        if seq is None or record is None or index >= len(record.blocks):
            return
        self.store.put_block(self.conversation, seq, index, record.blocks[index], growing)

    def _stored_seq(self, turn: int) -> int | None:
        """The entry of ``turn``: one this session ran, or a stored one answered after a reopen (a pending approval)."""
        seq = self._seq.get(turn)
        if seq is None and self.session.stored is not None:
            seq = next((i.seq for i in self.session.stored.items if isinstance(i, StoredTurn) and i.turn == turn),
                       None)
        return seq
