"""The whole text of a provider's or proxy's error, folded under its one-line
note: what the note had to leave out (the full error event, an HTTP error
body, a proxy's traceback), inert, redacted and capped where it was made
(``limits.full_text``)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible, Static

from app.stream.inert import inert

__all__ = ["ErrorDetails"]


class ErrorDetails(Collapsible):
    DEFAULT_CSS = """
    ErrorDetails {
        margin: 0 0 0 1;
        padding: 0;
        border: none;
        background: transparent;
    }
    ErrorDetails Static { color: $text-muted; }
    """

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__(Static(Content(inert(text))), title="Details", collapsed=True)
