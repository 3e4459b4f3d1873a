"""Recordings: every response stream, as it arrived, in NDJSON.

asciicast-like: a versioned header line, then ``[interval_seconds, kind,
data]`` events, one conversation per file, appended turn by turn:

- ``"o"``: a raw chunk exactly as received, as text; ``"b"``: the same, base64,
  where the chunk is not valid UTF-8 on its own;
- ``"m"``: a marker, ``{"kind": ...}``: ``user`` (a message), ``retry``,
  ``turn`` (its index and the request body), ``attempt``, ``end`` (how the
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
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..stream.redact import redact, redact_bytes, straddles

__all__ = ["RecordingWriter", "Recording", "RecordingError", "read_recording", "FORMAT"]

FORMAT = "callstream-recording"


class RecordingWriter:
    """The session's recorder tap, writing one conversation's file."""

    def __init__(self, path: Path, header: dict[str, Any], clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.clock = clock
        self._last: float | None = None
        self._pending: tuple[float, bytes] | None = None
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fresh = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._file = os.fdopen(fd, "a", encoding="utf-8")
        if fresh:
            self._write({"format": FORMAT, "version": 1, "created": time.time(), **header})

    def _write(self, value: Any) -> None:
        self._file.write(redact(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) + "\n")
        self._file.flush()

    def _interval(self, at: float) -> float:
        interval = 0.0 if self._last is None else max(0.0, at - self._last)
        self._last = at
        return round(interval, 6)

    def chunk(self, at: float, data: bytes) -> None:
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
        self._flush()
        self._write([self._interval(self.clock()), "m", {"kind": kind, **info}])

    def close(self) -> None:
        self._flush()
        self._file.close()


class RecordingError(ValueError):
    """The file is neither a recording nor a raw SSE capture; says why."""


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


def read_recording(path: Path, even_interval: float = 0.01, even_chunk: int = 256) -> Recording:
    """A recording, or a raw SSE capture read as one with even timing."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
    first = data.split(b"\n", 1)[0]
    try:
        header = json.loads(first) if first.strip().startswith(b"{") else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return _raw(data, even_interval, even_chunk)
    if header.get("version") != 1:
        raise RecordingError(f"{path}: unsupported recording version {header.get('version')!r}")
    recording = Recording(header)
    now = 0.0
    for number, line in enumerate(data.split(b"\n")[1:], start=2):
        if not line.strip():
            continue
        try:
            interval, kind, value = json.loads(line)
            now += float(interval)
        except (ValueError, TypeError) as exc:
            # a torn last line (the process died mid-write) ends the recording
            if number == data.count(b"\n") + 1:
                break
            raise RecordingError(f"{path}: line {number} is not a recording event ({exc})") from None
        if kind == "o":
            recording.events.append((now, "o", str(value).encode("utf-8")))
        elif kind == "b":
            recording.events.append((now, "o", base64.b64decode(value)))
        elif kind == "m" and isinstance(value, dict):
            recording.events.append((now, "m", value))
    return recording


def _raw(data: bytes, interval: float, size: int) -> Recording:
    """A raw capture: one turn, one attempt, chunks at an even pace."""
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
