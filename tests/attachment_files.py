"""Real files for the attachment tests, written by the programs that make
them (Pillow writes the images and the PDF), never by hand."""

from __future__ import annotations

import io
import os
from pathlib import Path


def image_bytes(fmt: str = "PNG", size: tuple[int, int] = (64, 48), noise: bool = False, mode: str = "RGB") -> bytes:
    from PIL import Image

    if noise:
        image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        image = Image.new(mode, size, (200, 30, 30) if mode == "RGB" else 0)
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def pdf_bytes() -> bytes:
    """A one-page PDF, as Pillow writes one."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (100, 100), (255, 255, 255)).save(out, "PDF")
    return out.getvalue()


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path
