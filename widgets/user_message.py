"""What the user typed, shown as plain text (never markup)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from app.stream.inert import inert

__all__ = ["UserMessage"]


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $primary;
        background: $primary-muted 30%;
        color: $text;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Content(inert(text)))
        #: As typed (the composer gets it back to edit).
        self.message_text = text
