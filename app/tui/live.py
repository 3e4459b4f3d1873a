"""The live view: each ``ChatEvent`` of the conversation loop as an operation on the screen's parts.

Blocks open and grow in the transcript in event order; the status line says
what the loop is doing; an exchange's end shows what it cost and, after a new
version, the tree's markers again. A display error stays here: it is said
once, and the turn (and its transcript) goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from widgets.note import NoteBlock

from ..stream.limits import one_line
from . import collector
from .approval_desk import WAITING

if TYPE_CHECKING:
    from widgets.tool_card import ToolCard

    from ..chat.events import ChatEvent
    from .status import Status
    from .tally import Tally
    from .transcript import Transcript
    from .tree import TreeController

__all__ = ["LiveView", "describe"]


def describe(exc: BaseException) -> str:
    """A data file's failure says itself; anything else is named by its type."""
    from ..files.dbfile import DataFileError

    if isinstance(exc, DataFileError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class LiveView:
    def __init__(self, transcript: Transcript, status: Status, tally: Tally, tree: TreeController,
                 awaiting: Callable[[ToolCard], None], later: Callable[[Callable[[], None]], object],
                 after_refresh: Callable[[Callable[[], None]], object]) -> None:
        self.transcript = transcript
        self.status = status
        self.tally = tally
        self.tree = tree
        #: A card now awaits the user's approval (focus it, ring).
        self._awaiting = awaiting
        self._later = later
        self._after_refresh = after_refresh
        self._display_failed = False

    def on_chat_event(self, event: ChatEvent) -> None:
        """The screen's listener."""
        try:
            self.show(event)
        except Exception as exc:
            if not self._display_failed:
                self._display_failed = True
                self.transcript.note(f"Part of this turn could not be shown ({one_line(describe(exc), 300)}); "
                                     "it goes on, and the transcript keeps all of it.", "error")

    def show(self, event: ChatEvent) -> None:
        from ..chat.events import (
            AttemptFailed,
            AttemptStarted,
            BlockGrew,
            BlockOpened,
            CallState,
            ConversationMoved,
            ExchangeDone,
            Notice,
            TurnSettled,
            UserSent,
        )

        transcript, status, tally = self.transcript, self.status, self.tally
        if isinstance(event, BlockGrew | BlockOpened):
            status.heard()
            transcript.grew()
        if isinstance(event, BlockGrew):
            transcript.grow(event)
        elif isinstance(event, BlockOpened):
            transcript.open_block(event)
        elif isinstance(event, CallState):
            card = transcript.call_state(event)
            if card is not None:
                self._awaiting(card)
            if event.state == "running" and status.state != WAITING:  # a call awaiting an answer is named first
                status.set_state("running tools…")
        elif isinstance(event, UserSent):
            tally.new_exchange()
            transcript.user_sent(event.text)
            if event.attachments:  # the chips under the message, as sent
                from .pictures import attachment_widgets

                for widget in attachment_widgets(event.attachments):
                    transcript.add(widget)
        elif isinstance(event, ConversationMoved):
            transcript.note(event.message, "quiet")
            ended = transcript.render_items(event.added)
            if ended:
                status.ended(ended)
            tally.added(event.added)
            status.show_spent(tally)
        elif isinstance(event, AttemptStarted):
            transcript.attempt_started(event)
            status.set_state("streaming…" if event.attempt == 1 else f"streaming (attempt {event.attempt})…")
        elif isinstance(event, AttemptFailed):
            transcript.add(NoteBlock(event.message))
        elif isinstance(event, Notice):
            transcript.note(event.message, "warning")
        elif isinstance(event, TurnSettled):
            tally.turn_settled(event.usage, event.model)
            transcript.turn_settled(event)
        elif isinstance(event, ExchangeDone):
            self._after_refresh(collector.between_turns)  # the full collection, while the reply is read
            if event.message:
                transcript.note(event.message, "error")
            if event.model is not None or event.usage is not None:  # requests were made
                tally.exchange_done(event.usage, event.model)
                transcript.show_usage_line()
                status.show_spent(tally)
            self.tree.exchange_done(self._later)
            status.ended(event.status)
            transcript.session.let_go_stored()  # (its turns before this exchange are stored)
