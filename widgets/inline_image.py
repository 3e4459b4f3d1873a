"""One image drawn in the terminal's own graphics (the kitty graphics
protocol or sixel), under its chip or its tool card.

Drawn by textual-image (the maintained Textual image library; pinned in
pyproject.toml), never by escapes of our own. What it is handed is
``image_pixels.inert_pixels``'s copy, rebuilt from RGB bytes and already
scaled down, never the file: the library encodes those colours (base64 of a
PNG for kitty, sixel bands for sixel), so a hostile file chooses colours,
never a sequence the terminal obeys. textual-image probes the terminal when
it is imported, so it is imported here only when a graphics mode was chosen,
which ``app.tui.pictures.probe`` does before the app starts and only on a
terminal; under tests and CI the mode is ``cells`` and this widget is not
built. An image that cannot be decoded is named, not drawn.
"""

from __future__ import annotations

from typing import Literal

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from app.stream.attachments import Attachment
from app.stream.inert import inert

from .image_pixels import inert_pixels

__all__ = ["InlineImage", "GraphicsMode", "IMAGE_CELLS"]

GraphicsMode = Literal["kitty", "sixel"]
#: The widest an inline image is drawn, in cells (a thumbnail, as wide as the half-block ones: wider,
#: the sixel encoder, pure Python in textual-image, passed 2× the chips-only draw time in bench-attach);
#: its pixels are cut to what that many cells show
#: (the terminal's cell size, asked once before the app started), since the sixel encoder's time
#: grows with the pixels it is handed.
IMAGE_CELLS = 24


class InlineImage(Vertical):
    DEFAULT_CSS = """
    InlineImage {
        height: auto;
        margin: 0 0 0 4;
    }
    InlineImage > .picture {
        width: auto;
        height: auto;
        max-width: 24;
    }
    """

    def __init__(self, item: Attachment, mode: GraphicsMode) -> None:
        super().__init__()
        self.item = item
        self.mode = mode

    def compose(self) -> ComposeResult:
        from textual_image._terminal import get_cell_size  # cached by the probe: no question asked here

        cell = get_cell_size()
        pixels = inert_pixels(self.item.data, (IMAGE_CELLS * cell.width, IMAGE_CELLS * cell.height))
        if pixels is None:
            yield Static(f"{inert(self.item.name)}: the image could not be drawn (damaged)", classes="-damaged")
            return
        if self.mode == "kitty":
            from textual_image.widget import TGPImage

            yield TGPImage(pixels, classes="picture")
        else:
            from textual_image.widget import SixelImage

            yield SixelImage(pixels, classes="picture")
