"""The stored conversation tree: what ``Store.load`` returns and every
reader of a stored conversation walks.

A conversation is a tree: each entry (a user message, or an assistant turn
with its attempts, outcome, note and the notes of its failed attempts)
follows a parent entry, on a branch; an edited message or a regenerated
reply is a new child of the entry before it, so nothing is ever overwritten.
``StoredTree.items`` is the path shown (to one leaf), ``tree`` every entry.
Here too are the rules a stored path continues by: the history it tells the
model (``history_of``, through ``rules.told``), where Ctrl+R starts
(``retry_point``), and what a reopen says of a turn the process did not live
to finish (``mark_killed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..rules.told import told, turn_note
from ..rules.words import UNKNOWN_OUTCOME, interrupted_note
from ..stream.attachments import Attachment
from ..stream.blocks import PENDING_APPROVAL, Block, ToolCallBlock, Turn, dispatched
from ..stream.history import Assistant, Entry, User
from ..stream.usage import Usage

__all__ = ["StoredUser", "StoredTurn", "StoredEntry", "StoredTree", "history_of", "retry_point", "retryable",
           "mark_killed", "exchange_ended", "KILLED"]

#: What a reopen says about a turn the process did not live to finish.
KILLED = "callstream stopped"


@dataclass(slots=True)
class StoredUser:
    """A user message as stored (``seq``: its entry number in the tree)."""

    seq: int
    text: str
    exchange: str | None = None
    exchange_message: str | None = None
    #: The entry it follows in the conversation's tree (None: the first), its branch,
    #: and its place among the entries that follow the same one (1-based, of how many).
    parent: int | None = None
    branch: str = ""
    siblings: tuple[int, int] = (1, 1)
    #: "user", or "summary": a compaction's note (``app/chat/compaction.py``), which stands for
    #: everything before it on the path when the history is told (``history_of``).
    kind: str = "user"
    #: The files sent with it (their bytes read back from the data dir).
    attachments: list[Attachment] = field(default_factory=list)


@dataclass(slots=True)
class StoredTurn:
    """An assistant turn as stored: its blocks as they were shown, and how it ended."""

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
class StoredTree:
    """A stored conversation's tree: ``items`` is the path shown (from the first
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
    #: Read without text (``Reads.load(whole=False)``): only the path's last entry has its blocks.
    shallow: bool = False

    @property
    def path_turns(self) -> set[int]:
        return {item.turn for item in self.items if isinstance(item, StoredTurn)}

    def pending_approvals(self) -> list[ToolCallBlock]:
        """The calls of the last turn shown that still wait for an answer (after a crash, or an ``ask``
        that could ask nobody), each with the key it was claimed under."""
        last = self.items[-1] if self.items else None
        if not isinstance(last, StoredTurn):
            return []
        return [b for b in last.blocks if isinstance(b, ToolCallBlock) and b.state in PENDING_APPROVAL
                and b.key is not None]

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



def mark_killed(turn: StoredTurn) -> None:
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



def history_of(conversation: StoredTree | Iterable[StoredEntry]) -> list[Entry]:
    """The provider-neutral history a stored conversation (the path shown,
    or any path of its tree) continues from: each turn tells the model what
    ``rules.told`` says a finished turn tells it."""
    if isinstance(conversation, StoredTree) and conversation.shallow:
        raise ValueError(f"conversation {conversation.id} was read without its text: read its path (Store.entries)")
    history: list[Entry] = []
    for item in conversation.items if isinstance(conversation, StoredTree) else conversation:
        if isinstance(item, StoredUser):
            # a compaction's summary replaces what came before it (which stays on the path, shown and
            # guarded by the ledger as before: only the model is told the summary instead)
            if item.kind == "summary":
                history = []
            history.append(User(item.text, list(item.attachments)))
            continue
        ended = Turn("", item.outcome or "complete", item.stop_reason, item.error, item.blocks,  # type: ignore[arg-type]
                     item.cause)
        history += told(item.turn, item.blocks, turn_note(ended, item.note))
    return history


def retryable(items: list[StoredEntry]) -> bool:
    """Whether Ctrl+R has a turn to retry at the end of ``items`` (``retry_point`` says where it starts)."""
    return bool(items) and isinstance(items[-1], StoredTurn) and items[-1].outcome != "complete"


def retry_point(conversation: StoredTree | list[StoredEntry],
                history: list[Entry]) -> tuple[int, int | None] | None:
    """Where Ctrl+R starts in a reopened conversation (the path shown, or any
    path of its tree) whose last turn failed (``ChatSession._failed``):
    re-issue that turn under its own index when none of its calls was
    dispatched, else continue after it as a new turn."""
    items = conversation.items if isinstance(conversation, StoredTree) else conversation
    if not retryable(items):
        return None
    last = items[-1]
    assert isinstance(last, StoredTurn)
    if dispatched(last.blocks):
        return len(history), None
    return max(i for i, e in enumerate(history) if isinstance(e, Assistant)), last.turn


def exchange_ended(items: Sequence[StoredEntry]) -> str | None:
    """How the last exchange of ``items`` ended, as stored (a turn the process did not live to finish:
    failed): what the screen's status line says on reopening."""
    status: str | None = None
    for item in items:
        if isinstance(item, StoredUser):
            status = item.exchange
        elif item.killed:
            status = "failed"
    return status
