"""Images drawn inline (issue 28 item 4): the terminal's own graphics through
textual-image where the terminal can draw them, half-block cells otherwise;
the terminal is asked only before the app starts and only on a terminal;
hostile image files drawn inertly or not at all, each for its stated reason."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from app.files.attach import from_bytes
from app.stream.attachments import Attachment
from app.tui import pictures
from tests.attachment_files import image_bytes
from widgets.attachment_chips import AttachmentChips, thumbnail
from widgets.image_pixels import inert_pixels
from widgets.inline_image import InlineImage

ROOT = Path(__file__).resolve().parents[1]
OSC52 = b"\x1b]52;c;ZWNobyBwd25lZA==\x07"


@pytest.fixture
def drawn_as() -> Iterator[object]:
    """Set the drawing mode for one test; cells again after it."""
    yield pictures.set_mode
    pictures.set_mode("cells")


def png_with_escapes_in_its_text_chunk() -> bytes:
    """A whole, valid PNG whose metadata holds an OSC 52 clipboard write and a screen clear,
    as Pillow writes a text chunk."""
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", (OSC52 + b"\x1b[2J").decode("latin-1"))
    out = io.BytesIO()
    Image.new("RGB", (40, 20), (10, 200, 10)).save(out, "PNG", pnginfo=info)
    return out.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A small real PNG whose header is rewritten to claim ``width``×``height`` (CRC fixed),
    as a decompression bomb's header does: tiny on disk, enormous once inflated."""
    data = bytearray(image_bytes("PNG", (8, 8)))
    ihdr = 8 + 8  # signature, then length + "IHDR"
    data[ihdr:ihdr + 8] = struct.pack(">II", width, height)
    data[ihdr + 13:ihdr + 17] = struct.pack(">I", zlib.crc32(bytes(data[ihdr - 4:ihdr + 13])))
    return bytes(data)


def unchecked(data: bytes, name: str = "picture.png") -> Attachment:
    """An attachment as a stored or imported reference could hand it back (no attach check)."""
    import hashlib

    return Attachment(name, "image/png", len(data), hashlib.sha256(data).hexdigest(), data, 40, 20)


def sixel_output(pixels: object) -> str:
    """What textual-image's sixel renderable writes for these pixels, captured by Rich."""
    from textual_image.renderable.sixel import Image as SixelRenderable

    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    console.print(SixelRenderable(pixels, width=20))  # type: ignore[arg-type]
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


# -- how the terminal is asked ------------------------------------------------------------------


