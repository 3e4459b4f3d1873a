"""A compressed response body, decompressed a bounded piece at a time.

httpx decompresses each network read whole: one 64 KB read of a gzip bomb
(about 1000:1) becomes 64 MB of text in one string before anything can look
at it, and the parser then holds a list of every frame in it. Here each
``zlib`` call gives at most ``PIECE`` bytes (``max_length``), so the parser
sees the body as it would have arrived uncompressed, counts it against its
limits piece by piece, and the caller stops reading the moment a limit is
hit: a bomb costs what the limit lets through, not what one read inflates to.

Only ``gzip`` and ``deflate`` are taken here (what the request's
``Accept-Encoding`` offers); any other encoding is left to httpx.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

__all__ = ["ACCEPT_ENCODING", "PIECE", "Inflater", "InflateError", "inflater_for"]

#: What the request says callstream can read.
ACCEPT_ENCODING = "gzip, deflate"

#: The most one decompression step yields.
PIECE = 64 * 1024


class InflateError(ValueError):
    """The body does not decompress (a broken or truncated stream)."""


class Inflater:
    """One body's decompressor: ``feed`` compressed bytes, iterate the
    decompressed pieces (each at most ``PIECE``); concatenated gzip members
    are read one after the other, as ``zcat`` does."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._raw_deflate = False
        self._started = False
        #: The body's compressed data has ended: bytes after it are not ours to read.
        self._ignore = False
        self._between = False
        self._z = self._new()

    def _new(self) -> zlib._Decompress:
        if self._encoding == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return zlib.decompressobj(-zlib.MAX_WBITS if self._raw_deflate else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data and not self._ignore:
            if self._between:
                # a gzip member ended: what follows is the next one; anything else
                # (padding, junk) is not compressed data, and is ignored as httpx does
                self._between = False
                if self._encoding != "gzip" or not data.startswith(b"\x1f"):
                    self._ignore = True
                    return
            try:
                out = self._z.decompress(data, PIECE)
            except zlib.error as exc:
                if self._encoding == "deflate" and not self._started and not self._raw_deflate:
                    # "deflate" without its zlib header, as some servers send it
                    self._raw_deflate = True
                    self._z = self._new()
                    continue
                raise InflateError(f"the response body does not decompress ({exc})") from None
            self._started = True
            if self._z.eof:
                data = self._z.unused_data
                self._z = self._new()
                self._between = True
            else:
                data = self._z.unconsumed_tail
            if out:
                yield out

    def flush(self) -> bytes:
        if self._ignore:
            return b""
        try:
            return self._z.flush()
        except zlib.error as exc:  # pragma: no cover - flush after a clean feed does not raise
            raise InflateError(f"the response body does not decompress ({exc})") from None


def inflater_for(content_encoding: str) -> Inflater | None:
    """The decompressor for a response's ``Content-Encoding``, or None when
    the body is not compressed (or compressed in a way httpx decodes)."""
    encoding = content_encoding.strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return Inflater("gzip")
    if encoding == "deflate":
        return Inflater("deflate")
    return None
