"""A long ``data:`` line whose strings nobody will read, kept without them.

OpenAI Responses repeats a call's whole arguments after its deltas: in
``response.function_call_arguments.done`` (the strict check: the engine
compares it with the streamed text), then in ``response.output_item.done``
and ``response.completed``. Once no call is open, those two last ones can
change nothing (the call at their slot has ended; ``completed`` is read for
its status, model and usage), yet each 10 MB repeat was held as bytes,
decoded into a ``str`` and parsed into another beside the call's text and
parsed arguments: the peak of a big call on that wire.

``Trim`` is fed such a line's bytes as they arrive and gives them back with
every JSON string longer than ``LONG`` bytes emptied (``""``), so the line
is never held whole. Only the byte after a backslash and the quotes that
end strings matter for finding where a string ends (a ``\\uXXXX`` escape
has neither), so the scan is a ``find`` per quote or escape. The SSE decoder
asks its owner whether to trim (``SSEDecoder.trim``), once a line reaches
``AT`` bytes; the parser says yes only for a dialect's restatements
(``RESTATEMENTS``) while no call is open, so a server that sends a call's
arguments only in ``output_item.done`` keeps them whole.

The ``.done`` itself is the strict check, so its long string cannot just go:
a ``Trim(check=True)`` decodes each emptied string as it streams (a slice
at a time, cut where no escape, surrogate pair or UTF-8 character is split)
and keeps only its length in characters and a SHA-256 of its UTF-8
(``Restated``); the call's buffer is hashed the same way, piece by piece
(``text_digest``), so a ``.done`` of a megabyte is compared with the buffer
without either being held twice. The parser asks for that only while every
open call has a buffer begun (a call whose arguments come only in its
``.done`` keeps them whole).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["AT", "LONG", "Restated", "Trim", "text_digest"]

#: A line is asked about once it has this many bytes (shorter ones are held as they always were):
#: 64 KiB, not a quarter of a megabyte (what a line holds before it is asked is held beside a
#: 1 MB call's buffer and its parse while its repeats stream).
AT = 1 << 16

#: A string longer than this (bytes, escapes included) is emptied.
LONG = 1 << 16

#: The C string scanner of ``json`` (what ``json.loads`` decodes a string with, strict).
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

_QUOTE_OR_ESCAPE = re.compile(rb'["\\]')

#: An emptied string is decoded this many bytes at a time (at most about twice that held).
_SLICE = 1 << 16

#: Bytes that may end a slice when followed by a byte that starts a character: anything but a
#: backslash, the ``u`` of an escape and a hex digit (they may be inside ``\\uXXXX`` or be
#: its end, whose low half may follow), or any of them where no backslash is within six bytes.
_INSIDE_ESCAPE = frozenset(b"\\u0123456789abcdefABCDEF")


@dataclass(frozen=True, slots=True)
class Restated:
    """What a checked ``Trim`` kept of a string it emptied: its decoded length
    in characters and the SHA-256 of its UTF-8 (``surrogatepass``), or
    ``broken`` when it did not decode as a JSON string (the whole line would
    not have parsed)."""

    chars: int
    digest: bytes
    broken: bool = False


def text_digest(pieces: Iterable[str]) -> tuple[int, bytes]:
    """Characters and SHA-256 of the pieces' text joined, hashed a slice at a time (no join, no
    encoded copy of a big piece): what ``Restated`` holds of the same text."""
    sha = hashlib.sha256()
    chars = 0
    for piece in pieces:
        chars += len(piece)
        for at in range(0, len(piece), _SLICE):
            sha.update(piece[at : at + _SLICE].encode("utf-8", "surrogatepass"))
    return chars, sha.digest()


class _Decoded:
    """The text of one JSON string's escaped bytes, fed in order: hashed and counted a slice at a time."""

    __slots__ = ("_tail", "_sha", "_chars", "_broken")

    def __init__(self) -> None:
        self._tail = b""
        self._sha = hashlib.sha256()
        self._chars = 0
        self._broken = False

    def feed(self, data: bytes) -> None:
        tail = self._tail + data if self._tail else data
        at = 0
        while len(tail) - at >= _SLICE:
            cut = _cut(tail, at, at + _SLICE) or _cut(tail, at, len(tail))
            if not cut:  # no place to cut near the slice's end nor the tail's: held with the next bytes
                break
            self._take(tail[at:cut])
            at = cut
        self._tail = tail[at:] if at else tail

    def end(self) -> Restated:
        self._take(self._tail)
        self._tail = b""
        return Restated(self._chars, self._sha.digest(), self._broken)

    def _take(self, data: bytes) -> None:
        if self._broken or not data:
            return
        text = str(data, "utf-8", "replace")
        try:
            decoded, _ = _scanstring('"' + text + '"', 1)
        except ValueError:
            self._broken = True
            return
        self._chars += len(decoded)
        self._sha.update(decoded.encode("utf-8", "surrogatepass"))


