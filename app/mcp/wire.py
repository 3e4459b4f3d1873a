"""What a server sends, read within bounds, before the SDK parses it.

The SDK's stdio client joins every chunk of a line to the text before it
(a 100 MB line is gigabytes of copying, far past any tool timeout) and logs
a traceback on the terminal for a line that is not JSON-RPC; its HTTP client
reads a JSON answer whole. Here:

- a message longer than ``cap`` bytes is never held: its head and tail are
  kept, the rest only counted, and ``salvage`` makes it a result the SDK
  can read — the head of its text with ``_meta[CUT_META]`` saying how many
  bytes were cut (``tools.py`` words it with the one cut marker);
- a line that is not JSON at all (a banner a stdio server prints before it
  speaks JSON-RPC) is handed to ``on_stray`` and ends the connection: the
  server fails with one sentence instead of a traceback;
- a message nested deeper than ``MAX_DEPTH``, or that is not JSON-RPC the SDK
  accepts, answers its request at once with an error marked ``UNREADABLE``
  (the caller knows the server may have acted) instead of leaving it to
  time out.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..stream.limits import MAX_DEPTH, TooDeep, loads

__all__ = ["CUT_META", "UNREADABLE", "DEEP", "TAIL", "LineCutter", "salvage", "unreadable", "classify", "message_id"]

#: The ``_meta`` key of a salvaged result: how many bytes of the answer were cut.
CUT_META = "callstream/cut"
#: The ``data`` key of an error made here for an answer that came but could not be read.
UNREADABLE = "callstream/unreadable"
#: Bytes kept at each end of a message too long to hold.
TAIL = 4096


class LineCutter:
    """Newline-delimited messages out of chunks, none held past ``cap`` bytes.

    ``feed`` returns, in order, ``bytes`` for each whole line up to ``cap``
    and ``(head, tail, size)`` for each longer one (``head`` the first
    ``keep`` bytes, ``tail`` the last ``TAIL``, ``size`` the whole length).
    Linear in what it reads: no chunk is joined to the text before it until
    the line ends.
    """

    def __init__(self, cap: int, keep: int) -> None:
        self.cap, self.keep = cap, keep
        self._parts: list[bytes] = []
        self._size = 0
        self._big = False
        self._head = b""
        self._tail = b""

    def feed(self, chunk: bytes) -> list[bytes | tuple[bytes, bytes, int]]:
        out: list[bytes | tuple[bytes, bytes, int]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._add(piece)
            if end < 0:
                return out
            out.append(self._take())
            start = end + 1

    def close(self) -> list[bytes | tuple[bytes, bytes, int]]:
        """What is left once the stream ended (a last message without its newline)."""
        return [self._take()] if self._size else []

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        self._size += len(piece)
        if self._big:
            self._tail = (self._tail + piece)[-TAIL:]
            return
        self._parts.append(piece)
        if self._size > self.cap:
            whole = b"".join(self._parts)  # at most cap + one chunk, once
            self._head, self._tail, self._parts, self._big = whole[:self.keep], whole[-TAIL:], [], True

    def _take(self) -> bytes | tuple[bytes, bytes, int]:
        taken: bytes | tuple[bytes, bytes, int]
        taken = (self._head, self._tail, self._size) if self._big else b"".join(self._parts)
        self._parts, self._size, self._big, self._head, self._tail = [], 0, False, b"", b""
        return taken


_TAIL_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*}\s*$')
_TEXT = re.compile(rb'"text"\s*:\s*"')
_IS_ERROR = re.compile(rb'"isError"\s*:\s*true')


def _top_level_id(head: bytes) -> Any:
    """The ``id`` member of the outermost object in ``head`` (a prefix of a
    message), or None: a scan of at most 64 KiB tracking strings and depth."""
    depth, i, n = 0, 0, min(len(head), 1 << 16)
    while i < n:
        c = head[i]
        if c == 0x22:  # a string: skip it, and look at it if it is a key of the outermost object
            j = i + 1
            while j < n and head[j] != 0x22:
                j += 2 if head[j] == 0x5C else 1
            if depth == 1 and head[i:j + 1] == b'"id"':
                match = re.match(rb'\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")', head[j + 1:n])
                if match:
                    return json.loads(match.group(1))
            i = j + 1
            continue
        if c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
        i += 1
    return None


def message_id(head: bytes, tail: bytes = b"") -> Any:
    """A message's ``id`` from what is left of it (its head, else its tail), or None."""
    found = _top_level_id(head)
    if found is None and tail:
        match = _TAIL_ID.search(tail)
        if match:
            found = json.loads(match.group(1))
    return found


def salvage(head: bytes, tail: bytes, size: int, limit: int) -> dict[str, Any] | None:
    """A too-long answer as a JSON-RPC result holding the first ``limit``
    bytes of its text and, in ``_meta[CUT_META]``, how many bytes were cut;
    None when its id cannot be found (nothing can be answered)."""
    ident = message_id(head, tail)
    if ident is None:
        return None
    kept = ""
    used = 0
    match = _TEXT.search(head)
    if match:
        body = head[match.end():]
        close = re.search(rb'(?<!\\)(?:\\\\)*"', body)  # the end of the string, if the head holds it
        raw = body[:close.start() + len(close.group(0)) - 1] if close else body
        raw = raw[:limit]
        for _ in range(6):  # a cut inside an escape (\, \uXXXX) or a character: step back
            try:
                kept = json.loads(b'"' + raw + b'"')
                break
            except ValueError:
                raw = raw[:-1]
        used = match.end() + len(raw)
    result: dict[str, Any] = {"content": [{"type": "text", "text": kept}],
                              "isError": bool(_IS_ERROR.search(tail)), "_meta": {CUT_META: max(0, size - used)}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def unreadable(ident: Any, why: str) -> dict[str, Any]:
    """The error that answers a request whose answer came but could not be read."""
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32700, "message": why, "data": {UNREADABLE: why}}}


def classify(line: bytes) -> str | None:
    """Why a line the SDK refused cannot be read: ``stray`` (not JSON: a
    banner, a log line), ``deep`` (nested deeper than MAX_DEPTH), or None
    (JSON, but not a message the SDK accepts)."""
    text = line.strip()
    if not text.startswith((b"{", b"[")):
        return "stray"
    try:
        loads(text)
    except TooDeep:
        return "deep"
    except ValueError:
        return "stray"
    return None


DEEP = f"its answer is nested deeper than {MAX_DEPTH} levels"
