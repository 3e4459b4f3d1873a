"""The keys of a call awaiting approval, shown inside its card.

It only displays the state and forwards the key the user pressed as an
``Answered`` message: the chat screen hands that to the dispatcher, which
alone decides whether the call runs (DESIGN.md "Call states"). The full
arguments are one key away (``f``), canonical and inert; the card above
shows only the allow-listed fields.
"""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static

from app.stream.inert import inert

__all__ = ["ApprovalPrompt"]

_ALWAYS = "a always allow this tool · "


def _keys(offer_always: bool) -> str:
    return ("y run once · c allow for this conversation · " + (_ALWAYS if offer_always else "")
            + "n deny · r deny with a reason · f full arguments")


class ApprovalPrompt(Vertical, can_focus=True):
    DEFAULT_CSS = """
    ApprovalPrompt { height: auto; padding: 0 0 0 2; }
    ApprovalPrompt:focus .approval-keys { text-style: bold; }
    ApprovalPrompt .approval-keys { color: $warning; }
    ApprovalPrompt .approval-args { color: $text-muted; padding: 0 0 0 2; }
    ApprovalPrompt Input { margin: 0 0 0 2; width: 1fr; }
    """

    BINDINGS = [
        Binding("y", "answer('once')", "Run once", show=False),
        Binding("c", "answer('conversation')", "Allow for this conversation", show=False),
        Binding("a", "answer('always')", "Always allow", show=False),
        Binding("n", "answer('deny')", "Deny", show=False),
        Binding("r", "reason", "Deny with a reason", show=False),
        Binding("f", "arguments", "Full arguments", show=False),
    ]

    class Answered(Message):
        def __init__(self, key: str, choice: str, reason: str | None = None) -> None:
            super().__init__()
            self.key = key
            self.choice = choice
            self.reason = reason

    def __init__(self, key: str, arguments: Any, offer_always: bool = True) -> None:
        super().__init__()
        self.call_key = key
        self.arguments = arguments
        self.offer_always = offer_always
        self._keys = Static(Content(f"Needs your approval (key {key[:12]}…): {_keys(offer_always)}"),
                            classes="approval-keys")
        self._args = Static(classes="approval-args")
        self._args.display = False
        self._reason: Input | None = None
        self.answered = False

    def compose(self) -> ComposeResult:
        yield self._keys
        yield self._args

    def action_answer(self, choice: str) -> None:
        if choice == "always" and not self.offer_always:
            return
        if not self.answered:
            self.answered = True
            self.post_message(self.Answered(self.call_key, choice))

    def action_arguments(self) -> None:
        text = json.dumps(self.arguments, ensure_ascii=False, indent=2, sort_keys=True)
        self._args.update(Content(inert(text)))
        self._args.display = not self._args.display

    def action_reason(self) -> None:
        if self._reason is None and not self.answered:
            self._reason = Input(placeholder="why not? (told to the model) — Enter denies", id="approval-reason")
            self.mount(self._reason)
            self._reason.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.answered:
            self.answered = True
            self.post_message(self.Answered(self.call_key, "deny", event.value.strip() or None))
