"""What a card may show of a call's arguments (DESIGN.md step 5).

Only fields on the tool's display allow-list, in the allow-list's order, and
only once their values are *stable*: a string once its closing quote arrived,
a number once a following ``,`` ``]`` ``}`` ended it, an object or array
member by member. Nothing unlisted, and never the raw buffer.

``FormingPreview`` is fed the argument fragments as they arrive and keeps the
stable values by path, using the incremental scanner: each character is seen
once, so a megabyte of arguments costs what one pass over it costs, however
it was fragmented (partial-json-parser re-parses the whole buffer per call:
about 11 ms at 100 KB, quadratic over a stream). It holds at most ``KEPT``
characters of a string value: enough for any line a card draws.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .blocks import ToolCallBlock
from .jsonscan import JSONScanner, Path
from .limits import loads
from .pieces import append_piece

__all__ = ["KEPT", "FormingPreview", "visible_fields", "format_value", "result_line", "shown_result", "DisplaySpec"]

#: (dotted path, label) pairs; ``*`` in a path matches every array element.
DisplaySpec = Sequence[tuple[str, str]]

_MAX_SHOWN = 160

#: Characters of one string value the forming preview holds: a card shows a
#: line of it, so a 10 MB body is not held a second time beside the call's
#: buffer (the whole value is the buffer's, parsed, once the call ends).
KEPT = 16 * 1024


def format_value(value: Any, limit: int = _MAX_SHOWN) -> str:
    """A value as one short line of plain text (never JSON syntax for strings).

    Only what can be shown is read: a 10 MB string costs what its first few
    hundred characters cost, a long list what its first elements cost."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif value is None:
        text = "—"
    elif isinstance(value, int | float):
        text = str(value)
    elif isinstance(value, list):
        text = _joined((format_value(v, limit) for v in value), limit)
    elif isinstance(value, dict):
        text = _joined((f"{k}: {format_value(v, limit)}" for k, v in value.items()), limit)
    else:
        text = str(value)
    return _one_line(text, limit)


def _joined(parts: Iterator[str], limit: int) -> str:
    """``", ".join(parts)``, or a prefix of it long enough for a line of
    ``limit`` characters once whitespace is collapsed."""
    out: list[str] = []
    size, budget = 0, 2 * limit + 16
    for part in parts:
        out.append(part)
        size += len(part) + 2
        if size > budget:
            if len(" ".join(", ".join(out).split())) > limit:
                break
            budget *= 4
    return ", ".join(out)


def _one_line(text: str, limit: int) -> str:
    """Whitespace collapsed to single spaces, then cut to ``limit`` with "…".

    Collapsing a prefix gives a prefix of the collapsed whole, so a prefix
    is enough once it yields more than ``limit`` characters (it is grown for
    text that is mostly whitespace)."""
    take = 2 * limit + 16
    while True:
        line = " ".join(text[:take].split())
        if len(line) > limit or take >= len(text):
            break
        take *= 4
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _split(path: str) -> list[str]:
    return [p for p in path.split(".") if p]


def _lookup(value: Any, parts: list[str]) -> list[Any]:
    """Every value at ``parts`` (``*`` fans out over array elements)."""
    if not parts:
        return [value]
    head, rest = parts[0], parts[1:]
    if head == "*":
        if isinstance(value, list):
            return [found for item in value for found in _lookup(item, rest)]
        return []
    if isinstance(value, dict) and head in value:
        return _lookup(value[head], rest)
    if isinstance(value, list) and head.isdigit() and int(head) < len(value):
        return _lookup(value[int(head)], rest)
    return []


def visible_fields(value: Any, display: DisplaySpec, limit: int = _MAX_SHOWN) -> list[tuple[str, str]]:
    """(label, text) for each allow-listed field present in ``value``.

    Fields under one ``*`` (``orders.*.order_id``, ``orders.*.status``…) are
    shown one line per element, their values joined, labelled with the first
    field's label: a list of orders reads as a list of orders.
    """
    out: list[tuple[str, str]] = []
    done: set[str] = set()
    for path, label in display:
        if path in done:
            continue
        if "*" not in path:
            found = _lookup(value, _split(path))
            if found:
                out.append((label, format_value(found[0], limit)))
            continue
        prefix = path[: path.index("*") + 1]
        group = [(p, lab) for p, lab in display if p.startswith(prefix + ".") or p == prefix]
        done.update(p for p, _ in group)
        elements = _lookup(value, _split(prefix))
        for element in elements:
            parts = []
            for p, _ in group:
                rest = _split(p[len(prefix):])
                found = _lookup(element, rest)
                if found:
                    parts.append(format_value(found[0], limit))
            if parts:
                out.append((label, format_value(" · ".join(parts), limit)))
    return out


def shown_result(call: ToolCallBlock) -> str:
    """What any surface (card, ``ask``, Markdown export) may show of a call's
    result: a call that ran shows its result (through the result allow-list,
    by ``result_line``); any other state shows the display-safe summary the
    finaliser wrote where there is one — a rejection's message to the model
    quotes argument values, its summary names only listed fields — else the
    result, else the problem."""
    if call.state == "ran":
        return call.result or ""
    return call.summary or call.result or call.problem or ""


def result_line(text: str, display: DisplaySpec, limit: int = 120) -> str:
    """One line for a tool's result: its allow-listed fields where the tool
    lists some and the result is JSON, else the text itself, shortened."""
    if display:
        try:
            value = loads(text)
        except ValueError:
            value = None
        if value is not None:
            shown = visible_fields(value, display, 60)
            if shown:
                line = " · ".join(f"{label}: {text}" for label, text in shown[:6])
                return line if len(line) <= limit else line[: limit - 1] + "…"
    return format_value(text, limit)


