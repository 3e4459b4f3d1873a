"""A server's request to the model, shown inside the running call's card.

What the person must see before anything is sent (the specification's human in
the loop): which server asks, every message it wants the model to read, its
system prompt, its ``maxTokens`` and the model it would go to (and why that
one). Then Send / Refuse (the Send key takes the focus, as an approval's keys do: Enter
sends, Esc refuses). While the model answers, a line says so; its reply comes back into
an editable box (Shift+Tab to it), with Return (as it is or as edited) / Refuse.
After the answer, the card keeps one line of what became of it.

The widget only shows the request and forwards the key pressed (``Answered``):
the chat screen hands it to the session, which owns the request's state. All
text here is the server's or the model's, so all of it is made inert.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static, TextArea

from app.stream.inert import inert
from app.stream.limits import one_line
from app.stream.sampling import SamplingRequest

__all__ = ["SamplingCard"]

#: What the card says in each state (the rest: ``SamplingRequest.outcome``).
_WAITING = {
    "asked": "Nothing has been sent. Send this to the model?",
    "running": "Sent to the model; waiting for its reply…",
    "replied": "The model's reply (edit it if you like), to return to the server or refuse:",
}


class SamplingCard(Vertical):
    DEFAULT_CSS = """
    SamplingCard { height: auto; padding: 0 0 0 2; border-left: thick $warning; margin: 0 0 0 1; }
    SamplingCard.-ended { border-left: thick $foreground 30%; }
    SamplingCard .sample-head { text-style: bold; }
    SamplingCard .sample-asked { color: $text; }
    SamplingCard .sample-state { color: $text-muted; margin: 1 0 0 0; }
    SamplingCard TextArea { height: auto; max-height: 12; }
    SamplingCard Horizontal { height: auto; margin: 1 0 0 0; }
    SamplingCard Button { margin: 0 1 0 0; }
    """

    #: Shown in the footer while the card has the focus (the chat screen's Esc cancels the turn).
    BINDINGS = [Binding("escape", "answer('refuse')", "Refuse")]

    class Answered(Message):
        def __init__(self, card: SamplingCard, key: str, action: str, text: str | None) -> None:
            super().__init__()
            self.card = card
            self.key = key
            self.action = action
            self.text = text

    def __init__(self, key: str, asked: SamplingRequest) -> None:
        super().__init__()
        self.call_key = key
        self.asked = asked
        self._head = Static(classes="sample-head")
        self._request = Static(classes="sample-asked")
        self._state = Static(classes="sample-state")
        self.reply = TextArea(soft_wrap=True, id="sample-reply")
        self._keys = Horizontal()
        self._send = Button("Send to the model", id="sample-send", variant="primary")
        self._return = Button("Return to the server", id="sample-return", variant="primary")
        self._shown: str | None = None
        self._ready = False  # composed: its parts can be updated

    def compose(self) -> ComposeResult:
        yield self._head
        yield self._request
        yield self._state
        yield self.reply
        with self._keys:
            yield self._send
            yield self._return
            yield Button("Refuse", id="sample-refuse")

    def on_mount(self) -> None:
        self._ready = True
        self.refresh_card()

    def request_text(self) -> str:
        """Every message, the system prompt, maxTokens and the model: what would be sent, and to whom."""
        asked = self.asked
        lines = [f"{m.role}: {m.text}" for m in asked.messages]
        if asked.system:
            lines.append(f"system prompt: {asked.system}")
        lines.append(f"maxTokens: {asked.max_tokens} · model: {asked.chosen or asked.model or 'the current model'}")
        return "\n".join(lines)

    def refresh_card(self) -> None:
        """Re-read the request (its state changes under the session); before it is mounted, ``on_mount`` does."""
        if not self._ready:
            return
        asked = self.asked
        ended = asked.state not in _WAITING
        self.set_class(ended, "-ended")
        verb = "asked" if ended else "asks"
        self._head.update(
            Content(
                inert(
                    f"✦ {asked.server} {verb} the model: {one_line(asked.messages[-1].text, 160)}"
                    if asked.messages
                    else f"✦ {asked.server} {verb} the model"
                )
            )
        )
        self._request.update(Content(inert(self.request_text())))
        self._request.display = not ended
        self._state.update(Content(inert(self._state_words())))
        if asked.state == "replied" and self._shown != "replied":
            self.reply.load_text(inert(asked.reply or ""))
            self.reply.move_cursor(self.reply.document.end)  # to add to it, as one mostly does
        self.reply.display = asked.state == "replied"
        self._keys.display = asked.state in ("asked", "replied")
        self._send.display = asked.state == "asked"
        self._return.display = asked.state == "replied"
        if asked.state in ("asked", "replied") and self._shown != asked.state:
            # it waits for the person, as an approval does: its key takes the focus (Enter answers, Esc refuses)
            self.call_after_refresh((self._send if asked.state == "asked" else self._return).focus)
        self._shown = asked.state

    def _state_words(self) -> str:
        asked = self.asked
        if asked.state == "replied" and self.reply.has_focus:
            return "Editing the model's reply: Tab, then Enter returns it to the server; Esc refuses it."
        return _WAITING.get(asked.state) or f"→ {asked.outcome()}"

    def on_descendant_focus(self) -> None:
        self._state.update(Content(inert(self._state_words())))

    def on_descendant_blur(self) -> None:
        self._state.update(Content(inert(self._state_words())))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer((event.button.id or "sample-refuse").removeprefix("sample-"))

    def action_answer(self, action: str) -> None:
        if self.asked.state not in ("asked", "replied"):
            return
        # untouched, the reply goes back as the model wrote it (the box holds it made inert)
        edited = action == "return" and self.reply.text != inert(self.asked.reply or "")
        text = self.reply.text if edited else None
        self.post_message(self.Answered(self, self.call_key, action, text))
