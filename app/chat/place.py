"""Where a session stands in its stored conversation's tree, and what it
learns when another process moved the conversation on.

The session owns its place (``ChatSession.branch``, ``position``,
``path_turns``): it advances it from the entry numbers the store hands out
(through an ``EntryBook``, the runtime's transcript writer) before it tells
any listener, so every listener reads the same place whatever their order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..stream.attachments import Attachment
from ..stream.history import Entry

if TYPE_CHECKING:
    from ..store import StoredEntry, StoredTree

__all__ = ["Resync", "EntryBook", "DeferredHistory", "history_read", "Retry", "lineage_of"]

#: Where Ctrl+R starts (``ChatSession._failed``): (history length, turn index or None), or a rule giving
#: it from the history once that is read (a long reopened path's).
Retry = tuple[int, int | None] | Callable[[list[Entry]], tuple[int, int | None] | None]


@dataclass(slots=True)
class Resync:
    """The stored conversation moved on in another process: the history to
    continue from (or a reader of it, called on first use: ``DeferredHistory``),
    where Ctrl+R would start (as ``ChatSession._failed``), the stored items this
    session had not seen (for the screen), and the conversation as stored now
    (the session moves to where it was last shown)."""

    history: list[Entry] | Callable[[], list[Entry]]
    failed: Retry | None
    added: list[StoredEntry]
    stored: StoredTree


class EntryBook(Protocol):
    """Numbers for new entries of the conversation's tree, chosen by the store
    under its write lock (two processes never share one): the session asks
    before it tells its listeners, and carries the number on its events."""

    def user_entry(self, text: str, after: int | None, branch: str,
                   attachments: Sequence[Attachment] = ()) -> int:
        """A user message after entry ``after`` on ``branch``: its entry number."""

    def turn_entry(self, after: int | None, branch: str) -> tuple[int, int]:
        """A new turn after entry ``after`` on ``branch``: (its turn index, its entry number)."""

    def attempt_entry(self, turn: int, attempt: int, after: int | None, branch: str) -> int:
        """Attempt ``attempt`` of turn ``turn`` (re-issued under its index, or new): its entry number."""

    def resync(self) -> Resync | None:
        """The stored conversation, if another process added to it since this session last looked."""


class DeferredHistory:
    """``ChatSession.history``: a list, or a reader of one called on first use. A reopened conversation
    of thousands of exchanges hands a reader (``Runtime``): opening it and showing its last screen
    reads no block of its path; the first request (or a command that needs the history) reads the
    path then, page by page."""

    def __get__(self, session: Any, owner: type | None = None) -> list[Entry]:
        held = session.__dict__["_history"]
        if callable(held):
            held = session.__dict__["_history"] = held()
        history: list[Entry] = held
        return history

    def __set__(self, session: Any, value: list[Entry] | Callable[[], list[Entry]]) -> None:
        session.__dict__["_history"] = value


def history_read(session: Any) -> bool:
    """Whether ``session``'s history is in memory (not still waiting for its first use)."""
    return not callable(session.__dict__.get("_history"))


def lineage_of(conversation: str, path_turns: set[int],
               origins: list[tuple[str, frozenset[int]]]) -> list[tuple[str, frozenset[int]]]:
    """A branched conversation with the turns on its path, then each conversation it was forked from with
    the copied turns still on the path: where the ledger looks for a call that ran on another branch."""
    path = frozenset(path_turns)
    return [(conversation, path), *((origin, copied & path) for origin, copied in origins)]
