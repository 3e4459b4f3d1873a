"""Secrets out of everything callstream keeps or shows: the one redaction.

Real providers echo the key they were sent ("Incorrect API key provided:
sk-…"), proxies echo whole ``Authorization`` headers, and the text then
travels into notes, the store, recordings, exports and the terminal. So every
configured key value is registered here when it is read from the environment,
and every sink runs its text through ``redact`` — the store and the ledger in
``dbfile`` (each parameter written), the recorder (each chunk and line),
error messages where they are made, and what is printed. Besides the exact
values, anything shaped like a credential in a header echo (``Bearer …``,
``x-api-key: …``) is cut too, since a proxy may hold a key we never saw.

Process-wide state, on purpose: a key is a fact about the process's
environment, and a sink must not depend on being handed the right list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["REDACTED", "register_secret", "redact", "redact_bytes", "redact_pieces", "secrets_known", "straddles",
           "safe_cut"]

REDACTED = "[redacted]"

#: Shorter values are not treated as secrets: redacting "demo" or "1" would
#: mangle ordinary text, and no provider issues keys that short.
_MIN_SECRET = 8

_SECRETS: set[str] = set()
_pattern: re.Pattern[str] | None = None

#: Credential-shaped echoes: a bearer token, or the value of a key header /
#: a ``key=`` query parameter. Group 1 (the label) is kept.
_SHAPES = re.compile(
    r"(?i)(\bbearer\s+|\b(?:x-api-key|x-goog-api-key|api[-_]?key|authorization)[\"']?\s*[:=]\s*[\"']?"
    r"(?:bearer\s+)?)[A-Za-z0-9._~+/\-]{8,}=*"
)
#: Words one of the shapes needs: a cheap test before the (slower) shape search.
_HINTS = ("bearer", "key", "authorization")
#: The cheap test looks at this many characters at a time (lowered, so an
#: argument buffer is never copied whole to look; ten times faster than a
#: case-blind regex search). 64 KiB, under the size glibc maps on its own
#: (``files.heap``): at a MiB, a 1 MB call's buffer was lowered whole, a
#: megabyte beside the buffer and its parse each time the store wrote it.
_HINT_STEP = 1 << 16
#: Characters that end a credential-shaped token (``_SHAPES``'s value) and a
#: word (so a piece that starts after one sees the same ``\b`` as the whole).
_NOT_TOKEN = re.compile(r"[^\w.~+/\-=]+")
#: How far back ``safe_cut`` looks for a place between two tokens.
_CUT_LOOK = 1 << 16


def register_secret(value: str | None) -> None:
    """Redact ``value`` from now on (a key read from the environment)."""
    global _pattern
    if value is None:
        return
    value = value.strip()
    if len(value) < _MIN_SECRET or value in _SECRETS:
        return
    _SECRETS.add(value)
    ordered = sorted(_SECRETS, key=len, reverse=True)  # a key that contains another goes first
    _pattern = re.compile("|".join(re.escape(s) for s in ordered))


def secrets_known() -> frozenset[str]:
    return frozenset(_SECRETS)


def redact(text: str) -> str:
    """``text`` with every registered secret and credential-shaped echo replaced by ``[redacted]``."""
    if _pattern is not None:
        text = _pattern.sub(REDACTED, text)
    if _hinted(text):
        text = _SHAPES.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def _hinted(text: str) -> bool:
    overlap = max(map(len, _HINTS)) - 1
    for start in range(0, len(text), _HINT_STEP):
        piece = text[max(0, start - overlap) : start + _HINT_STEP].lower()
        if any(hint in piece for hint in _HINTS):
            return True
    return False


def _span() -> int:
    """How far a secret or a credential echo's label reaches across a cut."""
    return max(max((len(s) for s in _SECRETS), default=0), 96)


def safe_cut(text: str, start: int, cut: int) -> int:
    """Where ``text`` may be split, at or before ``cut`` and after ``start``,
    so that ``redact`` of each side alone leaves no part of a secret or a
    credential echo — whatever text may still follow it (prose written to
    the store as it streams, a piece at a time). ``start`` when there is no
    such place yet.

    The last ``_span()`` characters are never cut (a secret may still be
    forming there), a cut falls between two tokens (a ``Bearer`` token runs
    on), and no match within reach of the cut crosses it. A token longer than
    ``_CUT_LOOK`` without a break is cut where it is: that is no credential."""
    span = _span()
    cut = min(cut, len(text) - span)
    while cut > start:
        if not _NOT_TOKEN.match(text, cut - 1):
            last = _last_break(text, max(start, cut - _CUT_LOOK), cut)
            if last is not None:
                cut = last
            elif cut - start < _CUT_LOOK:
                return start
        low = max(0, cut - span)
        window = text[low : cut + span]
        crossing = []
        if _pattern is not None:
            crossing = [low + m.start() for m in _pattern.finditer(window) if m.start() < cut - low < m.end()]
            # the shapes are looked for where the secrets are already cut, as ``redact`` does
            window = _pattern.sub(lambda m: "\x00" * len(m.group()), window)
        crossing += [low + m.start() for m in _SHAPES.finditer(window) if m.start() < cut - low < m.end()]
        if not crossing:
            return cut
        cut = min(crossing)
    return start


def _last_break(text: str, low: int, high: int) -> int | None:
    """The end of the last ``_NOT_TOKEN`` run in ``text[low:high]`` (cut at
    ``high``), or None: looked for from ``high`` back, in windows that grow,
    not as a list of every break in 64 KiB of prose (thousands of ints, half
    a megabyte, held at each cut of a big call's claim)."""
    step = 256
    while high > low:
        start = max(low, high - step)
        end = None
        for found in _NOT_TOKEN.finditer(text, start, high):
            end = found.end()
        if end is not None:
            return end
        high, step = start, step * 4
    return None


def redact_pieces(pieces: Iterable[str], window: int = 1 << 20) -> Iterator[str]:
    """``redact`` of the pieces joined, as pieces of about ``window``
    characters: a text written as it is made (a recorded request that
    carries a 10 MB argument) is redacted without a ``str`` of all of it.
    Each is cut where ``safe_cut`` says a secret cannot straddle it."""
    held: list[str] = []
    size = 0
    for piece in pieces:
        held.append(piece)
        size += len(piece)
        if size < 2 * window:
            continue
        text = "".join(held)
        cut = safe_cut(text, 0, len(text) - window)
        held, size = [text[cut:]], len(text) - cut
        if cut:
            yield redact(text[:cut])
    if held:
        yield redact("".join(held))


def redact_bytes(data: bytes) -> bytes:
    """``redact`` for raw bytes (a recorded chunk). Bytes that are not UTF-8
    are read one byte per character, so ASCII secrets still match and every
    other byte survives as it was."""
    try:
        text, codec = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, codec = data.decode("latin-1"), "latin-1"
    cleaned = redact(text)
    return data if cleaned == text else cleaned.encode(codec)


def straddles(before: bytes, after: bytes) -> bool:
    """Whether a secret (or a credential echo) spans the boundary between two
    chunks, so that redacting each alone would leave a piece of it in both."""
    span = max(max((len(s) for s in _SECRETS), default=0), 96)
    left, right = before[-span:], after[:span]
    return redact_bytes(left + right) != redact_bytes(left) + redact_bytes(right)