#: A fragment longer than this is scanned a slice at a time: the scanner cuts a string's text
#: out of what it is fed, so a megabyte fragment (Gemini sends a call whole) was copied whole
#: beside the call's buffer and its parse, to keep ``KEPT`` characters of it.
_SLICE = 1 << 16


class FormingPreview:
    """Stable argument values of a call still streaming, by path.

    ``feed`` takes the next fragment and returns True when a new value became
    stable or a new field began (the card only needs redrawing then). ``fields(display)`` lists the
    allow-listed stable fields; unstable ones are reported as ``None`` so a
    card can show "…" for a field it knows is coming.
    """

    __slots__ = ("_scanner", "_values", "_top", "_open_strings", "_loose", "_held", "_seen", "_cut", "_stable",
                 "broken", "version")

    def __init__(self) -> None:
        self._scanner = JSONScanner()
        self._values: dict[Path, Any] = {}
        self._top: dict[str, Any] = {}
        #: Bumped whenever a value became stable or a field began (a reader redraws only then).
        self.version = 0
        self._open_strings: dict[Path, list[str]] = {}
        #: Unjoined trailing pieces of the string being read (one is open at a time: strings are leaves).
        self._loose = 0
        #: Characters kept of the string being read (at most ``KEPT``).
        self._held = 0
        self._seen: set[Path] = set()
        #: Strings longer than ``KEPT``: only their first ``KEPT`` characters are held.
        self._cut: set[Path] = set()
        #: Top-level fields that are stable, whether held whole or cut.
        self._stable: set[str] = set()
        self.broken = False

    def feed(self, fragment: str) -> bool:
        if len(fragment) <= _SLICE:
            changed = self._take(fragment)
        else:  # a whole call in one fragment (Gemini's args): scanned a slice at a time
            changed = False
            for at in range(0, len(fragment), _SLICE):
                changed = self._take(fragment[at : at + _SLICE]) or changed
        if self._scanner.error is not None:
            self.broken = True
        if changed:
            self.version += 1
        return changed

    def _take(self, fragment: str) -> bool:
        """Scan ``fragment``; whether a value became stable or a field began."""
        changed = False
        for piece in self._scanner.feed(fragment):
            path = piece.path
            kind = piece.kind
            if kind == "string":
                if path not in self._seen:
                    self._seen.add(path)
                    changed = True  # a field began: a card shows it as coming ("…")
                parts = self._open_strings.setdefault(path, [])
                text = piece.value
                if text:
                    room = KEPT - self._held
                    if len(text) > room:
                        self._cut.add(path)
                        text = text[:room]
                    if text:
                        self._held += len(text)
                        self._loose = append_piece(parts, text, self._loose)
                if piece.done:
                    value = self._values[path] = "".join(self._open_strings.pop(path))
                    self._loose = self._held = 0
                    if len(path) == 1:
                        self._stable.add(path[0])  # type: ignore[arg-type]
                        if path not in self._cut:
                            self._top[path[0]] = value  # type: ignore[index]
                    changed = True
            elif kind in ("number", "bool", "null"):
                self._values[path] = piece.value
                if len(path) == 1:
                    self._top[path[0]] = piece.value  # type: ignore[index]
                    self._stable.add(path[0])  # type: ignore[arg-type]
                self._seen.add(path)
                changed = True
            elif kind in ("object", "array"):
                if path not in self._seen:
                    self._seen.add(path)
                    changed = True
            elif kind == "close":
                changed = True
        return changed

    def stable_top(self) -> dict[str, Any]:
        """Top-level fields whose values are stable and held whole (scalars;
        containers once closed are not listed; a string longer than ``KEPT``
        is not either: what is held of it is not its value)."""
        return self._top

    def stable_names(self) -> set[str]:
        """Top-level fields whose values are stable, held whole or not."""
        return self._stable

    def fields(self, display: DisplaySpec, limit: int = _MAX_SHOWN) -> list[tuple[str, str | None]]:
        """(label, text or None while forming) for allow-listed fields seen so far."""
        out: list[tuple[str, str | None]] = []
        for path, label in display:
            parts = _split(path)
            if "*" in parts:
                matches = sorted((p for p in self._values if _match(p, parts)), key=_order)
                for i, match in enumerate(matches):
                    out.append((f"{label} {i + 1}" if len(matches) > 1 else label, self._shown(match, limit)))
                continue
            key = tuple(int(p) if p.isdigit() else p for p in parts)
            if key in self._values:
                out.append((label, self._shown(key, limit)))
            elif key in self._seen:
                out.append((label, None))  # started, not yet stable
        return out


    def _shown(self, path: Path, limit: int) -> str:
        text = format_value(self._values[path], limit)
        if path in self._cut and not text.endswith("…"):
            text = text[: limit - 1] + "…"  # what is held of a long string read as all of it would mislead
        return text


def _match(path: Path, parts: list[str]) -> bool:
    if len(path) != len(parts):
        return False
    for segment, part in zip(path, parts, strict=True):
        if part == "*":
            if not isinstance(segment, int):
                return False
        elif str(segment) != part:
            return False
    return True


def _order(path: Path) -> tuple[Any, ...]:
    return tuple((0, s) if isinstance(s, int) else (1, s) for s in path)

