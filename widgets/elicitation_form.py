"""A server's request for the person, shown inside the running call's card.

Form mode: one control per requested field (text for strings and numbers,
pre-filled with the default and its constraints as the placeholder; a
checkbox for a boolean; a list to pick from for a choice, several for a
multiple choice), and Accept / Decline / Cancel. URL mode: the URL as
inert text — never opened here; the person opens it themselves — and the
same three answers. The widget only forwards the answer as an ``Answered``
message: the chat screen hands it to the session, which checks it against
the schema (``show_problems`` puts what it refused under the fields).
"""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, SelectionList, Static

from app.stream.elicitation import Elicitation, FormField
from app.stream.inert import inert

__all__ = ["ElicitationForm"]


def _hint(spec: FormField) -> str:
    """The field's constraints, as the placeholder says them."""
    bits = [spec.kind if spec.kind != "string" else (spec.format or "text")]
    if spec.minimum is not None:
        bits.append(f"≥ {spec.minimum:g}")
    if spec.maximum is not None:
        bits.append(f"≤ {spec.maximum:g}")
    if spec.min_length is not None:
        bits.append(f"at least {spec.min_length} characters")
    if spec.max_length is not None:
        bits.append(f"at most {spec.max_length} characters")
    return ", ".join(bits) + ("" if spec.required else " (optional)")


class ElicitationForm(Vertical, can_focus=True):
    DEFAULT_CSS = """
    ElicitationForm { height: auto; padding: 0 0 0 2; border-left: thick $warning; margin: 0 0 0 1; }
    ElicitationForm .ask-message { text-style: bold; }
    ElicitationForm .ask-label { color: $text-muted; margin: 1 0 0 0; }
    ElicitationForm .ask-problem { color: $error; }
    ElicitationForm .ask-url { color: $warning; }
    ElicitationForm Input { width: 1fr; }
    ElicitationForm SelectionList { height: auto; max-height: 8; }
    ElicitationForm Horizontal { height: auto; margin: 1 0 0 0; }
    ElicitationForm Button { margin: 0 1 0 0; }
    """

    BINDINGS = [Binding("escape", "answer('cancel')", "Cancel the request", show=False)]

    class Answered(Message):
        def __init__(self, form: ElicitationForm, key: str, action: str, entered: dict[str, Any]) -> None:
            super().__init__()
            self.form = form
            self.key = key
            self.action = action
            self.entered = entered

    def __init__(self, key: str, asked: Elicitation) -> None:
        super().__init__()
        self.call_key = key
        self.asked = asked
        self._controls: dict[str, Input | Checkbox | SelectionList[str]] = {}
        self._problems: dict[str, Static] = {}

    def compose(self) -> ComposeResult:
        asked = self.asked
        yield Static(Content(f"✎ {inert(asked.server)} asks: {inert(asked.message)}"), classes="ask-message")
        if asked.mode == "url":
            yield Static(Content(f"URL: {inert(asked.url or '')}"), classes="ask-url")
            yield Static(Content("callstream does not open it: open it yourself, then Accept (or Decline)."))
        for spec in asked.fields if asked.mode == "form" else []:
            label = inert(spec.title) + (" *" if spec.required else "")
            label += f" — {inert(spec.description)}" if spec.description else ""
            yield Static(Content(label), classes="ask-label")
            control = self._control(spec)
            self._controls[spec.name] = control
            yield control
            problem = Static(classes="ask-problem")
            problem.display = False
            self._problems[spec.name] = problem
            yield problem
        with Horizontal():
            yield Button("Accept", id="ask-accept", variant="primary")
            yield Button("Decline", id="ask-decline")
            yield Button("Cancel", id="ask-cancel")

    def on_mount(self) -> None:
        # it waits for the person, as an approval does: its first control takes the focus, so Esc cancels the
        # server's request (not the whole turn, which would leave the call's outcome unknown)
        # (without scrolling: the conversation stays at its end, where the form's answers are)
        first = next(iter(self._controls.values()), None)
        target = first if first is not None else self.query_one("#ask-accept", Button)
        self.call_after_refresh(target.focus, False)

    def _control(self, spec: FormField) -> Input | Checkbox | SelectionList[str]:
        default = spec.default
        if spec.kind == "boolean":
            return Checkbox(inert(spec.title), value=bool(default))
        if spec.kind in ("choice", "choices"):
            chosen = set(default) if isinstance(default, list) else {default}
            return SelectionList[str](*[(inert(label), value, value in chosen) for value, label in spec.options])
        shown = "" if default is None else (json.dumps(default) if not isinstance(default, str) else default)
        return Input(value=inert(shown), placeholder=_hint(spec), password=spec.sensitive)

    def entered(self) -> dict[str, Any]:
        """What the person has entered, by field: text, a bool, or the chosen values."""
        out: dict[str, Any] = {}
        for spec in self.asked.fields:
            control = self._controls[spec.name]
            if isinstance(control, Checkbox):
                out[spec.name] = control.value
            elif isinstance(control, SelectionList):
                chosen = list(control.selected)
                out[spec.name] = chosen if spec.kind == "choices" or len(chosen) > 1 else (chosen[0] if chosen else "")
            else:
                out[spec.name] = control.value
        return out

    def show_problems(self, problems: dict[str, str]) -> None:
        """What the session refused, under each field (the request still waits)."""
        for name, line in self._problems.items():
            line.update(Content(f"↑ {problems[name]}" if name in problems else ""))
            line.display = name in problems

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer((event.button.id or "ask-cancel").removeprefix("ask-"))

    def action_answer(self, action: str) -> None:
        self.post_message(self.Answered(self, self.call_key, action, self.entered() if action == "accept" else {}))
