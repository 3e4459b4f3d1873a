"""The bounds on untrusted input, each defined once: how deep JSON may nest,
how long one SSE line or event and one response body may be, how much of a
tool's output is kept, and how long a provider's message may be on one line.

Everything that parses or walks JSON from outside (event payloads, error
bodies, tool results, stored and imported transcripts, the ledger's
canonical form) goes through ``loads``/``check_depth`` here, so nesting
deeper than ``MAX_DEPTH`` is a stated failure (``TooDeep``, a ValueError)
rather than a ``RecursionError`` somewhere down a stack. The byte limits are
defaults; ``[limits]`` in the config overrides them (``app/settings/limits.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

__all__ = ["MAX_DEPTH", "TooDeep", "loads", "check_depth", "too_deep_from", "Limits", "DEFAULT_LIMITS", "one_line",
           "cut_marker", "MESSAGE_LINE", "size_words", "DETAIL_CHARS", "full_text"]

#: The deepest JSON nesting callstream reads or walks (containers, counted
#: from 1 at the outermost). Real payloads and tool arguments stay far below
#: it; Python's own recursion limit is far above it.
MAX_DEPTH = 100


class TooDeep(ValueError):
    """JSON nested deeper than MAX_DEPTH."""

    def __init__(self) -> None:
        super().__init__(f"nesting too deep (deeper than {MAX_DEPTH} levels)")


#: Every byte but a quote or a bracket, deleted by ``bytes.translate`` (UTF-8's multi-byte sequences
#: never hold these four, so what is left of any text is its quotes and brackets, in order).
_NOT_QUOTE_OR_BRACKET = bytes(c for c in range(256) if c not in b'"[]{}')
#: A bracket's step in depth, by byte.
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def too_deep_from(text: str | bytes | bytearray, depth: int) -> bool:
    """Whether JSON text, read from a point outside any string at nesting ``depth``, goes deeper than
    MAX_DEPTH, read from its brackets outside strings (a piece of a body whose start was checked before:
    the demo model reads only what a request adds to the last, ``app/demo/bodies.py``).

    In C passes over the text, then one over what is left of it: an escaped backslash, then an
    escaped quote, cannot open or close a string, so both go; then all but the quotes and brackets;
    between the quotes, what is left is inside strings. (A regular expression that skipped strings
    took 6 ms on a 360 KB request, the demo model's every request in a long sitting; this, 2.5 ms.)"""
    if isinstance(text, str):
        if depth + text.count("[") + text.count("{") <= MAX_DEPTH:
            return False  # cannot nest deeper than it has openers (the common case: a small event)
        text = text.encode("utf-8", "surrogatepass")
    elif depth + text.count(b"[") + text.count(b"{") <= MAX_DEPTH:
        return False
    kept = text.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_QUOTE_OR_BRACKET)
    brackets = b"".join(kept.split(b'"')[::2])
    return max(accumulate(map(_STEP.__getitem__, brackets), initial=depth), default=0) > MAX_DEPTH


#: The C scanner json.loads ends in: (value, end) of the JSON value at an index.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_OPENERS = ("{", "[")


def loads(text: str | bytes, decoder: json.JSONDecoder | None = None) -> Any:
    """``json.loads`` (or ``decoder.decode``) that refuses nesting deeper than MAX_DEPTH (``TooDeep``)."""
    if too_deep_from(text, 0):
        raise TooDeep()
    if not isinstance(text, str):
        text = text.decode("utf-8", "replace")
    if decoder is None and text[:1] in _OPENERS:
        # the common case, an object with nothing around it: the C scanner
        # straight away (json.loads's wrappers cost as much as the scan of a
        # small event); anything else, errors included, goes the long way
        try:
            value, end = _scan(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return value
    try:
        return json.loads(text) if decoder is None else decoder.decode(text)
    except RecursionError:  # pragma: no cover - the scan above makes this unreachable
        raise TooDeep() from None


def check_depth(value: Any) -> Any:
    """``value`` itself, or ``TooDeep`` if it nests deeper than MAX_DEPTH (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise TooDeep()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))
    return value


@dataclass(frozen=True, slots=True)
class Limits:
    """Byte limits, each stated when it is hit."""

    #: One SSE line, or one event's data: a line that never ends stops here.
    event_bytes: int = 32 * 1024 * 1024
    #: A whole response body after decompression (a gzip bomb of framing stops
    #: here). Generous: a 10 MB argument in 4-character fragments is ~330 MB of stream.
    body_bytes: int = 512 * 1024 * 1024
    #: What one reply may carry of prose, reasoning and arguments, held in
    #: memory as it grows (a gzip bomb of text stops here); a 10 MB argument fits.
    content_bytes: int = 32 * 1024 * 1024
    #: What a tool's output may be; the rest is cut with a visible marker.
    tool_output_bytes: int = 1024 * 1024


DEFAULT_LIMITS = Limits()

#: How long a provider's or proxy's message may be in a note, a card or the
#: history sent back to the model; the whole text stays in the details.
MESSAGE_LINE = 300


def one_line(text: str, limit: int = MESSAGE_LINE) -> str:
    """``text`` as one line (whitespace runs, newlines included, become one space), capped with ``…``."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


#: How much of a provider's or proxy's whole error text the details keep.
DETAIL_CHARS = 20_000


def full_text(text: str | None) -> str | None:
    """A provider's or proxy's whole error text (an HTTP error body, an error
    event inside a stream), for the details beside its one line: redacted,
    JSON laid out (if it parses within the depth limit; else as it came),
    capped at ``DETAIL_CHARS`` with a cut marker. The one definition
    every surface uses (stored with the turn; ``ask --json``, the export and
    the TUI's details show it, inert)."""
    from .redact import redact

    if text is None or not text.strip():
        return None
    text = text.strip()
    if text[:1] in "[{":
        try:
            text = json.dumps(loads(text), ensure_ascii=False, indent=2)
        except ValueError:
            pass
    text = redact(text)
    if len(text) > DETAIL_CHARS:
        text = text[:DETAIL_CHARS] + "\n" + cut_marker(len(text) - DETAIL_CHARS)
    return text


def size_words(count: int) -> str:
    """A byte count as people say it (32 MiB, 640 KiB, 1500 bytes)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale} {unit}"
    return f"{count} bytes"


def cut_marker(cut: int) -> str:
    """What replaces the end of a text that exceeded its limit."""
    return f"[… {cut} bytes cut]"
