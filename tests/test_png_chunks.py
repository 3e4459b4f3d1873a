"""A PNG's ancillary chunk with a bad checksum is dropped, as libpng does; a
critical one is still refused (app/files/png_chunks.py)."""

from __future__ import annotations

import io
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.files.attach import AttachError, from_bytes
from app.files.png_chunks import without_broken_ancillary


def png_with_text() -> bytes:
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "hello")
    out = io.BytesIO()
    Image.new("RGB", (12, 6), (1, 2, 3)).save(out, "PNG", pnginfo=info)
    return out.getvalue()


def corrupt_crc(data: bytes, kind: bytes) -> bytes:
    at = data.index(kind) - 4
    length = int.from_bytes(data[at:at + 4], "big")
    end = at + 12 + length
    crc = zlib.crc32(data[at + 4:end - 4]) ^ 0xFFFF
    return data[:end - 4] + crc.to_bytes(4, "big") + data[end:]


def test_an_ancillary_chunk_with_a_bad_crc_is_dropped_and_the_note_says_so() -> None:
    broken = corrupt_crc(png_with_text(), b"tEXt")
    item = from_bytes(broken, "logo.png")
    assert (item.width, item.height) == (12, 6) and b"tEXt" not in item.data
    assert item.note is not None and "tEXt chunk had a bad checksum and was dropped" in item.note


def test_a_critical_chunk_with_a_bad_crc_is_still_refused() -> None:
    broken = corrupt_crc(png_with_text(), b"IDAT")
    assert without_broken_ancillary(broken) == (broken, [])
    with pytest.raises(AttachError, match="damaged or truncated"):
        from_bytes(broken, "bad.png")


def test_a_whole_png_comes_back_as_it_came() -> None:
    whole = png_with_text()
    assert without_broken_ancillary(whole) == (whole, [])
    assert from_bytes(whole, "ok.png").note is None


@given(st.binary(max_size=400))
def test_any_bytes_after_the_signature_are_mended_or_left_never_an_error(tail: bytes) -> None:
    data = b"\x89PNG\r\n\x1a\n" + tail
    mended, dropped = without_broken_ancillary(data)
    assert (mended == data) == (not dropped)
    assert len(mended) <= len(data)
