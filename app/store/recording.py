"""Recordings: every response stream, as it arrived, in gzip-compressed NDJSON.

asciicast-like: a versioned header line, then ``[interval_seconds, kind,
data]`` events, one conversation per file, appended turn by turn. Lines are
written in batches — at every marker, and within a stream once a batch holds
256 KB or a second of chunks — each batch one gzip member (members append:
the file is one gzip stream, ``zcat`` reads it), so a stream costs a few
writes and far fewer bytes than it had. A process killed mid-stream loses at
most the batch in progress. Plain ``.ndjson`` files (older recordings, the
samples in ``transcripts/``) read the same, and an existing plain file is
appended to plainly.

- ``"o"``: a raw chunk exactly as received, as text; ``"b"``: the same, base64,
  where the chunk is not valid UTF-8 on its own;
- ``"m"``: a marker, ``{"kind": ...}``: ``user`` (a message), ``retry``,
  ``turn`` (its index and the request body: what it adds to the turn's
  before it, ``recorded_requests.py``), ``attempt``, ``end`` (how the
  attempt's stream ended), ``http`` (a failed request), ``cancel``,
  ``results`` (the calls' final states and results, so a replay shows them
  without running anything).

Requests are stored as bodies only: no headers, so no key or Authorization
header ever reaches the file; and every line goes through ``redact``, so a
key the provider echoes in a chunk does not either. A chunk is written when
the next one arrives (or a marker, or the end): a key split across two chunks
is caught at the seam, and those two chunks are then stored as one.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files.dbfile import DataFileError
from ..rules.ids import InvalidId, check_id
from ..stream import jsonwrite
from ..stream.limits import loads
from ..stream.redact import redact, redact_bytes, redact_pieces, straddles
from .recorded_requests import SAME_START, restore, shorten

__all__ = ["RecordingWriter", "Recording", "RecordingError", "read_recording", "recording_path", "FORMAT"]

FORMAT = "callstream-recording"

#: A batch is written once it holds this many characters, or this many seconds of chunks.
_BATCH_CHARS = 256 * 1024
_BATCH_SECONDS = 1.0
_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 1 << 16


def recording_path(directory: Path, conversation: str) -> Path:
    """Where a conversation's recording goes: its older plain file if it has
    one (appended to as it is), else a compressed one."""
    plain = directory / f"{conversation}.ndjson"
    return plain if plain.exists() else directory / f"{conversation}.ndjson.gz"


class RecordingWriter:
    """The session's recorder tap, writing one conversation's file."""

    def __init__(self, path: Path, header: dict[str, Any], clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.clock = clock
        self._last: float | None = None
        self._pending: tuple[float, bytes] | None = None
        self._batch: list[str] = []
        self._batch_chars = 0
        self._batch_since: float | None = None
        #: The last turn's request, whole: the next one is recorded as what it adds (``recorded_requests``).
        self._request: dict[str, Any] | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fresh = not path.exists() or path.stat().st_size == 0
            if fresh:
                self.compressed = path.name.endswith(".gz")
            else:
                with path.open("rb") as existing:
                    self.compressed = existing.read(2) == _GZIP_MAGIC
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as exc:
            raise _unwritable(path, exc) from None
        self._file = os.fdopen(fd, "ab")
        if fresh:
            self._write({"format": FORMAT, "version": 1, "created": time.time(), **header})
            self._commit()

    def _write(self, value: Any) -> None:
        line = redact(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        self._batch.append(line)
        self._batch.append("\n")  # not ``line + "\n"``: a request of 10 MB would be copied to end it
        self._batch_chars += len(line) + 1
        if self._batch_chars >= _BATCH_CHARS:
            self._commit()

    def _commit(self) -> None:
        """Write the batch: one gzip member (or plain lines, for an older plain file)."""
        if not self._batch:
            return
        # encoded and compressed 64 KB at a time: a request body that holds 10 MB of
        # arguments costs no 10 MB copies, and no allocation big enough to leave the
        # allocator holding memory it cannot give back
        packer = zlib.compressobj(1, zlib.DEFLATED, 31) if self.compressed else None
        out: list[bytes] = []
        for line in self._batch:
            for start in range(0, len(line), _PIECE):
                data = line[start : start + _PIECE].encode("utf-8")
                out.append(packer.compress(data) if packer is not None else data)
        if packer is not None:
            out.append(packer.flush())
        self._batch.clear()
        self._batch_chars = 0
        self._batch_since = None
        try:
            self._file.writelines(out)
            self._file.flush()
        except OSError as exc:
            raise _unwritable(self.path, exc) from None

    def _interval(self, at: float) -> float:
        interval = 0.0 if self._last is None else max(0.0, at - self._last)
        self._last = at
        return round(interval, 6)

    def chunk(self, at: float, data: bytes) -> None:
        if self._batch_since is None:
            self._batch_since = at
        elif at - self._batch_since >= _BATCH_SECONDS:
            self._commit()  # a slow stream still reaches the disk every second
        if self._pending is not None:
            pending_at, pending = self._pending
            if straddles(pending, data):
                self._pending = (pending_at, pending + data)
                return
            self._write_chunk(pending_at, pending)
        self._pending = (at, data)

    def _write_chunk(self, at: float, data: bytes) -> None:
        data = redact_bytes(data)
        try:
            self._write([self._interval(at), "o", data.decode("utf-8")])
        except UnicodeDecodeError:
            self._write([self._interval(at), "b", base64.b64encode(data).decode("ascii")])

    def _flush(self) -> None:
        if self._pending is not None:
            self._write_chunk(*self._pending)
            self._pending = None

    def marker(self, kind: str, info: dict[str, Any]) -> None:
        """A marker line (a turn's request among them: it may carry a 10 MB
        argument), written as pieces and committed as the batch fills, so no
        ``str`` of the line is made and no more than a batch of it is held.
        A line cut short by a crash between two commits is a torn last line,
        which the reader already drops. Redacted ``_PIECE`` characters at a
        time: a window of a batch held half a megabyte and its join (a fixed
        cost, the peak of a 1 MB call's next request)."""
        self._flush()
        request = info.get("request")
        if kind == "turn" and isinstance(request, dict):
            short, same = shorten(request, self._request)
            self._request = request
            if same:
                info = {**info, "request": short, SAME_START: same}
        line = jsonwrite.pieces([self._interval(self.clock()), "m", {"kind": kind, **info}])
        for piece in redact_pieces(line, _PIECE):
            self._batch.append(piece)
            self._batch_chars += len(piece)
            if self._batch_chars >= _BATCH_CHARS:
                self._commit()
        self._batch.append("\n")
        self._commit()

    def close(self) -> None:
        """Write what is held and close; a write that fails here was already reported by the one before it."""
        try:
            self._flush()
            self._commit()
        except DataFileError:
            pass
        finally:
            with contextlib.suppress(OSError):
                self._file.close()


def _unwritable(path: Path, exc: OSError) -> DataFileError:
    return DataFileError(f"cannot write the recording {path} ({exc.strerror or exc}): free some space or make it "
                         "writable, or set record = false in the config")


class RecordingError(ValueError):
    """The file is neither a recording nor a raw SSE capture, or a damaged one; says why in one line."""


@dataclass(slots=True)
class Recording:
    header: dict[str, Any]
    #: (time since start in seconds, kind, data) — data is bytes for chunks
    events: list[tuple[float, str, Any]] = field(default_factory=list)
    #: A raw .sse capture: no markers, even timing.
    raw: bool = False

    @property
    def duration(self) -> float:
        return self.events[-1][0] if self.events else 0.0

    @property
    def dialect(self) -> str:
        return str(self.header.get("dialect") or "auto")


_KNOWN_DIALECTS = ("openai-chat", "openai-responses", "anthropic", "gemini", "auto")
#: Header fields that become session settings, and the range each may take.
_HEADER_INTS = {"retries": (0, 10), "max_rounds": (1, 100)}
_MAX_TURN = 10**9


def _header(path: Path, header: dict[str, Any]) -> dict[str, Any]:
    """The header's fields that drive a replay, checked: a hostile recording
    names a dialect like ``../../etc`` or an id that is a path."""
    if header.get("version") != 1:
        raise RecordingError(f"{path}: unsupported recording version {header.get('version')!r}")
    dialect = header.get("dialect", "auto")
    if dialect is not None and dialect not in _KNOWN_DIALECTS:
        raise RecordingError(f"{path}: the header names an unknown dialect {str(dialect)[:40]!r} "
                             f"(known: {', '.join(_KNOWN_DIALECTS)})")
    if "conversation" in header:
        try:
            check_id(header["conversation"])
        except InvalidId as exc:
            raise RecordingError(f"{path}: {exc}") from None
    for name, (low, high) in _HEADER_INTS.items():
        value = header.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high):
            raise RecordingError(f"{path}: the header's {name} must be a whole number from {low} to {high}")
    if header.get("team") is not None and not isinstance(header.get("team"), str):
        raise RecordingError(f"{path}: the header's team must be a string")
    return header


