"""The model's reasoning: collapsed by default, plain text, streamed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Collapsible, Static

from app.stream.inert import inert

__all__ = ["ReasoningBlock"]


class ReasoningBlock(Collapsible):
    DEFAULT_CSS = """
    ReasoningBlock {
        margin: 1 0 0 0;
        padding: 0;
        border: none;
        background: transparent;
        color: $text-muted;
    }
    ReasoningBlock Static { color: $text-muted; padding: 0 2; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(title="Reasoning", collapsed=True)
        self._parts: list[str] = [inert(text)] if text else []
        self._body = Static(Content("".join(self._parts)))
        self._scheduled = False

    def compose(self) -> ComposeResult:
        yield from super().compose()

    def on_mount(self) -> None:
        self.query_one(Collapsible.Contents).mount(self._body)

    def add(self, delta: str) -> None:
        self._parts.append(inert(delta))
        if not self._scheduled:
            self._scheduled = True
            self.set_timer(1 / 30, self._refresh_body)

    def _refresh_body(self) -> None:
        self._scheduled = False
        self._body.update(Content("".join(self._parts)))
