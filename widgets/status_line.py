"""The line at the top: what the turn is doing, how long it has taken, what
the conversation has cost in tokens, and which provider and model (last, so
a narrow terminal cuts that first)."""

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
    #: The tokens the whole conversation has cost ("" when no provider said: no numbers, not zeros).
    usage: reactive[str] = reactive("")

    def render(self) -> Content:
        # the turn's state first: on a narrow terminal the provider is what gets cut
        parts: list[str | tuple[str, str]] = [(self.state, "bold italic")]
        if self.detail:
            parts += ["  ·  ", (self.detail, "$text-muted")]
        used = len(self.state) + (len(self.detail) + 5 if self.detail else 0)
        if self.usage and used + 5 + len(self.usage) <= self.content_size.width:
            # whole or not at all: a cut-off count would say a smaller number
            parts += ["  ·  ", (self.usage, "$text-muted")]
        parts += ["  ·  ", self.provider]
        return Content.assemble(*parts)
