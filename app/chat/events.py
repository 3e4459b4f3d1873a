"""What the conversation loop tells its listeners (the TUI, ``ask``, the transcript writer).

Every event names the turn (``turn``: its index in the conversation) and,
for block events, the block's index in that turn, so a listener can keep the
same ordered block list the loop keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..stream import Block, Turn
from ..stream.attachments import Attachment
from ..stream.usage import Usage

__all__ = [
    "ChatEvent",
    "UserSent",
    "AttemptStarted",
    "BlockOpened",
    "BlockGrew",
    "CallState",
    "AttemptFailed",
    "TurnSettled",
    "ExchangeDone",
    "ConversationMoved",
    "Notice",
    "TurnNoted",
]


@dataclass(slots=True)
class UserSent:
    text: str
    #: Its entry in the stored conversation's tree (None: nothing stores this session).
    entry: int | None = None
    #: The files sent with it, as sent (after any downscale: ``Attachment.note``).
    attachments: list[Attachment] = field(default_factory=list)


@dataclass(slots=True)
class AttemptStarted:
    """A new attempt of ``turn``: blocks of an earlier failed attempt are
    replaced by this one's, not appended to."""

    turn: int
    attempt: int
    #: The turn's entry in the stored conversation's tree (None: nothing stores this session).
    entry: int | None = None


@dataclass(slots=True)
class BlockOpened:
    turn: int
    index: int
    block: Block


@dataclass(slots=True)
class BlockGrew:
    """Text or argument text appended to a block (``delta`` may be empty when
    only a name or a result changed)."""

    turn: int
    index: int
    delta: str


@dataclass(slots=True)
class CallState:
    """A call's state changed (the block holds the new state and result)."""

    turn: int
    index: int
    state: str


@dataclass(slots=True)
class AttemptFailed:
    """One short note per failed attempt."""

    turn: int
    attempt: int
    message: str


@dataclass(slots=True)
class TurnSettled:
    """A turn is over: its calls have finished (or did not run) and its
    history is written. ``result`` is the last attempt's assembled reply."""

    turn: int
    result: Turn
    attempts: int
    #: One line for an interrupted turn ("Interrupted: …; it was not run.").
    note: str | None
    #: What the turn's requests cost, every attempt's together (None: no provider said).
    usage: Usage | None = None
    #: The model that answered (as the provider named it, else as it was asked for).
    model: str | None = None


@dataclass(slots=True)
class ExchangeDone:
    """The loop stopped: ``status`` is done, failed, cancelled or round_limit.
    ``usage`` is the exchange's: every request of its tool loop together."""

    status: str
    message: str | None = None
    usage: Usage | None = None
    model: str | None = None


@dataclass(slots=True)
class ConversationMoved:
    """Another process added to the stored conversation since this session
    last looked: ``added`` are the stored items it had not seen (users and
    turns, in order), now part of the history; ``message`` says so."""

    added: list[object]
    message: str


@dataclass(slots=True)
class Notice:
    """A line about ``turn`` that is neither a failed attempt nor its ending
    note (an "always" answer the config could not keep): shown in the
    conversation and stored with the turn."""

    turn: int
    message: str


@dataclass(slots=True)
class TurnNoted:
    """A settled turn's ending note changed after the fact: its calls waiting
    for approval were answered after a reopen, so "Waiting for approval" no
    longer says how it ended (``note``: the note now; None: none)."""

    turn: int
    note: str | None


ChatEvent = (ConversationMoved | UserSent | AttemptStarted | BlockOpened | BlockGrew | CallState | AttemptFailed
             | TurnSettled | ExchangeDone | Notice | TurnNoted)
