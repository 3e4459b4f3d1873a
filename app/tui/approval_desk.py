"""Approvals on screen: the dispatcher waits, the card shows it, the key goes back.

A call that awaits approval gets the focus and a bell (and an OSC 9 desktop
notification where the terminal shows them); the answer goes to the session,
or, for a call stored awaiting approval (after a crash, or from ``ask``),
resumes it under its stored key and lets the model read the result.

The keys (y c a n r f) are the screen's while a call awaits an answer,
whatever has the focus: a call streamed whole in one network chunk can
await approval before its card is even mounted, and a ``y`` meant for it
must never land in the input box. Only the reason box of ``r`` keeps its
own keys. With nothing pending the keys type as always.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..stream import ToolCallBlock

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

    from widgets.approval_prompt import ApprovalPrompt
    from widgets.prompt_input import PromptInput
    from widgets.tool_card import ToolCard

    from ..chat.session import ChatSession
    from .status import Status
    from .transcript import Transcript

__all__ = ["ApprovalDesk", "WAITING"]

#: What the status line says while a call awaits the user's answer (whatever else runs meanwhile).
WAITING = "waiting for your approval"

#: Runs a coroutine as the screen's one exchange worker (exclusive in its group).
RunExchange = Callable[[Coroutine[Any, Any, None]], object]


class ApprovalDesk:
    #: Given by ``attach``.
    session: ChatSession

    def __init__(self, app: Callable[[], App[Any]], transcript: Transcript, status: Status,
                 prompt: Callable[[], PromptInput | None], run: RunExchange,
                 later: Callable[[float, Callable[[], None]], object]) -> None:
        self._app = app
        self.transcript = transcript
        self.status = status
        self._prompt = prompt
        self._run = run
        self._later = later
        #: Keys answered here: their cards wait no more, whatever they show until the dispatcher moves them.
        self._answered: set[str] = set()

    def attach(self, session: ChatSession) -> None:
        self.session = session

    # -- which calls wait --------------------------------------------------------------

    def pending(self) -> list[ToolCard]:
        """The cards whose call awaits an answer that can still be given, oldest first: a live
        call the dispatcher waits on, or a stored one the session can resume."""
        if not hasattr(self, "session"):
            return []
        # the screen asks on every key (each approval binding's check_action): the cards are looked
        # for only when a call can be waiting at all, not on every key of a conversation with hundreds
        session = self.session
        turns = session.turns
        live = session.busy and bool(turns) and any(
            isinstance(b, ToolCallBlock) and b.state == "awaiting approval" for b in turns[-1].blocks)
        stored = {b.key for b in session.pending_approvals()}
        if not live and not stored:
            return []
        cards = [c for c in self.transcript.cards() if c.block.key is not None
                 and c.block.state in ("awaiting approval", "needs approval")
                 and c.block.key not in self._answered and not (c.approval is not None and c.approval.answered)]
        return [c for c in cards if (live and c.block.state == "awaiting approval") or c.block.key in stored]

    def takes_keys(self, focused: Widget | None) -> bool:
        """The approval keys are the screen's: a call awaits an answer and no reason is being typed."""
        if _in_reason_box(focused):
            return False
        return bool(self.pending())

    def target(self, focused: Widget | None) -> ToolCard | None:
        """The card a key answers: the one whose keys have the focus, else the oldest waiting."""
        pending = self.pending()
        for card in pending:
            if card.approval is not None and focused is not None and _within(focused, card.approval):
                return card
        return pending[0] if pending else None

    def key(self, choice: str, focused: Widget | None) -> None:
        """An approval key pressed anywhere on the screen: y c a n answer, r asks for a reason, f shows
        the arguments, of the call ``target`` names."""
        card = self.target(focused)
        if card is None:
            return
        approval = card.approval
        if choice in ("reason", "arguments"):
            if approval is not None and approval.is_mounted and choice == "reason":
                approval.action_reason()
            elif approval is not None and approval.is_mounted:
                approval.action_arguments()
            return
        if choice == "always" and not card.offer_always:
            return
        key = card.block.key
        assert key is not None
        if approval is not None:
            if approval.answered:
                return
            approval.answered = True
        self.answer(key, choice, None)

    # -- the call awaits, the user answers ------------------------------------------------

    def awaiting(self, card: ToolCard) -> None:
        self._answered.discard(card.block.key or "")  # asked (again): this key waits for an answer
        self.status.set_state(WAITING)
        if card.approval is not None and card.approval.is_mounted and not _in_reason_box(self._app().focused):
            card.approval.focus()
            card.scroll_visible()
        else:  # not mounted yet (the whole call came in one chunk): focused once it is
            self.focus_pending()
        app = self._app()
        app.bell()
        driver = getattr(app, "_driver", None)
        if driver is not None:  # OSC 9: a desktop notification where the terminal shows them
            driver.write(f"\x1b]9;callstream: {card.block.name} needs your approval\x07")

    def focus_pending(self, tries: int = 40) -> None:
        """A waiting call's keys get the focus once its card has mounted them (a stored card
        mounts them on its own mount; a live one may still be mounting when its call awaits)."""
        pending = self.pending()
        for card in pending:
            if card.approval is not None and card.approval.is_mounted:
                self.status.set_state(WAITING)
                if not _in_reason_box(self._app().focused):
                    card.approval.focus()
                    card.scroll_visible()
                return
        if tries and pending:
            self._later(0.05, lambda: self.focus_pending(tries - 1))

    def answered(self, message: ApprovalPrompt.Answered) -> None:
        self.answer(message.key, message.choice, message.reason)

    def answer(self, key: str, choice: str, reason: str | None) -> None:
        from ..tools.approvals import Answer

        answer = Answer(choice, reason)
        self._answered.add(key)
        if self.session.answer(key, answer):
            self._next(choice)
        elif not self.session.busy and any(c.key == key for c in self.session.pending_approvals()):
            prompt = self._prompt()
            if prompt is not None:
                prompt.focus()
            self._run(self._resume({key: answer}))

    def _next(self, choice: str) -> None:
        """After an answer: the next waiting call keeps the status line and the focus, else the box."""
        if self.pending():
            self.status.set_state(WAITING)
            self.focus_pending()
            return
        prompt = self._prompt()
        if prompt is not None:
            prompt.focus()
        running = choice != "deny" or any(c.block.state == "running" for c in self.transcript.cards())
        self.status.set_state("running tools…" if running else "streaming…")

    async def _resume(self, answers: dict[str, Any]) -> None:
        """A stored pending approval (after a crash, or from ``ask``) answered:
        run it under its stored key, then let the model read the result."""
        self.status.set_state("running tools…")
        if await self.session.resume_pending(answers):
            await self.session.go_on()
        else:
            self._answered.difference_update(answers)
            self.status.set_state("waiting for approval")


def _within(widget: Widget, ancestor: Widget) -> bool:
    node: Any = widget
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def _in_reason_box(focused: Widget | None) -> bool:
    """The focus is in the box where a reason for a denial is typed: its keys are its own."""
    from textual.widgets import Input

    from widgets.approval_prompt import ApprovalPrompt

    return isinstance(focused, Input) and isinstance(focused.parent, ApprovalPrompt)
