"""The request bodies the demo model reads, each read only past what it shares with the last one.

A chat request carries the whole conversation, and the next one carries it again with a message or
three more. At 450 exchanges of a sitting at full speed a body is 385 KB, and reading it took the demo
4.4–6 ms (the depth check, then the C scanner), twice an exchange; 0.1 ms now: a cost that grew with the
conversation inside every exchange's Enter → ready (``make bench-long``'s live session), though it is
the model's, not the client's. Hosted providers keep a conversation's prefix for the same reason
(OpenAI's and Anthropic's prompt caching); the demo keeps the last body it read.

``Bodies.read`` is ``limits.loads`` of a body (a test holds the two equal over runs of bodies that share
prefixes, and bodies that do not parse): the top-level object's members are scanned one by one with
the C scanner, and the end of each element of a top-level list is noted. A body that begins with the
same text as the last one up to such an end (a conversation's list grown at its end) keeps the values
read before up to there and reads the rest: the depth check from there (two levels deep: the object,
the list), then the C scanner. Anything else, or anything that does not parse the short way, is read
whole by ``limits.loads``, whose errors are the ones a client sees.

The values kept are handed out again, not copied: the demo's dialect parsers only read them.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..stream.limits import TooDeep, loads, too_deep_from

__all__ = ["Bodies", "KEEP_MOST"]

_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
#: JSON's whitespace, the only characters allowed between tokens.
_SPACE = " \t\n\r"
#: The longest body kept for the next (bytes): a conversation of 10,000 exchanges is about 8 MB; a body
#: carrying a huge argument or attachment is read whole and nothing of it outlives its request.
KEEP_MOST = 16 * 1024 * 1024
#: A top-level list's element boundary: where it ends, which member, how many of its elements.
_Mark = tuple[int, int, int]


class _Short(Exception):
    """The short way does not read this body: read it whole."""


@dataclass
class _Read:
    """A body read the short way: its text, its members in order, and where each top-level list's
    elements end (sorted by offset)."""

    text: str
    members: list[tuple[str, Any]] = field(default_factory=list)
    marks: list[_Mark] = field(default_factory=list)

    def value(self) -> dict[str, Any]:
        return dict(self.members)  # a key given twice keeps its first place and its last value, as json's


class Bodies:
    """One reader of a server's request bodies, one at a time (the demo's event loop)."""

    def __init__(self) -> None:
        self._last: _Read | None = None

    def read(self, body: bytes) -> Any:
        """The body's JSON value (``limits.loads``'s, its errors included)."""
        if len(body) > KEEP_MOST:
            self._last = None
            return loads(body)
        text = body.decode("utf-8", "replace")
        try:
            read = self._again(text) if self._last is not None else None
            if read is None:
                if too_deep_from(text, 0):
                    raise TooDeep()
                read = _from(text, _Read(text), _skip(text, 0), None)
        except _Short:
            self._last = None
            return loads(text)
        self._last = read
        return read.value()

    def _again(self, text: str) -> _Read | None:
        """The body read from the last one's longest shared start that ends an element, or None."""
        last = self._last
        assert last is not None
        shared = _shared(text, last.text)
        # the last element that ends within the shared text: the text up to its end is the last body's, so
        # what was read of it is what would be read again (the element itself included: a number that
        # goes on in this body has no ``,`` or ``]`` after its old end, and is read whole)
        at = bisect_right(last.marks, shared, key=lambda mark: mark[0])
        if at == 0:
            return None
        end, member, count = last.marks[at - 1]
        if too_deep_from(text[end:], 2):
            raise TooDeep()
        read = _Read(text, last.members[:member], last.marks[:at])
        key, items = last.members[member]
        read.members.append((key, items[:count]))
        return _from(text, read, end, member)


def _shared(a: str, b: str) -> int:
    """How long a start ``a`` and ``b`` share (compared a block at a time, in C)."""
    n = min(len(a), len(b))
    i, step = 0, 1 << 16
    while i < n:
        j = min(i + step, n)
        if a.startswith(b[i:j], i):
            i = j
            continue
        while j - i > 32:
            middle = (i + j) // 2
            if a.startswith(b[i:middle], i):
                i = middle
            else:
                j = middle
        while i < j and a[i] == b[i]:
            i += 1
        return i
    return n


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _value(text: str, i: int) -> tuple[Any, int]:
    try:
        return _scan(text, i)
    except (StopIteration, ValueError, RecursionError):
        raise _Short() from None


def _from(text: str, read: _Read, i: int, inside: int | None) -> _Read:
    """Read ``text`` on from ``i``: inside member ``inside``'s list after an element (its ``,`` or ``]``
    next), or, with ``inside`` None, at the top-level object's ``{``."""
    if inside is None:
        if text[i:i + 1] != "{":
            raise _Short()
        i = _skip(text, i + 1)
        if text[i:i + 1] == "}":
            return _end(text, read, i + 1)
    else:
        i = _items(text, read, i, inside)
        if text[i:i + 1] == "}":
            return _end(text, read, i + 1)
        if text[i:i + 1] != ",":
            raise _Short()
        i = _skip(text, i + 1)
    while True:
        if text[i:i + 1] != '"':
            raise _Short()
        key, i = _value(text, i)
        i = _skip(text, i)
        if text[i:i + 1] != ":":
            raise _Short()
        i = _skip(text, i + 1)
        if text[i:i + 1] == "[":
            read.members.append((key, []))
            i = _skip(text, i + 1)
            if text[i:i + 1] == "]":
                i += 1
            else:
                item, i = _value(text, i)
                _note(read, item, i)
                i = _items(text, read, i, len(read.members) - 1)
        else:
            value, i = _value(text, i)
            read.members.append((key, value))
        i = _skip(text, i)
        if text[i:i + 1] == "}":
            return _end(text, read, i + 1)
        if text[i:i + 1] != ",":
            raise _Short()
        i = _skip(text, i + 1)


def _note(read: _Read, item: Any, end: int) -> None:
    items: list[Any] = read.members[-1][1]
    items.append(item)
    read.marks.append((end, len(read.members) - 1, len(items)))


def _items(text: str, read: _Read, i: int, member: int) -> int:
    """The rest of member ``member``'s list from just after an element; where its ``]`` ends, past space."""
    while True:
        i = _skip(text, i)
        if text[i:i + 1] == "]":
            return _skip(text, i + 1)
        if text[i:i + 1] != ",":
            raise _Short()
        item, i = _value(text, _skip(text, i + 1))
        _note(read, item, i)


def _end(text: str, read: _Read, i: int) -> _Read:
    if _skip(text, i) != len(text):
        raise _Short()
    return read
