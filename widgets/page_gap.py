"""Where pages of a long conversation are not mounted, between two that are.

The window keeps the first and the last page of a long conversation mounted
beside the pages around the view (so Home and End only scroll), and between
them this one line stands for the pages in between. The window fills it a
page at a time as the view comes near it, so it is seen only for the frame
or two a page takes to come, or while the scrollbar is dragged past it.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

__all__ = ["PageGap"]


class PageGap(Static):
    DEFAULT_CSS = """
    PageGap {
        height: 1;
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-muted;
    }
    """

    def __init__(self) -> None:
        super().__init__(Content("⋯"))
