"""The incremental JSON scanner: any chunking, the same pieces rebuilt into
the same value; stable values only once the text decides them."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.stream.jsonscan import JSONScanner, Piece


def rebuild(pieces: list[Piece]) -> Any:
    root: list[Any] = [None]
    containers: dict[tuple[Any, ...], Any] = {}

    def put(path: tuple[Any, ...], value: Any) -> None:
        if not path:
            root[0] = value
            return
        parent = containers[path[:-1]]
        if isinstance(parent, list):
            while len(parent) <= path[-1]:
                parent.append(None)
        parent[path[-1]] = value

    strings: dict[tuple[Any, ...], list[str]] = {}
    for piece in pieces:
        if piece.kind in ("object", "array"):
            container: Any = {} if piece.kind == "object" else []
            containers[piece.path] = container
            put(piece.path, container)
        elif piece.kind == "string":
            strings.setdefault(piece.path, []).append(piece.value)
            if piece.done:
                put(piece.path, "".join(strings.pop(piece.path)))
        elif piece.kind in ("number", "bool", "null"):
            put(piece.path, piece.value)
    return root[0]


def scan(*chunks: str) -> tuple[list[Piece], JSONScanner]:
    scanner = JSONScanner()
    pieces: list[Piece] = []
    for chunk in chunks:
        pieces.extend(scanner.feed(chunk))
    return pieces, scanner


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@given(value=st.dictionaries(st.text(max_size=8), json_values, max_size=5), ascii_only=st.booleans(),
       cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=20))
def test_any_chunking_rebuilds_the_same_value(value: dict[str, Any], ascii_only: bool, cuts: list[int]) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    points = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    pieces, scanner = scan(*chunks)
    assert scanner.error is None and scanner.done
    assert rebuild(pieces) == value


def test_every_split_inside_escapes_and_surrogate_pairs() -> None:
    text = json.dumps({"a": 'q"\\\n\u00e9\U0001f600', "n": [1, 2.5, -3e2, True, None]}, ensure_ascii=True)
    for cut in range(len(text) + 1):
        pieces, scanner = scan(text[:cut], text[cut:])
        assert scanner.error is None and rebuild(pieces) == json.loads(text), cut


def test_numbers_are_only_stable_once_terminated() -> None:
    scanner = JSONScanner()
    assert [p.kind for p in scanner.feed('{"n": 12')] == ["object"]
    assert [(p.kind, p.value) for p in scanner.feed("3")] == []
    assert [(p.kind, p.value) for p in scanner.feed(",")] == [("number", 123)]


def test_strings_report_progress_and_closing() -> None:
    scanner = JSONScanner()
    pieces = scanner.feed('{"title": "Ref')
    assert pieces[-1] == Piece(("title",), "string", "Ref", False)
    pieces = scanner.feed('und"')
    assert pieces[-1] == Piece(("title",), "string", "und", True)


def test_keys_split_across_fragments() -> None:
    pieces, _ = scan('{"cust', 'omer": "A', 'da"}')
    assert rebuild(pieces) == {"customer": "Ada"}
    assert all(p.path in ((), ("customer",)) for p in pieces)


def test_broken_text_stops_with_an_error_and_no_raise() -> None:
    pieces, scanner = scan('{"a": 1,', "}")
    assert scanner.error and "expected a key" in scanner.error
    assert scanner.feed('"b": 2}') == []


def test_ten_thousand_deep_is_fine() -> None:
    pieces, scanner = scan('{"a": ' + "[" * 10_000, "]" * 10_000 + "}")
    assert scanner.error is None and scanner.done


def test_megabyte_string_in_small_fragments_is_linear_enough() -> None:
    text = json.dumps({"body": "x\\y" * 300_000})
    scanner = JSONScanner()
    total = 0
    for i in range(0, len(text), 64):
        for piece in scanner.feed(text[i : i + 64]):
            if piece.kind == "string":
                total += len(piece.value)
    assert scanner.done and total == len("x\\y" * 300_000)
