"""The line at the top: what the turn is doing, how long it has taken, and
which provider and model (last, so a narrow terminal cuts that first)."""

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
    #: Time so far ("12 s · waiting 9 s for the provider"), or what the last exchange took.
    detail: reactive[str] = reactive("")

    def render(self) -> Content:
        # the turn's state first: on a narrow terminal the provider is what gets cut
        parts: list[str | tuple[str, str]] = [(self.state, "bold italic")]
        if self.detail:
            parts += ["  ·  ", (self.detail, "$text-muted")]
        parts += ["  ·  ", self.provider]
        return Content.assemble(*parts)
