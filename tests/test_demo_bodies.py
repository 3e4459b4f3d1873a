"""The demo model reads each request body only past what it shares with the last one, and reads
exactly what ``limits.loads`` reads (values and errors) whatever runs of bodies come."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.demo.bodies import Bodies
from app.stream.dialects import REQUEST_BUILDERS
from app.stream.history import Assistant, CallRecord, Entry, ToolResult, ToolSpec, User
from app.stream.jsonwrite import encode
from app.stream.limits import MAX_DEPTH, TooDeep, loads

_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-30, max_value=30)
            | st.sampled_from([0.0, -0.0, 1.5, 1e300]) | st.text(alphabet='ab"\\é\n[]{},:', max_size=5))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(["a", "b", "role"]), inner, max_size=3), max_leaves=10)
_KEYS = st.sampled_from(["model", "messages", "tools", "stream", "input"])
_OBJECTS = st.lists(st.tuples(_KEYS, st.lists(_VALUES, max_size=5) | _VALUES), max_size=5)


def _text(members: list[tuple[str, Any]], spaced: bool) -> str:
    """An object's JSON with its members in this order (a key may come twice, as a body may send it)."""
    colon, comma = (" : ", " ,\n ") if spaced else (":", ",")
    inner = comma.join(json.dumps(k) + colon + json.dumps(v, ensure_ascii=False, separators=(comma, colon))
                       for k, v in members)
    return (" {\n " + inner + "\t}\r\n") if spaced else "{" + inner + "}"


def _outcome(read: Any, body: bytes) -> tuple[str, str]:
    """What reading ``body`` gives: its value as JSON writes it (1, 1.0 and True apart), or its error."""
    try:
        value = read(body)
    except ValueError as exc:
        return type(exc).__name__, str(exc)
    return "value", json.dumps(value)


@st.composite
def _runs(draw: st.DrawFn) -> list[bytes]:
    """Bodies as a sitting sends them, and worse: a list grown at its end, an earlier item changed, the
    text cut short, a character put in, taken out or swapped for another, whitespace around the tokens."""
    members = draw(_OBJECTS)
    spaced = draw(st.booleans())
    bodies = []
    for _ in range(draw(st.integers(1, 5))):
        change = draw(st.sampled_from(["grow", "grow", "edit", "same"]))
        lists = [i for i, (_, v) in enumerate(members) if isinstance(v, list)]
        if change == "grow" and lists:
            i = draw(st.sampled_from(lists))
            members[i] = (members[i][0], [*members[i][1], *draw(st.lists(_VALUES, min_size=1, max_size=2))])
        elif change == "edit" and members:
            i = draw(st.integers(0, len(members) - 1))
            members[i] = (members[i][0], draw(st.lists(_VALUES, max_size=4) | _VALUES))
        text = _text(members, spaced)
        harm = draw(st.sampled_from(["none", "none", "cut", "insert", "drop", "swap", "swap"]))
        ends = [i - 1 for i, c in enumerate(text) if c in ",]" and i > 0]  # an item's last character
        at = draw(st.sampled_from(ends)) if ends and draw(st.booleans()) else draw(st.integers(0, len(text)))
        if harm == "cut":
            text = text[:at]
        elif harm == "insert":
            text = text[:at] + draw(st.sampled_from(list('0]},"[{ x'))) + text[at:]
        elif harm == "drop":
            text = text[:at] + text[at + 1:]
        elif harm == "swap" and at < len(text):  # one character for another of its kind: nothing moves
            kind = "0123456789" if text[at].isdigit() else "ab" if text[at] in "ab" else ']},"'
            text = text[:at] + draw(st.sampled_from(list(kind))) + text[at + 1:]
        bodies.append(text.encode())
    return bodies


@settings(max_examples=400)
@given(_runs())
def test_a_run_of_bodies_reads_as_loads_reads_each(bodies: list[bytes]) -> None:
    """Why: a body read from the last one's shared start that is not what ``json.loads`` reads (an
    element that goes on past its old end, a key given twice, a body cut short after a shared start) is
    a request the model answers wrongly, or a bad request it answers."""
    reader = Bodies()
    for body in bodies:
        assert _outcome(reader.read, body) == _outcome(loads, body)


def _body(messages: list[Any], tail: str = '],"tools":[{"name":"t"}],"stream":true}') -> bytes:
    return ('{"model":"demo","messages":[' + ",".join(json.dumps(m) for m in messages) + tail).encode()


def test_a_grown_body_keeps_what_was_read_of_the_last() -> None:
    """The messages the last body carried are the very values read then: only what follows is read."""
    reader = Bodies()
    first = reader.read(_body([{"role": "user", "content": "one"}]))
    grown = reader.read(_body([{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}]))
    assert grown["messages"][0] is first["messages"][0]
    assert grown == loads(_body([{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}]))


