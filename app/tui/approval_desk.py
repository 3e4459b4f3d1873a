"""Approvals on screen: the dispatcher waits, the card shows it, the key goes back.

A call that awaits approval gets the focus and a bell (and an OSC 9 desktop
notification where the terminal shows them); the answer goes to the session,
or, for a call stored awaiting approval (after a crash, or from ``ask``),
resumes it under its stored key and lets the model read the result.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App

    from widgets.approval_prompt import ApprovalPrompt
    from widgets.prompt_input import PromptInput
    from widgets.tool_card import ToolCard

    from ..chat.session import ChatSession
    from .status import Status
    from .transcript import Transcript

__all__ = ["ApprovalDesk"]

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

    def attach(self, session: ChatSession) -> None:
        self.session = session

    def awaiting(self, card: ToolCard) -> None:
        self.status.set_state("waiting for your approval")
        if card.approval is not None:
            card.approval.focus()
            card.scroll_visible()
        app = self._app()
        app.bell()
        driver = getattr(app, "_driver", None)
        if driver is not None:  # OSC 9: a desktop notification where the terminal shows them
            driver.write(f"\x1b]9;callstream: {card.block.name} needs your approval\x07")

    def focus_pending(self, tries: int = 40) -> None:
        """A call stored awaiting approval: its keys get the focus once its card has mounted them."""
        for card in self.transcript.cards():
            if card.approval is not None and card.approval.is_mounted:
                self.status.set_state("waiting for your approval")
                card.approval.focus()
                card.scroll_visible()
                return
        if tries:  # the stored cards mount their keys on their own mount
            self._later(0.05, lambda: self.focus_pending(tries - 1))

    def answered(self, message: ApprovalPrompt.Answered) -> None:
        from ..tools.approvals import Answer

        answer = Answer(message.choice, message.reason)
        prompt = self._prompt()
        if prompt is not None:
            prompt.focus()
        if self.session.answer(message.key, answer):
            self.status.set_state("running tools…" if message.choice != "deny" else "streaming…")
        elif not self.session.busy and any(c.key == message.key for c in self.session.pending_approvals()):
            self._run(self._resume({message.key: answer}))

    async def _resume(self, answers: dict[str, Any]) -> None:
        """A stored pending approval (after a crash, or from ``ask``) answered:
        run it under its stored key, then let the model read the result."""
        self.status.set_state("running tools…")
        if await self.session.resume_pending(answers):
            await self.session.go_on()
        else:
            self.status.set_state("waiting for approval")
