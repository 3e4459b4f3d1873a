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

__all__ = ["REDACTED", "register_secret", "redact", "redact_bytes", "secrets_known", "straddles"]

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
#: Words one of the shapes needs: a cheap test before the (slower) shape search
#: (a search, not ``text.lower()``: a 10 MB argument buffer is not copied to look).
_HINTS = re.compile("bearer|key|authorization", re.IGNORECASE)


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
    if _HINTS.search(text):
        text = _SHAPES.sub(lambda m: m.group(1) + REDACTED, text)
    return text


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
