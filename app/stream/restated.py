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
"""

from __future__ import annotations

import re

__all__ = ["AT", "LONG", "Trim"]

#: A line is asked about once it has this many bytes (shorter ones are held as they always were).
AT = 1 << 18

#: A string longer than this (bytes, escapes included) is emptied.
LONG = 1 << 16

_QUOTE_OR_ESCAPE = re.compile(rb'["\\]')


class Trim:
    """The bytes of one line, in order, with its long JSON strings emptied."""

    __slots__ = ("_inside", "_escaped", "_held", "_held_size", "_dropping")

    def __init__(self) -> None:
        self._inside = False
        self._escaped = False
        self._held: list[bytes] = []  # the open string's bytes, until it ends or passes LONG
        self._held_size = 0
        self._dropping = False

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
        if self._dropping or not piece:
            return
        self._held.append(piece)
        self._held_size += len(piece)
        if self._held_size > LONG:
            self._held.clear()
            self._held_size = 0
            self._dropping = True
