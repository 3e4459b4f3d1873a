"""The files sent with a user message: one chip each (name, type, size,
pixels, and what was done to it), and a half-block thumbnail under an image.

The thumbnail is drawn from the decoded pixels only (each cell an upper-half
block whose two colours are two pixel rows), so nothing from the file ever
reaches the terminal as bytes: a hostile file can choose colours, never an
escape sequence. Names go through ``inert``. An image that cannot be decoded
says so on its chip instead of a thumbnail.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from app.stream.attachments import Attachment, describe
from app.stream.inert import inert

from .image_pixels import inert_pixels

__all__ = ["AttachmentChips", "thumbnail", "THUMB_WIDTH"]

#: A thumbnail's width in cells (its height follows the image's shape, at most half of it).
THUMB_WIDTH = 24


def thumbnail(data: bytes, width: int = THUMB_WIDTH) -> Text | None:
    """Half-block cells for an image's pixels; None when it cannot be decoded."""
    pixels = inert_pixels(data, (width, width))  # at most `width` pixel rows: half as many lines
    if pixels is None:
        return None
    cols, rows = pixels.size[0], max(2, pixels.size[1] + pixels.size[1] % 2)
    if rows != pixels.size[1]:
        pixels = pixels.resize((cols, rows))
    text = Text()
    for y in range(0, rows, 2):
        for x in range(cols):
            top = pixels.getpixel((x, y))
            bottom = pixels.getpixel((x, y + 1))
            assert isinstance(top, tuple) and isinstance(bottom, tuple)
            text.append("▀", Style(color=f"rgb({top[0]},{top[1]},{top[2]})",
                                   bgcolor=f"rgb({bottom[0]},{bottom[1]},{bottom[2]})"))
        if y + 2 < rows:
            text.append("\n")
    return text


class AttachmentChips(Static):
    DEFAULT_CSS = """
    AttachmentChips {
        margin: 0 0 0 2;
        padding: 0 1;
        color: $text-muted;
    }
    """

    def __init__(self, attachments: list[Attachment], images: bool = True) -> None:
        super().__init__(self._content(attachments, images))
        self.attachments = attachments

    @staticmethod
    def _content(attachments: list[Attachment], images: bool) -> Text:
        out = Text()
        for n, item in enumerate(attachments):
            if n:
                out.append("\n")
            out.append("📎 ", style="bold")
            out.append(describe(item))
            if item.note:
                out.append(f" — {inert(item.note)}", style="italic")
            if images and item.kind == "image":
                drawn = thumbnail(item.data)
                if drawn is None:
                    out.append(" — the image could not be drawn (damaged)", style="italic")
                else:
                    out.append("\n")
                    out.append_text(drawn)
        return out
