"""Incremental Server-Sent Events decoder (WHATWG HTML §9.2.5/§9.2.6).

Written by hand rather than taken from httpx-sse because every Python decoder we
measured deviates from the spec in ways that lose tool calls: the BOM swallows
the first field, invalid UTF-8 raises, events without data are dispatched, and a
sticky id produces spurious empty events (../shared/research/reliability.md §1).
This one works on bytes, so it can sit below any transport, and it never raises
on input.

Speed matters here (every delta of every stream passes through): a chunk that
ends no line is only held (its bytes, not yet decoded); a chunk that ends some
is decoded up to its last line end in one call (UTF-8 never puts a line end
inside a character, so decoding whole lines is decoding the stream), and
split with ``str.replace``/``str.split``. A line that grows across many chunks
is kept as a list of byte pieces, joined once: a 10 MB ``data:`` line costs
linear time, not quadratic.

Size is bounded: a line longer than ``max_size`` bytes, or one event's data
longer than ``max_size`` characters, stops the decoder (``overflow`` says why, and every later byte is
ignored), so a line that never ends costs ``max_size``, not all of memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import restated
from .limits import size_words

__all__ = ["SSEDecoder", "SSEEvent"]

#: A chunk shorter than this is sliced to be decoded; a longer one is read through a memoryview.
_SMALL = 1 << 16

#: Lines this long in all are read one at a time (``_feed_long``): decoded whole and split, a
#: 10 MB ``data:`` line was the joined bytes, their text, the split line and its value at once.
#: A quarter of a megabyte, not a megabyte: a 1 MB call's restatement (Responses'
#: ``function_call_arguments.done``, Gemini's whole call) fell just short of that.
_HUGE = 1 << 18

#: The chunks of an unfinished line are joined into one once those since the last join reach
#: this many bytes (``files.heap.THRESHOLD``, from which glibc maps a block on its own): a
#: megabyte line held as 16 KiB chunks left a megabyte hole in the heap once joined, resident
#: beside the line's text and its parse.
_BIG = 128 * 1024


@dataclass(slots=True)
class SSEEvent:
    """One dispatched event. ``event`` is ``"message"`` when the stream named none."""

    event: str
    data: str
    id: str
    retry: int | None = None
    #: What a checked trim kept of the long strings it emptied from the event's lines, in order
    #: (``restated.Trim(check=True)``: the strings are ``""`` in ``data``).
    restated: tuple[restated.Restated, ...] = ()


class SSEDecoder:
    """Feed bytes, get the events they complete.

    State kept across chunks: the bytes of a pending partial line (a multi-byte
    character split across chunks is among them, whole once the line ends), a
    CR that may be the first half of a CRLF, and the event being built.
    ``close()`` discards an event that never got its blank line, as the spec
    requires.
    """

    __slots__ = (
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
        "_loose",
        "_loose_size",
        "_data_size",
        "_heading",
        "trim",
        "_trim",
        "_restated",
    )

    def __init__(self, max_size: int | None = None) -> None:
        self._partial: list[bytes] = []
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
        #: How many trailing pieces of ``_partial`` are not joined yet, and their bytes (``_hold``).
        self._loose = 0
        self._loose_size = 0
        self._data_size = 0
        #: Still filling ``head`` (or before the BOM check): ``_start`` has work to do.
        self._heading = True
        #: Asked, with the first bytes of a ``data:`` line's value, once the line
        #: passes ``restated.AT`` bytes: True (or the ``Trim`` to use) to keep it
        #: without its long strings (``restated``; the parser's ``_restates``).
        #: None: lines are kept whole.
        self.trim: Callable[[bytes], bool | restated.Trim] | None = None
        #: The unfinished line's answer: None not asked yet, False no, else its ``Trim``.
        self._trim: restated.Trim | bool | None = None
        #: The ``Restated`` of the event being built's trimmed lines (``SSEEvent.restated``).
        self._restated: list[restated.Restated] = []

    @property
    def reconnection_time(self) -> int | None:
        """The last valid ``retry:`` value, in milliseconds."""
        return self._retry

    def feed(self, data: bytes) -> list[SSEEvent]:
        self.bytes_seen += len(data)
        if self.overflow is not None or not data:
            return []
        if self._partial and self.trim is not None:
            data = self._trimmed(data)
        end = data.rfind(b"\n") + 1
        cr = data.rfind(b"\r", end) + 1  # only a CR after the last LF can end the last line
        if cr:
            end = cr
        partial = self._partial
        limit = self.max_size
        if not end:  # no line ends in this chunk: nothing to decode yet (most chunks)
            size = self._partial_size + len(data)
            if limit is not None and size > limit:
                self._stop(f"an SSE line longer than {size_words(limit)}")
            else:
                self._partial_size = size
                self._hold(data)
            return []
        if partial:
            end += self._partial_size
            partial.append(data)
            data = b"".join(partial)
            partial.clear()
            self._partial_size = self._loose = self._loose_size = 0
        if (limit is not None and end > limit) or end >= _HUGE:
            return self._feed_long(data, end)
        size = len(data)
        if end == size:
            return self._feed_text(data.decode("utf-8", "replace"))
        # the lines, then what is left of an unfinished one (a slice of a small chunk and its
        # ``decode`` are cheaper than a memoryview and ``str()``; a big one is not copied to be decoded)
        if size < _SMALL:
            events = self._feed_text(data[:end].decode("utf-8", "replace"))
        else:
            events = self._feed_text(str(memoryview(data)[:end], "utf-8", "replace"))
        if self.overflow is None:
            size -= end  # ``_keep``, inlined: nearly every chunk that ends a line starts the next
            if limit is not None and size > limit:
                self._stop(f"an SSE line longer than {size_words(limit)}")
            else:
                self._partial_size = size
                self._hold(data[end:])
        return events

    def _hold(self, piece: bytes) -> None:
        """Append ``piece`` to the unfinished line; the pieces since the last
        join are joined into one once they reach ``_BIG`` bytes (adjacent
        pieces only: the bytes never change; a stale count joins fewer or
        more of them)."""
        partial = self._partial
        partial.append(piece)
        self._loose += 1
        self._loose_size += len(piece)
        if self._loose_size >= _BIG:
            loose = min(self._loose, len(partial))
            if loose > 1:
                partial[-loose:] = [b"".join(partial[-loose:])]
            self._loose = self._loose_size = 0

    def close(self) -> list[SSEEvent]:
        """End of stream: pending data (an unfinished line, an event without
        its blank line) is discarded, as the spec requires."""
        if self.overflow is None and self._partial:
            self._start(b"".join(self._partial).decode("utf-8", "replace"))
        self._partial.clear()
        self._partial_size = self._loose = self._loose_size = 0
        self._data.clear()
        self._restated.clear()
        self._event = ""
        return []

    def _start(self, text: str) -> str:
        """``text`` without the stream's BOM, noted in ``head`` while that is short."""
        if not self._started:
            self._started = True
            if text[:1] == "\ufeff":
                text = text[1:]
        if len(self.head) < 512:
            self.head += text[: 512 - len(self.head)]
        return text

    def _feed_text(self, text: str) -> list[SSEEvent]:
        """Whole lines: ``text`` ends with a line end."""
        if self._heading:
            text = self._start(text)
            self._heading = len(self.head) < 512
        if self._skip_lf:
            self._skip_lf = False
            if text[:1] == "\n":
                text = text[1:]
        if "\r" in text:
            # A CR ending this chunk may pair with an LF starting the next one:
            # treat the CR as the line end now and drop that LF later.
            self._skip_lf = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        events: list[SSEEvent] = []
        parts = text.split("\n")
        parts.pop()  # the "" after the final line end
        data = self._data
        size = self._data_size  # kept here, written back before anything else reads it
        limit = self.max_size
        for line in parts:
            # the two lines of almost every event, read here; the rest in _line
            if line[:6] == "data: ":
                value = line[6:]
                size += len(value) + 1
                if limit is not None and size > limit:
                    self._stop(f"an SSE event longer than {size_words(limit)}")
                    return events
                data.append(value)
            elif not line:
                if data:
                    events.append(SSEEvent(self._event or "message", data[0] if len(data) == 1 else "\n".join(data),
                                           self._last_id, self._retry, self._took()))
                    data = self._data = []
                    size = 0
                self._event = ""
            elif line[:7] == "event: ":
                self._event = line[7:]
            else:
                self._data_size = size
                self._line(line, events)
                if self.overflow is not None:
                    return events
                data, size = self._data, self._data_size
        self._data_size = size
        return events

    def _took(self) -> tuple[restated.Restated, ...]:
        """The event being dispatched's ``restated`` (and none for the next one)."""
        if not self._restated:
            return ()
        took = tuple(self._restated)
        self._restated.clear()
        return took

    def _trimmed(self, data: bytes) -> bytes:
        """``data`` with the unfinished line's part trimmed when its owner said so
        (``trim``): asked once the line passes ``restated.AT`` bytes, when the
        lines before it have been read and their events applied."""
        nl, cr = data.find(b"\n"), data.find(b"\r")
        stop = nl if cr < 0 else cr if nl < 0 else min(nl, cr)
        part = data if stop < 0 else data[:stop]
        trim = self._trim
        if trim is None and self._partial_size + len(part) >= restated.AT:
            trim = self._trim = self._ask()
        if isinstance(trim, restated.Trim):
            kept = trim.feed(part)
            if stop >= 0:
                data = kept + trim.end() + data[stop:]
                self._restated += trim.restated
            else:
                data = kept
        if stop >= 0:
            self._trim = None  # the line ends here: the next one is asked afresh
        return data

    def _ask(self) -> restated.Trim | bool:
        """Whether to trim the unfinished line, and its ``partial`` trimmed so far if so."""
        assert self.trim is not None
        head = b""  # the line's first bytes: its pieces are not joined to look (a quarter of a megabyte)
        for piece in self._partial:
            head += piece[: 262 - len(head)]
            if len(head) >= 262:
                break
        if not head.startswith(b"data:"):
            return False
        value = head[6:] if head[5:6] == b" " else head[5:]
        answer = self.trim(value[:256])
        if not answer:
            return False
        trim = answer if isinstance(answer, restated.Trim) else restated.Trim()
        kept = b"".join([trim.feed(piece) for piece in self._partial])
        self._partial[:] = [kept]
        self._partial_size = len(kept)
        self._loose = self._loose_size = 0
        return trim

    def _feed_long(self, data: bytes, end: int) -> list[SSEEvent]:
        """Whole lines of more than ``max_size`` (or ``_HUGE``) bytes in all:
        each is measured in bytes before it is decoded, and one too long stops
        the decoder (after the lines before it were read). A long ``data:``
        line has its value decoded straight from the bytes (``_data_line``)."""
        rest = data[end:]
        events: list[SSEEvent] = []
        region = memoryview(data)[:end]
        start = 0
        limit = self.max_size
        while start < end:
            nl = data.find(b"\n", start, end)
            cr = data.find(b"\r", start, end)
            stop = nl if cr == -1 or (nl != -1 and nl < cr) else cr
            if limit is not None and stop - start > limit:
                self._stop(f"an SSE line longer than {size_words(limit)}")
                return events
            # the line with its own line end (a CR before an LF is one line end: _feed_text pairs them)
            after = stop + 2 if data[stop : stop + 2] == b"\r\n" else stop + 1
            if (stop - start >= _SMALL and not self._skip_lf and after - stop == 1 + (
                    data[stop] == 13) and data.startswith(b"data: ", start)):  # a lone CR ending it: _feed_text
                if self._heading:  # the head is text: the line's first characters, as _feed_text keeps them
                    self._start(str(region[start : start + 4 * 512], "utf-8", "ignore"))
                    self._heading = len(self.head) < 512
                self._data_line(str(region[start + 6 : stop], "utf-8", "replace"))
            else:
                events.extend(self._feed_text(str(region[start:after], "utf-8", "replace")))
            if self.overflow is not None:
                return events
            start = after
        if rest:
            self._keep(rest)
        return events

    def _data_line(self, value: str) -> None:
        """A ``data:`` line's value, what ``_feed_text`` makes of the line
        (the stream's start and a pending CR already dealt with by the caller)."""
        self._data_size += len(value) + 1
        if self.max_size is not None and self._data_size > self.max_size:
            self._stop(f"an SSE event longer than {size_words(self.max_size)}")
            return
        self._data.append(value)

    def _keep(self, piece: bytes) -> None:
        """Hold a piece of an unfinished line, unless the line has grown past the limit."""
        self._partial_size += len(piece)
        if self.max_size is not None and self._partial_size > self.max_size:
            self._stop(f"an SSE line longer than {size_words(self.max_size)}")
            return
        self._hold(piece)

    def _stop(self, why: str) -> None:
        self.overflow = why
        self._partial.clear()
        self._restated.clear()
        self._data = []
        self._partial_size = self._data_size = self._loose = self._loose_size = 0

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if self.overflow is not None:
            return
        if not line:
            if self._data:
                events.append(
                    SSEEvent(self._event or "message", "\n".join(self._data), self._last_id, self._retry, self._took())
                )
                self._data = []
                self._data_size = 0
            self._event = ""
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

