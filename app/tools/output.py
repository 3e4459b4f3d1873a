"""A tool's output, kept up to a limit, with the cut made visible.

The command writes to a temporary file (app/tools/command.py), so output
costs disk, not memory; only the first ``limit`` bytes are read back, and the
rest is replaced by a visible ``[… N bytes cut]`` marker — the model and the
user both see that the output was cut, and by how much, instead of a silent
truncation.
"""

from __future__ import annotations

import codecs
import os
from typing import IO

from ..stream.limits import cut_marker

__all__ = ["read_capped", "capped_text"]


def read_capped(file: IO[bytes], limit: int) -> str:
    """The first ``limit`` bytes of ``file`` as text, with the marker if there was more."""
    size = file.seek(0, os.SEEK_END)
    file.seek(0)
    data = file.read(limit)
    return capped_text(data, max(0, size - len(data)))


def capped_text(data: bytes, cut: int) -> str:
    """The kept bytes as text, with the marker when anything was cut (a
    character split by the cut is counted as cut, not shown as a replacement)."""
    if not cut:
        return data.decode("utf-8", "replace")
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(data, final=False)
    held = len(decoder.getstate()[0])  # the bytes of a character the cut split
    return f"{text}\n{cut_marker(cut + held)}"
