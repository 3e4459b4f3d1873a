"""JSON written in pieces of bounded size, for values that hold a huge string.

``json.dumps`` of a request whose history carries a 10 MB argument makes a
10 MB ``str``, and ``.encode()`` a 10 MB ``bytes`` beside it; hashing the
canonical form of those arguments makes another. Here the text comes out as
pieces no longer than ``PIECE`` characters (a long string is escaped a slice
at a time: JSON escapes each code point on its own, so the slices' escapes
joined are the whole string's), so a caller can hash it, or gather it into
one ``bytes`` (``encode``), with nothing of the value's size beside it.

The text is exactly ``json.dumps(value, ensure_ascii=False,
separators=(",", ":"), allow_nan=False)`` (a test holds it to that),
which is also what httpx sends for ``json=``.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable, Iterable, Iterator
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

__all__ = ["PIECE", "LazyString", "JSONText", "pieces", "chunks", "batched", "encode", "plain", "text_size",
           "small_text", "key_text"]

#: The longest piece of a string value yielded at once (characters).
PIECE = 1 << 16



class LazyString:
    """A JSON string value written a piece at a time, never held whole (an
    attachment's base64: ``stream.attachments.Base64Text``; a call's
    arguments as the OpenAI wires carry them: ``JSONText``). ``pieces`` are
    the string's characters; ``str()`` makes the whole string, for a reader
    that wants one (a test, an export)."""

    __slots__ = ()

    def pieces(self) -> Iterator[str]:
        raise NotImplementedError

    def json_pieces(self) -> Iterator[str]:
        """The pieces as they stand between the value's quotes: escaped one
        by one (JSON escapes each code point on its own, so the escaped
        pieces joined are the escaped whole). A string that never needs
        escaping (base64) hands its pieces over as they are."""
        for piece in self.pieces():
            yield encode_basestring(piece)[1:-1]

    def __str__(self) -> str:
        return "".join(self.pieces())


class JSONText(LazyString):
    """The JSON text of a value, sent as a string value: a call's arguments
    on the OpenAI wires, which carry them as a string. ``json.dumps`` of a
    10 MB argument made a 10 MB ``str`` beside the dict at every request
    after the call (and a ``str`` is what the whole history is sent with);
    here the text is written from the dict a piece at a time. It is
    ``json.dumps(value, ensure_ascii=False)`` with its default separators,
    the text these requests have always carried (tests compare bodies)."""

    __slots__ = ("value",)
    SEPARATORS = (", ", ": ")

    def __init__(self, value: Any) -> None:
        self.value = value

    def pieces(self) -> Iterator[str]:
        return pieces(self.value, self.SEPARATORS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JSONText):
            return bool(self.value == other.value)
        return isinstance(other, str) and str(self) == other

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"JSONText({text_size(self.value)} characters)"


_float_repr = float.__repr__
_INF = float("inf")


def _scalar(value: object) -> str | None:
    """The JSON text of null, a boolean or a number; None for anything else."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _number(value)
    return None


def key_text(key: object) -> str:
    text = key if isinstance(key, str) else _scalar(key)
    if text is None:
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
    return text


def _number(value: float) -> str:
    if value != value or value in (_INF, -_INF):
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return _float_repr(value)


def _string(text: str) -> Iterator[str]:
    if len(text) <= PIECE:
        yield encode_basestring(text)
        return
    yield '"'
    for start in range(0, len(text), PIECE):
        yield encode_basestring(text[start : start + PIECE])[1:-1]
    yield '"'


#: The scalars ``_small`` takes (json's encoder writes them as ``pieces`` writes them), each with the
#: most characters its text can have (an int's is counted from its size).
_SCALARS = {float: 24, bool: 5, type(None): 4}


def small_text(value: Any, separators: tuple[str, str] = (",", ":")) -> str | None:
    """The JSON text of a dict or list of at most about ``PIECE`` characters (its strings, string keys
    among them, its numbers and its separators counted), with nothing but dicts, lists, strings and
    scalars in it, written at once by json's own encoder; ``None`` for any other (it is written a
    piece at a time). Nearly all of a history is such small values (a message, a call): a generator
    per value, each piece handed up through every level above it, made the pieces of a 500-exchange
    request (430 KB) three to four times as slow as ``json.dumps`` of it, twice a turn. The text is
    the same: ``pieces`` is ``json.dumps`` with these settings (a test holds the two together). A
    value json refuses (nan, inf) is ``None`` too: written a piece at a time, it is refused with the
    number named (a config error shows it)."""
    if _small(value, PIECE) < 0:
        return None
    try:
        return _whole(separators)(value)
    except ValueError:
        return None


