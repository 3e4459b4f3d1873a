"""The incremental form the live path uses: feed bytes, get updates, close
with a cause. ``assemble`` is the same thing over a finished iterable.

Auto-detection holds back the first frames until one names its dialect, then
replays them; a stream that never says (an HTML error page, an empty body,
an error object alone) still ends with a stated outcome.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from . import restated
from .assembler import Assembler, Update
from .blocks import Block, Turn
from .dialects import DIALECTS, Dialect, detect, make_dialect
from .events import ArgsDelta, Event, ProviderError, ReasoningDelta, StreamMalformed, TextDelta
from .limits import DEFAULT_LIMITS, Limits, full_text, loads, one_line, size_words
from .redact import redact
from .sse import SSEDecoder, SSEEvent

__all__ = ["StreamParser", "assemble"]

#: Frames we are willing to hold back while looking for the dialect.
_DETECT_LIMIT = 16

#: A frame's text this long is let go of before its events apply (``_frames``): 64 KiB, not
#: a megabyte (a 1 MB call's restatement, a little under a MiB, was held beside its parse).
_HELD = 1 << 16
_DROPPED = SSEEvent("message", "", "", None)


class StreamParser:
    """One stream (one attempt): bytes in, block updates out.

    ``feed`` returns the updates the chunk caused; ``finished`` turns true
    once the stream has said all it will (terminal marker, error, broken
    framing), so the caller may stop reading; ``close`` decides the outcome.
    ``at`` is the caller's clock (the core reads none), kept on call timings.
    """

    def __init__(self, dialect: str = "auto", limits: Limits = DEFAULT_LIMITS) -> None:
        if dialect != "auto" and dialect not in DIALECTS:
            make_dialect(dialect)  # raises the ValueError that names the choices
        self._sse = SSEDecoder(limits.event_bytes)
        self._sse.trim = self._restates
        self._body_limit = limits.body_bytes
        self._content_limit = limits.content_bytes
        #: Characters of prose, reasoning and arguments this reply has carried.
        self._content = 0
        #: The whole event a provider error came in (for the details).
        self._error_detail: str | None = None
        self._stopped = False
        self._dialect: Dialect | None = None if dialect == "auto" else make_dialect(dialect)
        self._pending: list[SSEEvent] = []
        self._events: list[Event] = []
        self.assembler = Assembler(dialect if dialect != "auto" else "unknown")

    def _restates(self, head: bytes) -> bool | restated.Trim:
        """Whether a megabyte ``data:`` line starting with ``head`` may be kept
        without its long strings (``restated``): one of the dialect's
        restatements (``RESTATEMENTS``: Responses' ``output_item.done`` and
        ``completed``), while no call is open, when its arguments can change
        nothing; or a call's own end that restates its arguments (``CHECKED``:
        Responses' ``.done``), while every open call has a buffer begun, with
        each long string kept as its length and digest for the strict check
        (``Trim(check=True)``; a call with no buffer takes its arguments from
        the line, which is then read whole). The events before the line have
        been applied by then."""
        dialect = self._dialect
        marks: tuple[bytes, ...] = getattr(dialect, "RESTATEMENTS", ())
        if marks and head.startswith(marks):
            return not self.assembler.open_calls
        checked: tuple[bytes, ...] = getattr(dialect, "CHECKED", ())
        if checked and head.startswith(checked) and self.assembler.open_calls_begun:
            return restated.Trim(check=True)
        return False

    @property
    def dialect(self) -> str:
        return self.assembler.dialect

    @property
    def blocks(self) -> list[Block]:
        return self.assembler.blocks

    @property
    def finished(self) -> bool:
        return self.assembler.finished

    def feed(self, data: bytes, at: float | None = None) -> list[Update]:
        if self._stopped:
            return []
        sse = self._sse
        frames = sse.feed(data)
        if frames:
            self.assembler.now = at
            self._frames(frames)
        elif sse.overflow is None and sse.bytes_seen <= self._body_limit:
            return []  # a chunk that ended no event: nothing changed (most chunks of a fast stream)
        if self._stopped:
            pass
        elif self._sse.overflow is not None:
            self._stop(f"{self._sse.overflow} (limits.event_bytes in the config)")
        elif self._sse.bytes_seen > self._body_limit:
            self._stop(f"the response body passed {size_words(self._body_limit)} (after decompression; "
                       "limits.body_bytes in the config)")
        return self._drain()

    def _stop(self, why: str) -> None:
        """A limit was hit: the stream ends here as malformed, saying which limit."""
        self._stopped = True
        self.assembler.apply(StreamMalformed(f"the stream was stopped: {why}"))

    def close(self, cause: str = "eof", at: float | None = None, detail: str | None = None) -> Turn:
        """Decide the turn. ``cause`` is how the body ended: ``eof`` (cleanly:
        the transport saw the body's end), ``disconnect`` (a reset or an
        incomplete body), ``timeout`` or ``cancelled``."""
        self.assembler.now = at
        frames = self._sse.close()
        if frames:
            self._frames(frames)
        if self._dialect is None and not self.assembler.finished:
            self._undetected()
        if cause == "eof" and self._dialect is not None and not self.assembler.finished:
            # "eof" is the transport's clean end (the body ended; a reset is
            # "disconnect"): the one ending a dialect may take as its marker
            self._dialect.body_ended(self._events)
            for event in self._events:
                self.assembler.apply(event)
            self._events.clear()
        if detail is None and self._sse.bytes_seen == 0 and cause == "eof":
            detail = "the response body was empty"
        elif detail is None and not self.assembler.blocks and self._dialect is None and cause == "eof":
            detail = _describe_non_sse(self._sse.head)
        turn = self.assembler.close(cause, detail)
        if turn.outcome == "provider_error" and turn.detail is None:
            turn.detail = full_text(self._error_detail)
        return turn

    def updates(self) -> list[Update]:
        """Updates produced by ``close`` (the TurnClosed among them)."""
        return self._drain()

    def _drain(self) -> list[Update]:
        updates = self.assembler.updates
        if updates:
            self.assembler.updates = []
        return updates

    def _frames(self, frames: list[SSEEvent]) -> None:
        dialect = self._dialect
        if dialect is None:
            self._pending.extend(frames)
            for frame in self._pending:
                name = detect(frame)
                if name is not None:
                    dialect = self._dialect = make_dialect(name)
                    self.assembler.dialect = name
                    frames, self._pending = self._pending, []
                    break
            else:
                if len(self._pending) >= _DETECT_LIMIT:
                    self._undetected()
                return
        apply = self.assembler.apply
        out = self._events
        # by index, not ``enumerate``: its cached result tuple keeps the last
        # frame (a megabyte frame's text) alive until the next one is read
        for at in range(len(frames)):
            frame = frames[at]
            big = len(frame.data) >= _HELD
            if big:
                frames[at] = _DROPPED
            try:
                dialect.frame(frame, out)
            except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
                # a frame of the right dialect with an impossible shape (a list
                # where an object belongs...): the wire is broken, say so
                out.clear()
                out.append(StreamMalformed(f"a {dialect.name} frame had an unexpected shape ({type(exc).__name__})"))
            if big and not any(type(event) is ProviderError for event in out):
                # a frame of megabytes (a restatement of a call's arguments): its text goes once
                # decoded, not after its events apply (a call's parse beside it was one copy more)
                frame = _DROPPED
            if out:
                # a big frame's events are let go of as they apply: Gemini's whole call (``args``, an
                # object) stayed in ``out`` beside the text made of it and that text's parse at its end
                for event in out if not big else _popped(out):
                    kind = type(event)
                    if kind is ArgsDelta:
                        if type(event.fragment) is str:  # type: ignore[union-attr]
                            self._content += len(event.fragment)  # type: ignore[union-attr]
                    elif kind is TextDelta or kind is ReasoningDelta:
                        self._content += len(event.text)  # type: ignore[union-attr]
                    elif kind is ProviderError and self._error_detail is None:
                        self._error_detail = event.detail or frame.data  # type: ignore[union-attr]
                    apply(event)
                out.clear()
                if self._content > self._content_limit and not self._stopped:
                    self._stop(f"the reply's text and arguments passed {size_words(self._content_limit)} "
                               "(limits.content_bytes in the config)")
                    return

    def _undetected(self) -> None:
        """No frame named a dialect: say what the frames were."""
        for frame in self._pending:
            try:
                payload = loads(frame.data)
            except (ValueError, RecursionError):
                snippet = frame.data[:117] + "..." if len(frame.data) > 120 else frame.data
                self.assembler.apply(StreamMalformed(f"event data is not JSON: {snippet!r}"))
                return
            if isinstance(payload, dict) and payload.get("error"):
                error = payload["error"]
                message = error.get("message") if isinstance(error, dict) else str(error)
                self._error_detail = self._error_detail or frame.data
                self.assembler.apply(ProviderError(one_line(redact(str(message or "the provider reported an error")))))
                return
        if self._pending:
            self.assembler.apply(StreamMalformed("the stream's frames match no known provider format"))
        self._pending = []


def _popped(events: list[Event]) -> Iterator[Event]:
    """``events`` in order, each taken out of the list as it is given (the list ends empty): an
    event that applied is held by nothing here once the next one is given."""
    events.reverse()
    while events:
        yield events.pop()


def _describe_non_sse(head: str) -> str:
    text = head.strip()
    if not text:
        return "the response body held no server-sent events"
    first = text.splitlines()[0][:80]
    kind = "an HTML page" if text[:1] == "<" else "a JSON document" if text[:1] in "{[" else "text"
    return f"the response body held no server-sent events; it is {kind} starting {first!r}"


def assemble(chunks: Iterable[bytes], dialect: str = "auto") -> Turn:
    """Assemble a whole recorded stream into its turn (no dispatch, no I/O)."""
    parser = StreamParser(dialect)
    for chunk in chunks:
        parser.feed(chunk)
    return parser.close()