def _marker(value: dict[str, Any]) -> str | None:
    """What is wrong with a marker a replay reads, or None."""
    for name in ("turn", "attempt"):
        if name in value:
            number = value[name]
            if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= _MAX_TURN:
                return f"its {name} is not a turn number"
    if value.get("kind") == "switch" and value.get("dialect") not in _KNOWN_DIALECTS[:4]:
        return f"it switches to an unknown dialect {str(value.get('dialect'))[:40]!r}"
    same = value.get(SAME_START)
    if same is not None and (not isinstance(same, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= _MAX_TURN for n in same.values())):
        return "its same_start is not a count of items for each list"
    if value.get("kind") == "results":
        calls = value.get("calls", [])
        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            return "its calls are not a list of calls"
    return None


def read_recording(path: Path, even_interval: float = 0.01, even_chunk: int = 256) -> Recording:
    """A recording, or a raw SSE capture read as one with even timing.

    Every line is checked before a replay sees it: an interval that is not a
    finite number of seconds (``NaN``, ``1e400``), bad base64, nesting deeper
    than the one depth limit, or a marker with an impossible turn number is a
    ``RecordingError`` naming the line, never a hang or a traceback."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(path, data)
    first = data.split(b"\n", 1)[0]
    try:
        header = loads(first) if first.strip().startswith(b"{") else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return _raw(path, data, even_interval, even_chunk)
    recording = Recording(_header(path, header))
    now = 0.0
    request: dict[str, Any] | None = None  # the last turn's, whole (the next may hold what it adds)
    lines = data.split(b"\n")
    last = len(lines)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            event = loads(line)
            if not isinstance(event, list) or len(event) != 3:
                raise ValueError("not an [interval, kind, data] triple")
            interval, kind, value = event
            if isinstance(interval, bool) or not isinstance(interval, int | float) or not math.isfinite(interval) \
                    or interval < 0:
                raise ValueError(f"the interval {str(interval)[:20]} is not a finite number of seconds")
            if kind == "o" and not isinstance(value, str):
                raise ValueError("a chunk that is not text")
            if kind == "b":
                if not isinstance(value, str):
                    raise ValueError("a chunk that is not base64 text")
                chunk = base64.b64decode(value, validate=True)
            if kind == "m" and isinstance(value, dict):
                problem = _marker(value)
                if problem:
                    raise ValueError(f"a marker: {problem}")
        except (ValueError, TypeError) as exc:
            # a torn last line (the process died mid-write) ends the recording
            if number == last:
                break
            raise RecordingError(f"{path}: line {number} is not a recording event ({exc})") from None
        now += float(interval)
        if kind == "o":
            recording.events.append((now, "o", value.encode("utf-8")))
        elif kind == "b":
            recording.events.append((now, "o", chunk))
        elif kind == "m" and isinstance(value, dict):
            if value.get("kind") == "turn":
                if SAME_START in value:
                    value = {name: item for name, item in value.items() if name != SAME_START}
                    value["request"] = restore(value.get("request"), event[2][SAME_START], request)
                if isinstance(value.get("request"), dict):
                    request = value["request"]
            recording.events.append((now, "m", value))
    return recording


def _gunzip(path: Path, data: bytes) -> bytes:
    """Every member's bytes, in order. A last member cut short (the process
    died mid-write) gives what it holds; its torn last line ends the
    recording as in a plain file. Damaged data is a RecordingError."""
    out: list[bytes] = []
    member = zlib.decompressobj(wbits=31)
    view = memoryview(data)
    try:
        for start in range(0, len(data), 1 << 16):  # in pieces: what a member leaves over stays small
            out.append(member.decompress(view[start : start + (1 << 16)]))
            while member.eof and member.unused_data:
                rest = member.unused_data
                member = zlib.decompressobj(wbits=31)
                out.append(member.decompress(rest))
    except zlib.error as exc:
        raise RecordingError(f"{path}: the compressed data is damaged ({exc})") from None
    return b"".join(out)


#: What makes a file a raw SSE capture: a ``data:`` field at the start of a line (after a BOM).
_SSE_FIELD = re.compile(rb"(?:\A(?:\xef\xbb\xbf)?|[\r\n])data:")


def _raw(path: Path, data: bytes, interval: float, size: int) -> Recording:
    """A raw capture: one turn, one attempt, chunks at an even pace. A file
    with no SSE ``data:`` line at all is neither: a ``RecordingError``."""
    if not _SSE_FIELD.search(data):
        raise RecordingError(f"{path} is not a recording: no callstream-recording header line, and no SSE "
                             "'data:' line a raw capture would have")
    recording = Recording({"format": FORMAT, "version": 1, "dialect": "auto"}, raw=True)
    now = 0.0
    recording.events.append((now, "m", {"kind": "user", "text": "(a recorded stream)"}))
    recording.events.append((now, "m", {"kind": "turn", "turn": 0, "request": None}))
    recording.events.append((now, "m", {"kind": "attempt", "turn": 0, "attempt": 1}))
    for i in range(0, len(data), size):
        now += interval
        recording.events.append((now, "o", data[i : i + size]))
    recording.events.append((now, "m", {"kind": "end", "turn": 0, "attempt": 1, "cause": "eof"}))
    recording.events.append((now, "m", {"kind": "results", "turn": 0, "calls": []}))
    return recording
