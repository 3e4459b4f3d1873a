"""A file the person attaches, read and checked before anything is sent.

The type comes from the bytes (``stream.attachments.detect_media_type``);
images are opened with Pillow, the maintained imaging library, only far
enough to know their pixels and that they are whole (``verify``, never a
full decode of a file we were handed): a decompression bomb (over
``MAX_PIXELS``), a truncated or corrupt image, or bytes that only pretend to
be an image are refused with a sentence (a PNG's ancillary chunk with a bad
checksum is dropped first, as libpng does: ``png_chunks``). An image over a provider's limits
is downscaled (``fit``) and the note says so; what still cannot be sent is
refused by ``stream.attachments.problems`` before the request.
"""

from __future__ import annotations

import hashlib
import io
import sys
import warnings
from pathlib import Path

from ..stream.attachments import IMAGE_TYPES, LIMITS, Attachment, detect_media_type, size_words
from .png_chunks import without_broken_ancillary

__all__ = ["AttachError", "MAX_PIXELS", "MAX_BYTES", "read_path", "from_bytes", "fit"]

#: Past this many pixels an image is refused as a likely decompression bomb
#: (Pillow's own default warns at 89 M and raises at twice that).
MAX_PIXELS = 100_000_000
#: A file over this is not read at all.
MAX_BYTES = 64 * 1024 * 1024


class AttachError(ValueError):
    """A file that cannot be attached; the message is the sentence to show."""


def read_path(path: str) -> Attachment:
    """``-`` reads standard input (its type from the bytes); else a file."""
    if path == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
        return from_bytes(data, "stdin")
    file = Path(path).expanduser()
    try:
        size = file.stat().st_size
        if size > MAX_BYTES:
            raise AttachError(f"{file.name}: {size_words(size)} is over the {size_words(MAX_BYTES)} an attachment "
                              "may have.")
        data = file.read_bytes()
    except IsADirectoryError:
        raise AttachError(f"{path}: is a folder, not a file.") from None
    except FileNotFoundError:
        raise AttachError(f"{path}: no such file.") from None
    except OSError as error:
        raise AttachError(f"{path}: cannot be read ({error.strerror or error}).") from None
    return from_bytes(data, file.name)


def from_bytes(data: bytes, name: str) -> Attachment:
    if len(data) > MAX_BYTES:
        raise AttachError(f"{name}: over the {size_words(MAX_BYTES)} an attachment may have.")
    if not data:
        raise AttachError(f"{name}: is empty.")
    media_type = detect_media_type(data)
    if media_type is None:
        raise AttachError(f"{name}: is not an image (PNG, JPEG, GIF, WebP), a PDF or a UTF-8 text file.")
    width = height = None
    note = None
    if media_type == "image/png":
        data, dropped = without_broken_ancillary(data)
        if dropped:
            note = f"its {', '.join(dropped)} chunk had a bad checksum and was dropped, as libpng does"
    if media_type in IMAGE_TYPES:
        width, height = _probe(data, name)
    return Attachment(name, media_type, len(data), hashlib.sha256(data).hexdigest(), data, width, height, note)


def _probe(data: bytes, name: str) -> tuple[int, int]:
    """The image's pixels, after Pillow's bomb check and its whole-file check."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                if width * height > MAX_PIXELS:
                    raise AttachError(f"{name}: {width}×{height} pixels is over {MAX_PIXELS:,} (a likely "
                                      "decompression bomb); not attached.")
                image.verify()
        except AttachError:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise AttachError(f"{name}: too many pixels (a likely decompression bomb); not attached.") from None
        except Exception as error:  # noqa: BLE001 - Pillow raises many kinds for a broken file
            raise AttachError(f"{name}: the image is damaged or truncated ({type(error).__name__}); "
                              "not attached.") from None
    return width, height


def _still(item: Attachment, provider: str) -> Attachment:
    """An animated GIF's first frame, as a PNG (the note says so); a still GIF as it is."""
    from PIL import Image

    with Image.open(io.BytesIO(item.data)) as image:
        if getattr(image, "n_frames", 1) <= 1:
            return item
        out = io.BytesIO()
        image.convert("RGBA").save(out, "PNG")
    data = out.getvalue()
    return Attachment(item.name, "image/png", len(data), hashlib.sha256(data).hexdigest(), data, item.width,
                      item.height, f"the first frame of an animated GIF, as PNG ({provider} takes still GIFs only)")


def fit(item: Attachment, dialect: str, images: int = 1) -> Attachment:
    """An image within the dialect's size and pixel limits: downscaled (same
    format; a GIF as PNG) until it fits, with a note saying so; an animated
    GIF for OpenAI (still GIFs only) becomes its first frame, noted too.
    Anything else, or an image already within them, comes back as it is.
    ``images``: how many the request carries (Anthropic allows less per side past 20)."""
    limits = LIMITS.get(dialect)
    if limits is not None and item.media_type == "image/gif" and item.width is not None and \
            dialect.startswith("openai"):
        item = _still(item, limits.provider)  # OpenAI takes non-animated GIFs only
    if limits is None or item.kind != "image" or item.width is None or item.height is None:
        return item
    side, allowed = max(item.width, item.height), limits.side_for(images)
    if item.size <= limits.image_bytes and side <= allowed:
        return item
    from PIL import Image

    scale = min(1.0, allowed / side)
    data, width, height, media_type = item.data, item.width, item.height, item.media_type
    for _ in range(6):
        with Image.open(io.BytesIO(item.data)) as image:
            width, height = max(1, int(item.width * scale)), max(1, int(item.height * scale))
            small = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB").resize((width, height))
        out = io.BytesIO()
        if item.media_type == "image/jpeg":
            small.convert("RGB").save(out, "JPEG", quality=85)
        elif item.media_type == "image/webp":
            small.save(out, "WEBP", quality=85)
        else:
            small.save(out, "PNG", optimize=True)
            media_type = "image/png"
        data = out.getvalue()
        if len(data) <= limits.image_bytes:
            break
        scale *= max(0.3, min(0.9, (limits.image_bytes / len(data)) ** 0.5))
    note = (f"downscaled from {item.width}×{item.height} ({size_words(item.size)}) to {width}×{height} "
            f"({size_words(len(data))}) to fit {limits.provider}'s limits")
    return Attachment(item.name, media_type, len(data), hashlib.sha256(data).hexdigest(), data, width, height, note)
