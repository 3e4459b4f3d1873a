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
    #: The context meter ("context 12% of 128k"; "" when the model's window is unknown), and whether
    #: it is near the limit (then it is drawn as a warning, and kept before the usage on a narrow line).
    meter: reactive[str] = reactive("")
    meter_warning: reactive[bool] = reactive(False)

    def render(self) -> Content:
        # the turn's state first: on a narrow terminal the provider is what gets cut
        parts: list[str | tuple[str, str]] = [(self.state, "bold italic")]
        if self.detail:
            parts += ["  ·  ", (self.detail, "$text-muted")]
        used = len(self.state) + (len(self.detail) + 5 if self.detail else 0)
        room = self.content_size.width - used
        # whole or not at all (a cut-off count would say a smaller number); a warning meter goes first
        meter = bool(self.meter) and self.meter_warning and len(self.meter) + 5 <= room
        room -= len(self.meter) + 5 if meter else 0
        if self.usage and len(self.usage) + 5 <= room:
            parts += ["  ·  ", (self.usage, "$text-muted")]
            room -= len(self.usage) + 5
        if self.meter and (meter or len(self.meter) + 5 <= room):
            parts += ["  ·  ", (self.meter, "bold $warning" if self.meter_warning else "$text-muted")]
        parts += ["  ·  ", self.provider]
        return Content.assemble(*parts)
