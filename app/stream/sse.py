"""Incremental Server-Sent Events decoder (WHATWG HTML §9.2.5/§9.2.6).

Written by hand rather than taken from httpx-sse because every Python decoder we
measured deviates from the spec in ways that lose tool calls: the BOM swallows
the first field, invalid UTF-8 raises, events without data are dispatched, and a
sticky id produces spurious empty events (../shared/research/reliability.md §1).
This one works on bytes, so it can sit below any transport, and it never raises
on input.

Speed matters here (every delta of every stream passes through), so line
splitting is done with ``str.replace``/``str.split`` on whole chunks, and a line
that grows across many chunks is kept as a list of pieces, joined once: a 10 MB
``data:`` line costs linear time, not quadratic.

Size is bounded: a line, or one event's data, longer than ``max_size``
characters stops the decoder (``overflow`` says why, and every later byte is
ignored), so a line that never ends costs ``max_size``, not all of memory.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from .limits import size_words

__all__ = ["SSEDecoder", "SSEEvent"]


@dataclass(slots=True)
class SSEEvent:
    """One dispatched event. ``event`` is ``"message"`` when the stream named none."""

    event: str
    data: str
    id: str
    retry: int | None = None


class SSEDecoder:
    """Feed bytes, get the events they complete.

    State kept across chunks: the UTF-8 decoder (a multi-byte character split
    across chunks), a pending partial line, a CR that may be the first half of
    a CRLF, and the event being built. ``close()`` discards an event that never
    got its blank line, as the spec requires.
    """

    __slots__ = (
        "_decoder",
        "_partial",
        "_skip_lf",
        "_started",
        "_data",
        "_event",
        "_last_id",
        "_retry",
        "bytes_seen",
        "head",
        "max_size",
        "overflow",
        "_partial_size",
        "_data_size",
    )

    def __init__(self, max_size: int | None = None) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial: list[str] = []
        self._skip_lf = False
        self._started = False
        self._data: list[str] = []
        self._event = ""
        self._last_id = ""
        self._retry: int | None = None
        #: Total bytes fed, for diagnostics ("the body was 0 bytes").
        self.bytes_seen = 0
        #: The first few hundred characters of the body, kept so that a
        #: non-SSE body (an HTML error page, a JSON error) can be named.
        self.head = ""
        #: The longest line or event data (characters) kept; None: no bound.
        self.max_size = max_size
        #: Why the decoder stopped (a line or an event over ``max_size``), else None.
        self.overflow: str | None = None
        self._partial_size = 0
        self._data_size = 0

    @property
    def reconnection_time(self) -> int | None:
        """The last valid ``retry:`` value, in milliseconds."""
        return self._retry

    def feed(self, data: bytes) -> list[SSEEvent]:
        self.bytes_seen += len(data)
        if self.overflow is not None:
            return []
        text = self._decoder.decode(data)
        return self._feed_text(text)

    def close(self) -> list[SSEEvent]:
        """End of stream: flush the decoder; pending data is discarded."""
        if self.overflow is not None:
            return []
        text = self._decoder.decode(b"", final=True)
        events = self._feed_text(text) if text else []
        self._partial.clear()
        self._data.clear()
        self._event = ""
        return events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if not text:
            return []
        if not self._started:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
        if len(self.head) < 512:
            self.head += text[: 512 - len(self.head)]
        if self._skip_lf:
            self._skip_lf = False
            if text[:1] == "\n":
                text = text[1:]
        if "\r" in text:
            # A CR ending this chunk may pair with an LF starting the next one:
            # treat the CR as the line end now and drop that LF later.
            self._skip_lf = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        parts = text.split("\n")
        if len(parts) == 1:
            if text:
                self._keep(text)
            return []
        events: list[SSEEvent] = []
        first = parts[0]
        if self._partial:
            self._partial.append(first)
            first = "".join(self._partial)
            self._partial.clear()
            self._partial_size = 0
        self._line(first, events)
        last = len(parts) - 1
        for i in range(1, last):
            self._line(parts[i], events)
        tail = parts[last]
        if tail:
            self._keep(tail)
        return events

    def _keep(self, piece: str) -> None:
        """Hold a piece of an unfinished line, unless the line has grown past the limit."""
        self._partial_size += len(piece)
        if self.max_size is not None and self._partial_size > self.max_size:
            self._stop(f"an SSE line longer than {size_words(self.max_size)}")
            return
        self._partial.append(piece)

    def _stop(self, why: str) -> None:
        self.overflow = why
        self._partial.clear()
        self._data = []
        self._partial_size = self._data_size = 0

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if self.overflow is not None:
            return
        if not line:
            if self._data:
                events.append(
                    SSEEvent(self._event or "message", "\n".join(self._data), self._last_id, self._retry)
                )
                self._data = []
                self._data_size = 0
            self._event = ""
            return
        if self.max_size is not None and len(line) > self.max_size:
            self._stop(f"an SSE line longer than {size_words(self.max_size)}")
            return
        if line[0] == ":":
            return
        colon = line.find(":")
        if colon == -1:
            name, value = line, ""
        else:
            name = line[:colon]
            value = line[colon + 1 :]
            if value[:1] == " ":
                value = value[1:]
        if name == "data":
            self._data_size += len(value) + 1
            if self.max_size is not None and self._data_size > self.max_size:
                self._stop(f"an SSE event longer than {size_words(self.max_size)}")
                return
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" not in value:
                self._last_id = value
        elif name == "retry":
            if value and value.isascii() and value.isdigit():
                self._retry = int(value)
        # any other field name is ignored

