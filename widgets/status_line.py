"""The line at the top: which provider and model, and what the turn is doing."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

__all__ = ["StatusLine"]


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine {
        dock: top;
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text;
    }
    """

    provider: reactive[str] = reactive("")
    state: reactive[str] = reactive("ready")

    def render(self) -> Content:
        return Content.assemble(("callstream", "bold"), "  ·  ", self.provider, "  ·  ", (self.state, "italic"))