def _small(value: Any, room: int) -> int:
    """``room`` less the characters ``value`` is written in, at most (escapes apart: as for
    ``pieces``); -1 once that is below 0, or where ``value`` holds anything but exact dicts (with
    string keys), lists, tuples, strings and scalars (a ``LazyString``, a subclass: written a piece
    at a time). A list of a million numbers is no small value though it has no string."""
    kind = type(value)
    if kind is str:
        room -= len(value) + 2
    elif kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return -1
            room = _small(item, room - len(key) - 4)
            if room < 0:
                return -1
    elif kind is list or kind is tuple:
        for item in value:
            room = _small(item, room - 1)
            if room < 0:
                return -1
    elif kind is int:
        room -= value.bit_length() // 3 + 2  # (a decimal digit is more than three bits)
    elif kind in _SCALARS:
        room -= _SCALARS[kind]
    else:
        return -1
    return room if room >= 0 else -1


@functools.cache
def _whole(separators: tuple[str, str]) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, separators=separators, allow_nan=False)``, its encoder
    made once: ``json.dumps`` with settings of its own builds an encoder at every call, which took
    as long as the writing itself for the small values ``small_text`` takes."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=separators, allow_nan=False)
    if c_make_encoder is None:  # pragma: no cover - CPython has the C encoder
        return encoder.encode
    write = c_make_encoder(None, encoder.default, encode_basestring, None, separators[1], separators[0],
                           False, False, False)
    return lambda value: "".join(write(value, 0))


def pieces(value: Any, separators: tuple[str, str] = (",", ":")) -> Iterator[str]:
    """The JSON text of ``value``, in order, as pieces (none longer than
    ``PIECE`` characters, apart from escapes). ``separators`` as
    ``json.dumps`` takes them (item, key)."""
    if isinstance(value, str):
        yield from _string(value)
    elif isinstance(value, LazyString):
        yield '"'
        yield from value.json_pieces()
        yield '"'
    elif isinstance(value, dict):
        if not value:
            yield "{}"
            return
        flat = small_text(value, separators)
        if flat is not None:
            yield flat
            return
        between, colon = separators
        first = True
        for key, item in value.items():
            yield ("{" if first else between) + encode_basestring(key_text(key)) + colon
            first = False
            yield from pieces(item, separators)
        yield "}"
    elif isinstance(value, list | tuple):
        if not value:
            yield "[]"
            return
        flat = small_text(value, separators)
        if flat is not None:
            yield flat
            return
        between = separators[0]
        first = True
        for item in value:
            yield "[" if first else between
            first = False
            yield from pieces(item, separators)
        yield "]"
    else:
        text = _scalar(value)
        if text is None:
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        yield text


def chunks(value: Any) -> Iterator[bytes]:
    """The UTF-8 JSON text of ``value`` in ``bytes`` of about ``PIECE``
    characters each: what a request body streams, with no ``str`` or
    ``bytes`` of the whole beside the value."""
    return batched(pieces(value))


def batched(written: Iterable[str | bytes]) -> Iterator[bytes]:
    """Pieces of JSON text (``str``, or ``bytes`` already UTF-8: ``jsonreuse``'s kept texts) as UTF-8
    ``bytes`` of about ``PIECE`` characters each."""
    batch: list[bytes] = []
    text: list[str] = []
    size = 0
    for piece in written:
        if type(piece) is bytes:
            _encoded(batch, text)
            batch.append(piece)
        else:
            text.append(piece)  # type: ignore[arg-type]
        size += len(piece)
        if size >= PIECE:
            _encoded(batch, text)
            yield b"".join(batch)
            batch.clear()
            size = 0
    _encoded(batch, text)
    if batch:
        yield b"".join(batch)


def _encoded(batch: list[bytes], text: list[str]) -> None:
    """The text pieces gathered so far, encoded onto the end of ``batch`` (order kept)."""
    if text:
        batch.append("".join(text).encode("utf-8"))
        text.clear()


def text_size(value: Any) -> int:
    """How many characters ``pieces(value)`` writes (a size estimate's
    input), counted a piece at a time: ``len(json.dumps(value))`` of a 10 MB
    argument makes the 10 MB string to measure it."""
    return sum(map(len, pieces(value)))


def encode(value: Any) -> bytes:
    """The UTF-8 JSON text of ``value`` as one ``bytes``, gathered in a
    ``BytesIO`` (whose ``getvalue`` hands over its buffer without a copy):
    about the text's size in memory, and no ``str`` of it."""
    out = io.BytesIO()
    for chunk in chunks(value):
        out.write(chunk)
    return out.getvalue()


def plain(value: Any) -> Any:
    """``value`` with every ``LazyString`` made a ``str``: what a reader of
    the JSON would get (tests compare request bodies so)."""
    if isinstance(value, LazyString):
        return str(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value
