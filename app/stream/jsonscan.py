"""An incremental JSON scanner: feed text as it arrives, get value pieces
with their paths as soon as the text decides them.

Written by hand because nothing on PyPI does this in linear time: re-running
a tolerant parser (partial-json-parser) on the whole buffer per delta is
quadratic, about 11 ms per parse at 100 KB. Here each character is looked at
once: string bodies are skipped with ``str.find``, containers are an explicit
stack (10,000-deep input cannot raise RecursionError), and an escape split
across fragments (``\\u00`` | ``e9``, a surrogate pair in two halves) is held
back until it is whole.

Two readers use it. The forming preview shows only values that are *stable*:
a string once closed, a number once a following ``,`` ``]`` ``}`` ends it.
The demo's Gemini encoder turns the pieces into ``partialArgs``.

This is for display and encoding only. Whether a call is valid is decided
by the strict parser in ``strictjson``, never here.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .limits import MAX_DEPTH

__all__ = ["JSONScanner", "Piece", "Path", "MAX_DEPTH"]

Path = tuple[str | int, ...]

_WS = " \t\n\r"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_NUMBER_CHARS = frozenset("0123456789+-.eE")

# states
_VALUE, _KEY_OR_END, _KEY, _COLON, _AFTER, _STRING, _KEYSTRING, _ATOM, _END = range(9)


# Pieces deeper than the one depth limit (limits.MAX_DEPTH) are not reported
# (the structure is still checked): nobody reads a value that far down, and a
# path per piece would make 10,000-deep input quadratic.


class Piece(NamedTuple):
    """One decided piece.

    kind: ``string`` (``value`` is the next decoded chunk; ``done`` once the
    string closed), ``number`` / ``bool`` / ``null`` (whole, done),
    ``object`` / ``array`` (a container opened), ``close`` (it closed).
    """

    path: Path
    kind: str
    value: Any
    done: bool


class JSONScanner:
    __slots__ = ("_stack", "_state", "_pending", "_atom", "_key", "_high", "error", "top_keys")

    def __init__(self) -> None:
        # each container: [is_array, current key or index, has_member]
        self._stack: list[list[Any]] = []
        self._state = _VALUE
        self._pending = ""  # an escape not yet whole
        self._atom: list[str] = []
        self._key: list[str] = []
        self._high = ""  # a high surrogate waiting for its low half
        self.error: str | None = None
        #: Keys of the root object whose name has closed (their value may not have begun).
        self.top_keys: set[str] = set()

    @property
    def done(self) -> bool:
        """The root value is complete."""
        return self._state == _END

    @property
    def in_escape(self) -> bool:
        """The text so far stops inside an escape (``\\``, ``\\u00``) or
        between the halves of a surrogate pair: what it decodes to is open."""
        return bool(self._pending or self._high)

    @property
    def path(self) -> Path:
        return tuple(frame[1] for frame in self._stack)

    def feed(self, text: str) -> list[Piece]:
        out: list[Piece] = []
        if self.error is not None:
            return out
        try:
            self._scan(text, out)
        except _Broken as exc:
            self.error = str(exc)
        return out

    # -- the machine --------------------------------------------------------------

    def _scan(self, text: str, out: list[Piece]) -> None:
        i = 0
        n = len(text)
        if self._pending:
            text = self._pending + text
            n = len(text)
            self._pending = ""
        while i < n:
            state = self._state
            if state == _STRING or state == _KEYSTRING:
                i = self._string(text, i, out)
                continue
            ch = text[i]
            if state == _ATOM:
                if ch in _NUMBER_CHARS or ch.isalpha():
                    self._atom.append(ch)
                    i += 1
                    continue
                self._finish_atom(out)
                continue  # re-read ch in the new state
            if ch in _WS:
                i += 1
                continue
            if state == _VALUE:
                self._value_start(ch, out)
            elif state == _AFTER:
                self._after(ch, out)
            elif state == _KEY_OR_END:
                if ch == '"':
                    self._key = []
                    self._state = _KEYSTRING
                elif ch == "}":
                    self._close(False, out)
                else:
                    raise _Broken(f"expected a key or '}}', got {ch!r}")
            elif state == _KEY:
                if ch != '"':
                    raise _Broken(f"expected a key, got {ch!r}")
                self._key = []
                self._state = _KEYSTRING
            elif state == _COLON:
                if ch != ":":
                    raise _Broken(f"expected ':', got {ch!r}")
                self._state = _VALUE
            else:  # _END
                raise _Broken(f"text after the end of the document: {ch!r}")
            i += 1

    def _put(self, out: list[Piece], kind: str, value: Any, done: bool) -> None:
        if len(self._stack) > MAX_DEPTH:
            return
        out.append(Piece(tuple(frame[1] for frame in self._stack), kind, value, done))

    def _value_start(self, ch: str, out: list[Piece]) -> None:
        if ch == '"':
            self._state = _STRING
            self._high = ""
            self._put(out, "string", "", False)
        elif ch == "{":
            self._put(out, "object", None, False)
            self._stack.append([False, None, False])
            self._state = _KEY_OR_END
        elif ch == "[":
            self._put(out, "array", None, False)
            self._stack.append([True, 0, False])
            self._state = _VALUE
        elif ch in _NUMBER_CHARS or ch.isalpha():
            self._atom = [ch]
            self._state = _ATOM
        elif ch == "]" and self._stack and self._stack[-1][0] and not self._stack[-1][2]:
            self._close(True, out)  # an empty array
        else:
            raise _Broken(f"expected a value, got {ch!r}")

    def _after(self, ch: str, out: list[Piece]) -> None:
        if not self._stack:
            raise _Broken(f"text after the end of the document: {ch!r}")
        frame = self._stack[-1]
        if ch == ",":
            if frame[0]:
                frame[1] += 1
                self._state = _VALUE
            else:
                self._state = _KEY
        elif ch == "]" and frame[0]:
            self._close(True, out)
        elif ch == "}" and not frame[0]:
            self._close(False, out)
        else:
            raise _Broken(f"expected ',' or a closing bracket, got {ch!r}")

    def _close(self, is_array: bool, out: list[Piece]) -> None:
        self._stack.pop()
        self._put(out, "close", "array" if is_array else "object", True)
        self._member_done()

    def _member_done(self) -> None:
        if self._stack:
            self._stack[-1][2] = True
            self._state = _AFTER
        else:
            self._state = _END

    def _finish_atom(self, out: list[Piece]) -> None:
        word = "".join(self._atom)
        self._atom = []
        if word == "true" or word == "false":
            self._put(out, "bool", word == "true", True)
        elif word == "null":
            self._put(out, "null", None, True)
        else:
            try:
                value = json.loads(word)
            except ValueError:
                raise _Broken(f"not a JSON value: {word[:40]!r}") from None
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise _Broken(f"not a JSON value: {word[:40]!r}")
            self._put(out, "number", value, True)
        self._member_done()

    def _string(self, text: str, i: int, out: list[Piece]) -> int:
        """Consume string text from ``i``; return the next index."""
        n = len(text)
        chunks: list[str] = []
        key = self._state == _KEYSTRING
        while i < n:
            quote = text.find('"', i)
            slash = text.find("\\", i)
            stop = quote if slash == -1 or (quote != -1 and quote < slash) else slash
            if stop == -1:
                chunks.append(self._plain(text[i:]))
                i = n
                break
            if stop > i:
                chunks.append(self._plain(text[i:stop]))
            if stop == quote:
                if self._high:
                    chunks.append(self._high)
                    self._high = ""
                self._emit_string(chunks, key, True, out)
                return quote + 1
            # an escape
            if stop + 1 >= n:
                self._pending = text[stop:]
                i = n
                break
            code = text[stop + 1]
            if code == "u":
                if stop + 6 > n:
                    self._pending = text[stop:]
                    i = n
                    break
                hexa = text[stop + 2 : stop + 6]
                try:
                    unit = int(hexa, 16)
                except ValueError:
                    raise _Broken(f"bad \\u escape {hexa!r}") from None
                chunks.append(self._unit(unit))
                i = stop + 6
            elif code in _ESCAPES:
                chunks.append(self._plain(_ESCAPES[code]))
                i = stop + 2
            else:
                raise _Broken(f"bad escape \\{code}")
        self._emit_string(chunks, key, False, out)
        return i

    def _plain(self, text: str) -> str:
        if self._high:
            high, self._high = self._high, ""
            return high + text
        return text

    def _unit(self, unit: int) -> str:
        if 0xD800 <= unit <= 0xDBFF:
            previous, self._high = self._high, chr(unit)
            return previous
        if 0xDC00 <= unit <= 0xDFFF and self._high:
            high = ord(self._high)
            self._high = ""
            return chr(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
        return self._plain(chr(unit))

    def _emit_string(self, chunks: list[str], key: bool, closed: bool, out: list[Piece]) -> None:
        text = "".join(chunks)
        if key:
            self._key.append(text)
            if closed:
                name = "".join(self._key)
                self._stack[-1][1] = name
                if len(self._stack) == 1:
                    self.top_keys.add(name)
                self._key = []
                self._state = _COLON
            return
        if text or closed:
            self._put(out, "string", text, closed)
        if closed:
            self._member_done()


class _Broken(ValueError):
    pass
