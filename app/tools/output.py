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
import contextlib

from ..stream.limits import cut_marker

__all__ = ["read_capped", "capped_text", "communicate_capped"]

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


async def communicate_capped(process: asyncio.subprocess.Process, data: bytes, limit: int) -> tuple[str, str]:
    """``process.communicate(data)`` that keeps at most ``limit`` bytes of
    stdout and of stderr, each cut with the marker: (stdout, stderr) as text."""

    async def feed() -> None:
        if process.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(data)
            await process.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.close()

    _, (out, out_cut), (err, err_cut) = await asyncio.gather(
        feed(), read_capped(process.stdout, limit), read_capped(process.stderr, limit))
    await process.wait()
    return capped_text(out, out_cut), capped_text(err, err_cut)
