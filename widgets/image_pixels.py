"""An image's pixels, decoded within bounds, as a fresh image that carries
nothing of the file but its colours.

Why its own module: both ways of drawing an image on screen (the half-block
thumbnail of ``attachment_chips`` and the kitty / sixel picture of
``inline_image``) must start from the same inert copy. The size in the
header is checked before anything is decoded (a decompression bomb is never
inflated), a truncated or damaged file decodes to nothing, and the copy is
built from raw RGB bytes, so no metadata (a PNG text chunk holding terminal
escapes, an ICC profile, EXIF) can ride along to the terminal.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["MAX_PIXELS", "inert_pixels"]

#: Past this many pixels (by the header) an image is not decoded for the screen
#: (the attach check refuses bigger ones already; this holds for any bytes a widget is handed).
MAX_PIXELS = 100_000_000


def inert_pixels(data: bytes, box: tuple[int, int]) -> Image | None:
    """The image scaled to fit ``box`` (pixels), RGB, rebuilt from its colours
    alone; None when it cannot be decoded or is too big to decode."""
    try:
        from PIL import Image as PILImage

        with PILImage.open(io.BytesIO(data)) as image:
            if image.size[0] * image.size[1] > MAX_PIXELS:
                return None
            image.draft("RGB", box)  # JPEG: decode small
            # scaled first, then converted: the full-size conversion was half the cost of a thumbnail
            # (bench-attach); a palette or odd mode is converted first, as it scales badly
            small = image if image.mode in ("RGB", "RGBA", "L", "LA") else image.convert("RGBA")
            small.thumbnail(box)
            rgb = small.convert("RGB")
            return PILImage.frombytes("RGB", rgb.size, rgb.tobytes())
    except Exception:  # noqa: BLE001 - a damaged image draws nothing, whatever Pillow raised
        return None
