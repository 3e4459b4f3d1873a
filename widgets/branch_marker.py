"""‹2/3›: the message or reply below is one version of several (the
conversation is a tree). Only numbers reach it; the screen moves between
versions."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

__all__ = ["BranchMarker"]


class BranchMarker(Static):
    DEFAULT_CSS = """
    BranchMarker { margin: 1 0 0 0; height: 1; color: $text-muted; }
    """

    def __init__(self, position: int, count: int) -> None:
        super().__init__(Content.assemble((f"‹{position}/{count}›", "bold"), "  Alt+← Alt+→ other versions"))
        self.position = position
        self.count = count