def test_an_edited_start_is_read_again() -> None:
    reader = Bodies()
    first = reader.read(_body([{"content": "one"}, {"content": "two"}]))
    edited = reader.read(_body([{"content": "uno"}, {"content": "two"}, {"content": "three"}]))
    assert edited["messages"][1] is not first["messages"][1]
    assert [m["content"] for m in edited["messages"]] == ["uno", "two", "three"]


def test_an_item_changed_in_its_last_character_is_read_again() -> None:
    reader = Bodies()
    reader.read(b'{"messages":["ab",{"x":"cd"},7]}')
    assert reader.read(b'{"messages":["ab",{"x":"ce"},7,8]}') == {"messages": ["ab", {"x": "ce"}, 7, 8]}
    assert reader.read(b'{"messages":["ab",{"x":"ce"},8,8]}') == {"messages": ["ab", {"x": "ce"}, 8, 8]}


def test_a_number_that_goes_on_is_read_whole() -> None:
    reader = Bodies()
    reader.read(b'{"messages":[1,2]}')
    assert reader.read(b'{"messages":[1,23]}') == {"messages": [1, 23]}
    assert reader.read(b'{"messages":[1,23.5e1,4]}') == {"messages": [1, 235.0, 4]}


def test_nesting_too_deep_past_the_shared_start_is_refused() -> None:
    """Counted from the top: the object and the list it grows in are two levels of the hundred."""
    reader = Bodies()
    reader.read(_body([{"a": 1}]))
    deepest = json.loads("[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2))
    assert reader.read(_body([{"a": 1}, deepest]))["messages"][1] == deepest
    for body in (_body([{"a": 1}, deepest, [deepest]]), _body([{"a": 1}, deepest, [deepest], 1])):
        with pytest.raises(TooDeep):
            reader.read(body)
        with pytest.raises(TooDeep):
            loads(body)


def test_a_body_cut_after_a_shared_start_is_the_error_loads_gives() -> None:
    reader = Bodies()
    whole = _body([{"content": "one"}, {"content": "two"}])
    reader.read(whole)
    cut = _body([{"content": "one"}, {"content": "two"}, {"content": "three"}])[:-9]
    with pytest.raises(ValueError) as read:
        reader.read(cut)
    with pytest.raises(ValueError) as loaded:
        loads(cut)
    assert str(read.value) == str(loaded.value)


def test_a_body_that_is_not_an_object_reads_as_loads_reads_it() -> None:
    reader = Bodies()
    for body in (b"[1,2]", b'"text"', b"", b"  {}  ", b"{} x", b"\xff{}", b'{"a":[]}', b'{"a":[],"a":[1]}'):
        assert _outcome(reader.read, body) == _outcome(loads, body)


def test_a_body_over_the_bound_is_read_whole_and_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Why: the reader holds the last body until the next; one carrying a huge argument or attachment
    (up to the server's 64 MB) would stay in memory for nothing."""
    from app.demo import bodies

    reader = Bodies()
    small = _body([{"content": "one"}])
    monkeypatch.setattr(bodies, "KEEP_MOST", len(small))
    first = reader.read(small)
    large = _body([{"content": "one"}, {"content": "x" * 50}])
    read = reader.read(large)
    assert read == loads(large) and read["messages"][0] is not first["messages"][0]
    assert reader.read(large)["messages"][0] is not read["messages"][0]  # the large one left nothing to reuse


def _sitting(exchanges: int) -> list[list[Entry]]:
    """The histories a sitting sends: each exchange a question, a call, its result, the answer."""
    history: list[Entry] = []
    sent = []
    for i in range(exchanges):
        history.append(User(f"Show me order A-{1000 + i}"))
        sent.append(list(history))
        history.append(Assistant("", [CallRecord(f"call_{i}", "get_order", {"order_id": f"A-{1000 + i}"})]))
        history.append(ToolResult(f"call_{i}", "get_order", json.dumps({"id": f"A-{1000 + i}", "note": 'a "b"'})))
        sent.append(list(history))
        history.append(Assistant(f"Order A-{1000 + i} shipped.\n\n- one\n- two"))
    return sent


@pytest.mark.parametrize("dialect", sorted(REQUEST_BUILDERS))
def test_a_sittings_requests_in_every_dialect_read_as_loads_reads_them(dialect: str) -> None:
    """The bodies the client's own builders write, in each dialect: each reads as ``loads`` reads it,
    and each after the first keeps what the one before carried (the conversation's list grows at its
    end in every dialect)."""
    schema = {"type": "object", "properties": {"order_id": {"type": "string"}}}
    tools = [ToolSpec("get_order", "Look up an order", schema)]
    reader = Bodies()
    last: Any = None
    for history in _sitting(6):
        _, value = REQUEST_BUILDERS[dialect]("demo", history, tools, "Be brief.")
        body = encode(value)
        read = reader.read(body)
        assert json.dumps(read) == json.dumps(loads(body))
        if last is not None:
            listed = next(k for k, v in read.items() if isinstance(v, list) and len(v) > 1 and k != "tools")
            assert read[listed][0] is last[listed][0]
        last = read
