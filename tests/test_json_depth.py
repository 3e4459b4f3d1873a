"""The nesting bound on untrusted JSON (``limits.loads``), read from the text's brackets.

Why: every request the demo model answers, every stored or imported transcript and every big tool
result is checked before it is parsed; the check reads brackets outside strings, so strings full of
brackets, quotes and backslashes (tool arguments written as JSON inside JSON) must not fool it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.stream.limits import MAX_DEPTH, TooDeep, check_depth, loads

#: Strings made of what could fool a reader of the text: brackets, quotes, backslashes, escapes.
_TRICKY = st.text(alphabet=st.sampled_from(list('[]{}"\\/ab\n\t\u00e9\u2028\U0001f600')), max_size=12)
_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), _TRICKY)
_VALUE = st.recursive(_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(_TRICKY, inner, max_size=3)), max_leaves=8)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _wrapped(value: Any, levels: list[bool]) -> Any:
    for in_list in levels:
        value = [value, "]]}}\\\""] if in_list else {"k[{": value, '"{': "["}
    return value


@given(value=_VALUE, levels=st.lists(st.booleans(), min_size=MAX_DEPTH - 8, max_size=MAX_DEPTH + 4),
       ascii_only=st.booleans(), as_bytes=st.booleans())
def test_loads_refuses_exactly_what_nests_deeper_than_the_bound(value: Any, levels: list[bool], ascii_only: bool,
                                                              as_bytes: bool) -> None:
    document = _wrapped(value, levels)
    text = json.dumps(document, ensure_ascii=ascii_only)
    if _depth(document) > MAX_DEPTH:
        with pytest.raises(TooDeep):
            loads(text.encode() if as_bytes else text)
    else:
        assert loads(text.encode() if as_bytes else text) == document
        assert check_depth(document) is document


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"arguments": "[" * (3 * MAX_DEPTH), "quoted": '\\"' + "{" * (2 * MAX_DEPTH)})
    assert loads(text)["arguments"] == "[" * (3 * MAX_DEPTH)
    assert loads(text.encode())["quoted"].endswith("{")


def test_a_deep_document_is_refused_as_bytes_and_as_text() -> None:
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    for form in (deep, deep.encode(), bytearray(deep.encode())):
        with pytest.raises(TooDeep):
            loads(form)
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