def test_without_a_terminal_images_are_cells_and_textual_image_is_not_even_imported() -> None:
    """Why: textual-image asks the terminal on import; a pipe (tests, CI, ``chat`` under a script)
    must never be written a query nor have its stdin read."""
    code = ("import sys; from app.tui.pictures import probe; print(probe(), 'textual_image' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "CALLSTREAM_IMAGES"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=True)
    assert done.stdout.split() == ["cells", "False"]


@pytest.mark.parametrize("wanted", ["kitty", "sixel", "cells", "off"])
def test_callstream_images_chooses_the_drawing_without_asking_the_terminal(
        wanted: str, monkeypatch: pytest.MonkeyPatch, drawn_as: object) -> None:
    monkeypatch.setenv("CALLSTREAM_IMAGES", wanted)
    assert pictures.probe() == wanted == pictures.mode()


def test_importing_the_app_asks_the_terminal_nothing() -> None:
    """Why: only ``probe`` (called by ``chat`` before the app runs) may import textual-image."""
    code = "import sys, app.tui.app, app.tui.pictures, widgets.inline_image; print('textual_image' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=True)
    assert done.stdout.strip() == "False"


# -- inline pictures under Pilot -----------------------------------------------------------------


@pytest.mark.parametrize("size", [(120, 40), (60, 20)])
@pytest.mark.parametrize("mode", ["sixel", "kitty"])
async def test_in_a_graphics_terminal_an_image_is_a_chip_and_an_inline_picture_within_the_screen(
        tmp_path: Path, size: tuple[int, int], mode: str, drawn_as: object) -> None:
    from textual_image.widget import SixelImage, TGPImage

    from tests.test_attachments_tui import chips, gradient
    from tests.test_tui_everyday import demo, send, type_and_enter

    pictures.set_mode(mode)  # type: ignore[arg-type]
    app = demo()
    async with app.run_test(size=size) as pilot:
        await type_and_enter(app, pilot, f"/attach {gradient(tmp_path)}")
        await send(app, pilot, "What is this?")
        await pilot.pause()
        (chip,) = chips(app)
        assert chip.startswith("📎 gradient.png · PNG · ") and "▀" not in chip  # the picture, not cells
        (inline,) = app.screen.query(InlineImage)
        picture = inline.query_one(TGPImage if mode == "kitty" else SixelImage)
        assert 0 < picture.region.width <= min(24, size[0]) and picture.region.height > 0


async def test_with_images_off_an_image_is_its_chip_alone(tmp_path: Path, drawn_as: object) -> None:
    from tests.test_attachments_tui import chips, gradient
    from tests.test_tui_everyday import demo, send, type_and_enter

    pictures.set_mode("off")
    app = demo()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_enter(app, pilot, f"/attach {gradient(tmp_path)}")
        await send(app, pilot, "What is this?")
        (chip,) = chips(app)
        assert "▀" not in chip and not app.screen.query(InlineImage)


# -- hostile files -------------------------------------------------------------------------------


def test_escapes_in_an_images_metadata_never_reach_the_terminal_as_sixel() -> None:
    """Why inert: the picture is rebuilt from RGB bytes alone, so the text chunk is left behind;
    the library encodes colours, and the file's bytes are never written."""
    data = png_with_escapes_in_its_text_chunk()
    assert OSC52 in data and from_bytes(data, "meta.png").width == 40  # a valid image, attachable
    pixels = inert_pixels(data, (400, 400))
    assert pixels is not None and not pixels.info
    out = sixel_output(pixels)
    assert "\x1bP" in out  # a sixel was drawn
    assert "\x1b]" not in out and "\x1b[2J" not in out and "ZWNobyBwd25lZA" not in out


def test_escapes_in_an_images_metadata_never_reach_the_terminal_as_kitty_graphics() -> None:
    """Why inert: the kitty protocol carries base64 of a PNG Pillow writes from the bare colours."""
    import base64

    from textual_image._pixeldata import PixelData

    pixels = inert_pixels(png_with_escapes_in_its_text_chunk(), (400, 400))
    assert pixels is not None
    sent = base64.b64decode(PixelData(pixels).scaled(20, 10).to_base64())
    assert sent.startswith(b"\x89PNG") and b"\x1b" not in sent and b"Comment" not in sent


def test_escapes_in_an_images_metadata_and_name_never_reach_the_terminal_as_cells() -> None:
    item = from_bytes(png_with_escapes_in_its_text_chunk(), "evil\x1b]0;pwned\x07.png")
    text = AttachmentChips._content([item], images=True)
    assert "▀" in text.plain and "\x1b" not in text.plain and "\x07" not in text.plain


def test_a_decompression_bomb_is_never_inflated_for_the_screen() -> None:
    """Why refused: the header claims 400 million pixels; the size is read before any decode, so
    the few bytes on disk never become gigabytes of memory; the chip says it cannot be drawn."""
    bomb = png_claiming(20_000, 20_000)
    assert len(bomb) < 1000
    assert inert_pixels(bomb, (400, 400)) is None and thumbnail(bomb) is None
    text = AttachmentChips._content([unchecked(bomb, "bomb.png")], images=True)
    assert "the image could not be drawn (damaged)" in text.plain


async def test_a_decompression_bomb_is_named_not_drawn_as_an_inline_picture(drawn_as: object) -> None:
    from textual.app import App, ComposeResult

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield InlineImage(unchecked(png_claiming(20_000, 20_000), "bomb.png"), "sixel")

    app = One()
    async with app.run_test(size=(80, 10)):
        assert "bomb.png: the image could not be drawn (damaged)" in str(app.query_one(".-damaged").render())


def test_a_truncated_png_is_not_drawn_and_says_so() -> None:
    """Why refused: a truncated image decodes to an error (half a picture could be anything);
    the attach check refuses it, and a stored one handed back is named, not drawn."""
    whole = image_bytes("PNG", (100, 100), noise=True)
    cut = whole[: len(whole) // 2]
    assert inert_pixels(cut, (400, 400)) is None
    text = AttachmentChips._content([unchecked(cut, "cut.png")], images=True)
    assert "cut.png" in text.plain and "the image could not be drawn (damaged)" in text.plain
