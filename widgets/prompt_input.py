"""The multi-line input: Enter sends, Ctrl+J (or Shift+Enter where the
terminal reports it) starts a new line."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

__all__ = ["PromptInput"]


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: round $primary 60%;
        padding: 0 1;
    }
    PromptInput:focus { border: round $primary; }
    """

    @dataclass
    class Submitted(Message):
        text: str

    def __init__(self) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, highlight_cursor_line=False,
                         placeholder="Ask something — or /demo for the failure scenarios (Enter sends, Ctrl+J newline)")

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            text = self.text
            if text.strip():
                self.post_message(self.Submitted(text))
                self.clear()
            return
        if event.key in ("shift+enter", "ctrl+j"):
            event.prevent_default()
            event.stop()
            self.insert("\n")
            return
        await super()._on_key(event)
