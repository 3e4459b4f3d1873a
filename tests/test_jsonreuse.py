"""A request's JSON written from the text of the one before it is the text json.dumps writes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.stream import jsonwrite
from app.stream.attachments import Base64Text
from app.stream.jsonreuse import Reuse, same
from app.stream.jsonwrite import JSONText

_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-3, max_value=3)
            | st.sampled_from([0.0, -0.0, 1.0, 2.5]) | st.text(max_size=6))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
                       | st.builds(JSONText, inner), max_leaves=12)
#: Bodies as requests are: a dict whose lists (the history) grow, or change, from one to the next.
_BODIES = st.fixed_dictionaries({"model": st.text(max_size=4), "messages": st.lists(_VALUES, max_size=6)})


def _dumps(value: Any) -> bytes:
    return json.dumps(jsonwrite.plain(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _written(reuse: Reuse, value: Any) -> bytes:
    write = reuse.writer(value)
    once = b"".join(write())
    assert b"".join(write()) == once  # a body is counted, then sent: written twice, the same
    return once


@given(st.lists(_BODIES, min_size=1, max_size=6))
def test_a_run_of_bodies_written_in_turn_is_json_dumps_of_each(bodies: list[dict[str, Any]]) -> None:
    """Why: the items equal to the last body's are written from its text; the same text or the
    request is not what was built (values Python holds equal but JSON writes apart among them:
    1, 1.0, True; 0.0, -0.0; keys in another order)."""
    reuse = Reuse()
    for body in bodies:
        assert _written(reuse, body) == _dumps(body)


@given(st.lists(_BODIES, min_size=2, max_size=4))
def test_a_growing_history_is_written_as_it_is(bodies: list[dict[str, Any]]) -> None:
    reuse = Reuse()
    history: list[Any] = []
    for body in bodies:
        history = history + body["messages"]
        grown = {**body, "messages": list(history)}
        assert _written(reuse, grown) == _dumps(grown)


def test_values_python_holds_equal_are_written_as_themselves() -> None:
    reuse = Reuse()
    for item in ({"n": 1}, {"n": True}, {"n": 1.0}, {"n": -0.0}, {"n": 0.0}, {"b": 2, "a": 1}, {"a": 1, "b": 2}):
        body = {"messages": [{"role": "user", "content": "hi"}, item]}
        assert _written(reuse, body) == _dumps(body)


def test_arguments_and_attachments_are_compared_by_what_they_write() -> None:
    assert same(JSONText({"q": 1}), JSONText({"q": 1}))
    assert not same(JSONText({"q": 1}), JSONText({"q": True}))
    assert same(Base64Text(b"abc", "data:x;base64,"), Base64Text(b"abc", "data:x;base64,"))
    assert not same(Base64Text(b"abc", "data:x;base64,"), Base64Text(b"abd", "data:x;base64,"))
    reuse = Reuse()
    for data in (b"png", b"png", b"gif"):
        body = {"messages": [{"content": [{"image": Base64Text(data, "data:image/png;base64,")}]},
                             {"role": "assistant", "tool_calls": [{"arguments": JSONText({"q": "x"})}]}]}
        assert _written(reuse, body) == _dumps(body)


def test_a_message_with_calls_keeps_its_text() -> None:
    """Why: on the OpenAI wires every assistant message with calls holds its arguments as ``JSONText``
    (no json encoder writes it at once); such a message, when short, is written once and its text
    reused, not written again at every later request of the sitting."""
    reuse = Reuse()
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "get_order", "arguments": JSONText({"order_id": "A-1042"})}}]}
    body = {"messages": [{"role": "user", "content": "hi"}, call]}
    assert _written(reuse, body) == _dumps(body)
    texts = reuse._kept["messages"][1]
    assert texts[1] == json.dumps(jsonwrite.plain(call), ensure_ascii=False, separators=(",", ":")).encode()
    grown = {"messages": [*body["messages"], {"role": "tool", "tool_call_id": "c1", "content": "{}"}]}
    assert _written(reuse, grown) == _dumps(grown)
    assert reuse._kept["messages"][1][1] is texts[1]  # reused, not written again


def test_an_item_that_is_not_small_keeps_no_text() -> None:
    """Why: a 10 MB argument in the history is written a piece at a time on every request, never
    held as one string (what ``make bench-memory`` measures)."""
    huge = "x" * (jsonwrite.PIECE * 3)
    reuse = Reuse()
    body = {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": huge}]}
    _written(reuse, body)
    texts = reuse._kept["messages"][1]
    assert texts[0] is not None and texts[1] is None
    pieces = list(reuse.writer({"messages": list(body["messages"])})())
    assert max(map(len, pieces)) <= 2 * jsonwrite.PIECE + 64
    assert b"".join(pieces) == _dumps(body)
    lazy = {"messages": [{"role": "assistant", "tool_calls": [{"arguments": JSONText({"q": huge})}]}]}
    assert _written(reuse, lazy) == _dumps(lazy)
    assert reuse._kept["messages"][1] == [None]  # a long argument keeps no text either


def test_a_value_that_is_not_a_dict_is_written_as_chunks_writes_it() -> None:
    reuse = Reuse()
    for value in ([1, 2], "text", {}, {"a": []}):
        assert _written(reuse, value) == _dumps(value)


def test_a_long_history_is_written_in_runs_as_it_is() -> None:
    """Kept texts are written a run at a time: runs end at their length and at an item too large to
    keep a text of, and the body is still json.dumps's, grown or not."""
    reuse = Reuse()
    history: list[Any] = [{"role": "user", "content": f"q{i} é \"x\""} for i in range(70)]
    body = {"model": "m", "messages": history}
    assert _written(reuse, body) == _dumps(body)
    history = [*history, {"role": "tool", "content": "y" * (jsonwrite.PIECE + 5)},
               *({"role": "user", "content": str(i)} for i in range(40))]
    for grown in ({"model": "m", "messages": history}, {"model": "m", "messages": [*history, 1.0, True]}):
        assert _written(reuse, grown) == _dumps(grown)
