"""A tool's output, read incrementally and kept up to a limit.

A command that prints 100 MB must not cost 100 MB: the pipe is read in
pieces, the first ``limit`` bytes are kept, the rest is read and counted
(so the command is never blocked on a full pipe) and replaced by a visible
``[… N bytes cut]`` marker — the model and the user both see that the output
was cut, and by how much.
"""

from __future__ import annotations

import asyncio
import codecs

from ..stream.limits import cut_marker

__all__ = ["read_capped", "capped_text"]

_PIECE = 64 * 1024


async def read_capped(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, int]:
    """Read ``stream`` to its end; (the first ``limit`` bytes, how many more there were)."""
    if stream is None:
        return b"", 0
    kept = bytearray()
    cut = 0
    while True:
        piece = await stream.read(_PIECE)
        if not piece:
            return bytes(kept), cut
        room = limit - len(kept)
        if room > 0:
            kept += piece[:room]
            cut += max(0, len(piece) - room)
        else:
            cut += len(piece)


def capped_text(data: bytes, cut: int) -> str:
    """The kept bytes as text, with the marker when anything was cut (a
    character split by the cut is counted as cut, not shown as a replacement)."""
    if not cut:
        return data.decode("utf-8", "replace")
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(data, final=False)
    held = len(decoder.getstate()[0])  # the bytes of a character the cut split
    return f"{text}\n{cut_marker(cut + held)}"