def _cut(data: bytes, start: int, end: int) -> int:
    """Where ``data[start:end]`` (escaped bytes of a string; no escape spans ``start``) may end
    so that each side decodes to what it is in the whole: before a byte that starts a character,
    after one that ends no escape's beginning. 0: no such place in its last 64 bytes."""
    for cut in range(end - 1, max(end - 64, start), -1):
        after, before = data[cut], data[cut - 1]
        if 0x80 <= after < 0xC0:
            continue  # inside a character's UTF-8
        if before >= 0x80 or before not in _INSIDE_ESCAPE:
            return cut
        if before != 0x5C and data.find(b"\\", max(cut - 6, start), cut) < 0:
            return cut
    return 0


class Trim:
    """The bytes of one line, in order, with its long JSON strings emptied."""

    __slots__ = ("_inside", "_escaped", "_held", "_held_size", "_dropping", "_check", "_decoded", "restated")

    def __init__(self, check: bool = False) -> None:
        self._inside = False
        self._escaped = False
        self._held: list[bytes] = []  # the open string's bytes, until it ends or passes LONG
        self._held_size = 0
        self._dropping = False
        #: Whether an emptied string is decoded and kept as its ``Restated``.
        self._check = check
        self._decoded: _Decoded | None = None
        #: The ``Restated`` of each string emptied, in order (``check`` only).
        self.restated: list[Restated] = []

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        i, n = 0, len(data)
        while i < n:
            if not self._inside:
                quote = data.find(b'"', i)
                if quote < 0:
                    out.append(data[i:])
                    break
                out.append(data[i : quote + 1])
                i = quote + 1
                self._inside, self._dropping = True, False
            elif self._escaped:  # the byte after a backslash, never a string's end
                self._keep(data[i : i + 1])
                i += 1
                self._escaped = False
            else:
                found = _QUOTE_OR_ESCAPE.search(data, i)
                if found is None:
                    self._keep(data[i:])
                    break
                at = found.start()
                if data[at] == 0x5C:
                    self._keep(data[i : at + 1])
                    self._escaped = True
                    i = at + 1
                    continue
                self._keep(data[i:at])
                i = at + 1
                self._inside = False
                if not self._dropping:
                    out.extend(self._held)
                elif self._decoded is not None:
                    self.restated.append(self._decoded.end())
                    self._decoded = None
                self._held.clear()
                self._held_size = 0
                out.append(b'"')
        return b"".join(out)

    def end(self) -> bytes:
        """What is held of a string the line ended inside (the JSON is broken
        either way; kept as it came unless it was being emptied)."""
        held = b"" if self._dropping else b"".join(self._held)
        self._held.clear()
        self._held_size = 0
        return held

    def _keep(self, piece: bytes) -> None:
        if not piece:
            return
        if self._dropping:
            if self._decoded is not None:
                self._decoded.feed(piece)
            return
        self._held.append(piece)
        self._held_size += len(piece)
        if self._held_size > LONG:
            if self._check:
                self._decoded = _Decoded()
                for held in self._held:
                    self._decoded.feed(held)
            self._held.clear()
            self._held_size = 0
            self._dropping = True
