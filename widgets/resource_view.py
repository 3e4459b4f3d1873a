"""A resource shown on a tool call's card (``/resource open``): its URI, how many times the server
said it changed since it was opened, and its text — given already inert by the screen, and shown
as plain text (``Content``, never markup), so nothing a server wrote styles or moves the terminal."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

__all__ = ["ResourceView"]


class ResourceView(Static):
    DEFAULT_CSS = """
    ResourceView {
        height: auto;
        margin: 0 0 0 2;
        padding: 0 1;
        border-left: tall $accent 40%;
        color: $text-muted;
    }
    """

    def __init__(self, uri: str, text: str) -> None:
        super().__init__(classes="resource-view")
        self.uri = uri
        #: Times it was shown again after a change the server told of.
        self.updates = -1
        self.show(text)

    def show(self, text: str) -> None:
        self.updates += 1
        changed = f" · updated {self.updates}×" if self.updates else ""
        self.update(Content(f"resource {self.uri}{changed}\n{text}"))
