"""A request's JSON written from the text of the one before it, where the two are the same.

Each request carries the whole history, and each is written anew: at 500
exchanges a request is about 430 KB, and its JSON took 20–40 ms to write,
twice an exchange, on the event loop (``make bench-long``'s live session:
the one cost of a turn that kept growing with the conversation). A
``Reuse`` keeps the JSON text of each item of the lists at the top of the
last value it wrote (``messages``, ``input``, ``contents``, ``tools``): the
next value's items that are the same as the last one's, from the start, are
written from that text, and only the rest is encoded.

"The same" is strict: the same types as well as equal values, keys in the
same order (Python's ``==`` holds ``1``, ``1.0`` and ``True`` equal, and
dicts equal whatever their order; their JSON differs). An item whose text
is longer than ``jsonwrite.PIECE`` characters (a 10 MB argument, an
attachment's base64) keeps no text: it is written a piece at a time every time, as
before, so no copy of its size is held. What is kept is about the history's
text (0.4 MB at 500 exchanges), beside the history itself.

The text written is exactly ``jsonwrite.pieces``'s (a property test holds
the two together over runs of values).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring
from typing import Any, cast

from .identical import same_start
from .jsonwrite import PIECE, JSONText, LazyString, batched, key_text, pieces, small_text

__all__ = ["Reuse"]

#: Per list of the last value: its items, and the text of each (``None``: not small, not kept).
_Kept = dict[str, tuple[list[Any], list[bytes | None]]]


class Reuse:
    """The writer of one kind of value in turn (a client's request bodies): thread-safe, a value at a
    time (the last one written is what the next is compared with)."""

    def __init__(self) -> None:
        self._kept: _Kept = {}
        self._lock = threading.Lock()

    def writer(self, value: Any) -> Callable[[], Iterator[bytes]]:
        """What writes ``value`` as ``jsonwrite.chunks`` does, as often as it is called (a body is
        counted, then sent): the items it shares with the last value are taken from their text now,
        and its own kept for the next."""
        if type(value) is not dict:
            return lambda: batched(pieces(value))
        with self._lock:
            last = self._kept
            kept: _Kept = {}
            for key, item in value.items():
                if type(item) is list and item:
                    kept[key] = (item, _texts(item, last.get(key)))
            self._kept = kept
        return lambda: batched(_written(value, kept))


def _texts(items: list[Any], last: tuple[list[Any], list[bytes | None]] | None) -> list[bytes | None]:
    """The text of each item: the last value's where the lists agree from the start, else written now."""
    texts: list[bytes | None] = []
    if last is not None:
        old_items, old_texts = last
        # the items that are the very objects the last list held, found in C (a request's history is
        # its builder's last build's items again, ``dialects/built.py``: all but the newest are); then ``same``
        texts = old_texts[:same_start(old_items, items)]
        for old, text, new in zip(old_items[len(texts):], old_texts[len(texts):], items[len(texts):],
                                  strict=False):
            if not same(old, new):
                break
            texts.append(text)
    for item in items[len(texts):]:
        texts.append(_kept_text(item))
    return texts


def _kept_text(item: Any) -> bytes | None:
    """The text kept of a new item, as the UTF-8 it is sent as (encoded once, not with the whole body
    at every request: 0.4 ms a request at 450 exchanges, the history's text holding a non-ASCII
    character, measured with cProfile): json's own writing of it when it is small (``small_text``); else,
    when it holds a ``LazyString`` but is written in at most ``PIECE`` characters (an assistant message
    with calls on the OpenAI wires: its arguments are ``JSONText``), its pieces joined, written once
    here instead of at every later request (at 500 exchanges, a twentieth of a turn's time on the
    event loop, measured with py-spy); ``None`` for a larger one or one json refuses (the writing of
    the body refuses it, as before)."""
    if type(item) not in (dict, list, tuple):
        return None
    text = small_text(item)
    if text is not None:
        return text.encode("utf-8")
    gathered: list[str] = []
    size = 0
    try:
        for piece in pieces(item):
            size += len(piece)
            if size > PIECE:
                return None
            gathered.append(piece)
    except (TypeError, ValueError):
        return None
    return "".join(gathered).encode("utf-8")


#: How many kept texts are written as one piece (at most ``PIECE`` characters each, so a piece stays
#: bounded; a piece an item, twice an exchange, was a tenth of a long sitting's request writing).
_RUN = 32


def _written(value: dict[Any, Any], kept: _Kept) -> Iterator[str | bytes]:
    if not value:
        yield "{}"
        return
    first = True
    for key, item in value.items():
        yield ("{" if first else ",") + encode_basestring(key_text(key)) + ":"
        first = False
        texts = kept.get(key)
        if texts is None or texts[0] is not item:
            yield from pieces(item)
            continue
        known = texts[1]
        if None not in known:  # every item has its text (the common case): a run of them at a time
            whole = cast("list[bytes]", known)
            for start in range(0, len(whole), _RUN):
                yield (b"," if start else b"[") + b",".join(whole[start:start + _RUN])
            yield "]"
            continue
        for index, (sub, text) in enumerate(zip(item, known, strict=True)):
            yield "," if index else "["
            if text is None:
                yield from pieces(sub)
            else:
                yield text
        yield "]"
    yield "}"


def same(old: Any, new: Any) -> bool:
    """Whether the two are written as the same JSON text: the same object; or the same types, keys in
    the same order, and the same values (a float by its text: ``0.0 == -0.0``)."""
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    if kind is str:
        return bool(old == new)
    if kind is dict:
        if len(old) != len(new):
            return False
        # (the same object is the same text: a history's strings are its entries' own, so most values
        # are, and a call for each cost a 2,000-message request 5 ms)
        for (key, value), (other_key, other) in zip(old.items(), new.items(), strict=True):
            if key is not other_key and (key != other_key or type(key) is not type(other_key)):
                return False
            if value is not other and not same(value, other):
                return False
        return True
    if kind is list or kind is tuple:
        if len(old) != len(new):
            return False
        for value, other in zip(old, new, strict=True):
            if value is not other and not same(value, other):
                return False
        return True
    if kind is JSONText:
        return same(old.value, new.value)
    if kind is float:
        return float.__repr__(old) == float.__repr__(new)
    if kind in (int, bool, type(None)) or isinstance(old, LazyString):
        return bool(old == new)  # (an attachment's base64: the same bytes after the same prefix)
    return False  # anything else: written again
