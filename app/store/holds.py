"""Who is using a stored conversation right now, so that deleting it never
pulls it from under a process mid-turn (issue 24, item 16).

A process in the middle of an exchange *holds* the conversation: a row in
``holds`` with its owner (``host:pid``, ``app/files/owners.py``), what it is
doing ("streaming turn 3", "running create_ticket in turn 3", "waiting for
approval of create_ticket in turn 3") and since when, written by the
transcript writer as the exchange goes and removed when it ends. A hold
whose process died (a crash, ``kill -9``) is not live and is ignored; one
from another host is taken as live (``owners.alive``).

Why the delete refuses instead of deleting and making the writer stop: the
other process may be running a side effect or waiting for the user's answer
to one, and its user is watching it happen; deleting the rows under it would
turn what it saves next into a half conversation. So ``Store.delete`` (the
one delete: ``transcripts delete`` and the TUI's list both go through it)
looks at the holds inside its write transaction and raises
``ConversationBusy`` naming each holder, deleting nothing. A hold is taken
in a write transaction too (after checking the conversation is there), so a
delete sees it or comes wholly before it; a delete that lands between a
writer's first entry and its hold is met at the writer's next write (below).

And a writer whose conversation vanished all the same (deleted by a
callstream from before holds, or by hand) is told so by the store: every
write that adds to a conversation first checks, in its transaction, that the
conversation is still there and raises ``ConversationDeleted`` otherwise —
nothing is ever re-created (no untitled conversation, no entry whose parent
is gone, no turn numbers starting again at 0). The transcript writer then
stops its session's turn (a cancel: running tools are stopped and recorded
in the ledger as a cancel records them) and the exchange ends in that
stated failure.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from ..files.owners import alive, this_owner
from ..stream.limits import one_line
from .naming import UnresolvedConversation

__all__ = ["Holder", "ConversationBusy", "ConversationDeleted", "hold", "release", "holders", "check_there"]


@dataclass(frozen=True, slots=True)
class Holder:
    owner: str
    doing: str
    since: float

    def words(self) -> str:
        host, _, pid = self.owner.rpartition(":")
        when = time.strftime("%H:%M:%S", time.localtime(self.since))
        return f"process {pid} on {host} is {one_line(self.doing, 120)} (since {when})"


class ConversationBusy(Exception):
    """A conversation another live process holds: not deleted. The message names each holder."""

    def __init__(self, conversation: str, found: list[Holder]) -> None:
        self.conversation = conversation
        self.holders = found
        super().__init__(f"conversation {conversation} is in use by another callstream ("
                         + "; ".join(h.words() for h in found) + "): it was not deleted; delete it again once that "
                         "turn has ended (or that process was stopped)")


class ConversationDeleted(UnresolvedConversation):
    """A write to a conversation that is no longer stored: it was deleted while this process used it."""

    def __init__(self, conversation: str) -> None:
        self.conversation = conversation
        super().__init__(f"conversation {conversation} was deleted by another process while this one was using it: "
                         "this turn was stopped and nothing more of it was saved (the conversation was not "
                         "re-created); start a new conversation to go on")


def check_there(db: sqlite3.Connection, conversation: str) -> None:
    """``ConversationDeleted`` unless ``conversation`` is stored (call it inside the write transaction)."""
    if db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation,)).fetchone() is None:
        raise ConversationDeleted(conversation)


def hold(db: sqlite3.Connection, conversation: str, doing: str) -> None:
    """This process holds ``conversation``, doing ``doing`` (its first hold's time kept)."""
    db.execute("INSERT INTO holds (conversation, owner, doing, since) VALUES (?, ?, ?, ?) "
               "ON CONFLICT (conversation, owner) DO UPDATE SET doing = excluded.doing",
               (conversation, this_owner(), doing, time.time()))


def release(db: sqlite3.Connection, conversation: str) -> None:
    db.execute("DELETE FROM holds WHERE conversation = ? AND owner = ?", (conversation, this_owner()))


def holders(db: sqlite3.Connection, conversation: str) -> list[Holder]:
    """The live processes holding ``conversation`` (this one included), oldest first."""
    rows = db.execute("SELECT owner, doing, since FROM holds WHERE conversation = ? ORDER BY since",
                      (conversation,)).fetchall()
    return [Holder(row[0], row[1], row[2]) for row in rows if alive(row[0])]
