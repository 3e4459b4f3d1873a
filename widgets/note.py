"""A one-line note: an attempt that failed, an interrupted turn, the end of
a failed exchange. Plain text, never markup."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from app.stream.inert import inert

__all__ = ["NoteBlock"]


class NoteBlock(Static):
    DEFAULT_CSS = """
    NoteBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-warning;
    }
    NoteBlock.-error { color: $text-error; }
    NoteBlock.-quiet { color: $text-muted; margin: 0; }
    """

    def __init__(self, text: str, kind: str = "warning") -> None:
        super().__init__(Content(inert(text)))
        if kind == "error":
            self.add_class("-error")
        elif kind == "quiet":
            self.add_class("-quiet")
