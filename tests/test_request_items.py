"""A request's items for entries unchanged since the last request are the same objects; any change to
an entry gives a new item; and the body is always what a fresh build of the same history is."""

from __future__ import annotations

import copy
import gc
import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.stream.attachments import Attachment
from app.stream.dialects import openai_chat
from app.stream.dialects.openai_chat import build_request
from app.stream.history import Assistant, CallRecord, Entry, ToolResult, User
from app.stream.jsonwrite import plain


def _body(history: list[Entry]) -> str:
    _, body = build_request("m", history, [])
    return json.dumps(plain(body), ensure_ascii=False)


def _fresh(history: list[Entry]) -> str:
    """The body of copies of the entries (no item of the memo can be theirs), leaving the memo as the
    last build of ``history`` left it."""
    kept = openai_chat._BUILT._last
    try:
        return _body(copy.deepcopy(history))
    finally:
        openai_chat._BUILT._last = kept


def _image(tail: bytes) -> Attachment:
    data = b"\x89PNG\r\n\x1a\n" + tail
    return Attachment("shot.png", "image/png", len(data), hashlib.sha256(data).hexdigest(), data)


def _exchange(n: int) -> list[Entry]:
    call = CallRecord(f"c{n}", "get_order", {"order_id": f"A-{n}", "qty": n})
    return [User(f"order {n}?"), Assistant("", [call]), ToolResult(f"c{n}", "get_order", json.dumps({"n": n})),
            Assistant(f"Order {n} shipped.")]


def test_a_growing_history_reuses_the_items_of_the_entries_it_had() -> None:
    """Why: the body's writer and the recording compare each item with the last request's; the same
    object stops them at once (at 450 exchanges they compared 1,800 dicts value by value, twice an
    exchange)."""
    history = _exchange(1)
    _, first = build_request("m", history, [])
    history += _exchange(2)
    _, second = build_request("m", history, [])
    assert all(a is b for a, b in zip(first["messages"], second["messages"][:4], strict=True))
    assert not any(m is n for m in second["messages"][4:] for n in first["messages"])
    assert _body(history) == _fresh(history)


def test_a_request_of_an_unchanged_history_leaves_nothing_new_to_collect() -> None:
    """Why: what a request leaves alive until the next one is walked by every young collection meanwhile
    and by the collection after the turn (``tui.collector``); a hit keeps the very record it had, so the
    memo of 400 unchanged entries leaves no new object for each (it left 400 new records, each with its mark)."""
    history = [entry for n in range(100) for entry in _exchange(n)]
    build_request("m", history, [])
    gc.collect()
    before = {id(o) for o in gc.get_objects()}
    _, body = build_request("m", history, [])
    gc.collect()
    new = [o for o in gc.get_objects() if id(o) not in before]
    assert len(new) < 20, sorted({type(o).__name__ for o in new})
    assert len(body["messages"]) == 400


def test_an_entry_changed_in_place_gets_a_new_item() -> None:
    history = _exchange(1)
    _, first = build_request("m", history, [])
    result = history[2]
    assert isinstance(result, ToolResult)
    result.images.append(_image(b"fake"))  # as with_tool_images does
    history[3].text = "Order 1 has shipped, and here is its picture."  # type: ignore[union-attr]
    _, second = build_request("m", history, [])
    assert second["messages"][0] is first["messages"][0] and second["messages"][1] is first["messages"][1]
    assert second["messages"][2] is not first["messages"][2]
    assert _body(history) == _fresh(history)
    assert "here is its picture" in _body(history) and "image_url" in _body(history)


def test_another_history_built_in_between_costs_a_rebuild_not_a_wrong_item() -> None:
    history = _exchange(1) + _exchange(2)
    other = _exchange(7)
    build_request("m", history, [])
    build_request("m", other, [])
    assert _body(history) == _fresh(history)
    assert _body(other) == _fresh(other)


_EDITS = st.lists(st.tuples(st.sampled_from(["append", "text", "images", "calls", "drop", "swap"]),
                            st.integers(min_value=0, max_value=30)), max_size=12)


@settings(max_examples=60, deadline=None)
@given(_EDITS)
def test_any_run_of_edits_is_sent_as_a_fresh_build_would_send_it(edits: list[tuple[str, int]]) -> None:
    history: list[Entry] = _exchange(0)
    for step, (edit, n) in enumerate(edits):
        entry: Any = history[n % len(history)] if history else None
        if edit == "append" or entry is None:
            history = history + _exchange(step + 1)  # a new list, as a branch or a reload makes
        elif edit == "text" and isinstance(entry, User | Assistant):
            entry.text = f"edited {step}"
        elif edit == "images" and isinstance(entry, ToolResult):
            entry.images.append(_image(bytes([step])))
        elif edit == "calls" and isinstance(entry, Assistant):
            entry.calls.append(CallRecord(f"x{step}", "get_order", {"order_id": str(step)}))
        elif edit == "drop" and len(history) > 1:
            history = history[:-1]
        elif edit == "swap" and len(history) > 1:
            history[0], history[-1] = history[-1], history[0]
        assert _body(history) == _fresh(history)


def test_every_field_of_every_entry_type_is_in_its_mark() -> None:
    """Why: an entry's item is given again while its mark is unchanged; a field the mark leaves out
    (one added to an entry type later) would be sent stale after an in-place change."""
    from dataclasses import fields

    from app.stream.dialects.built import _MARKS

    samples: list[Entry] = [User("hi", []), Assistant("a", [], None), ToolResult("c", "t", "r", False, [])]
    changed = {str: "changed", bool: True, type(None): "a note", list: [object()]}
    assert set(_MARKS) == {type(e) for e in samples}
    for entry in samples:
        for spec in fields(entry):
            twin = copy.copy(entry)
            value = getattr(twin, spec.name)
            if isinstance(value, list):
                setattr(twin, spec.name, [*value, object()])  # as an append in place would leave it
            else:
                setattr(twin, spec.name, changed[type(value)])
            assert _MARKS[type(entry)](twin) != _MARKS[type(entry)](entry), (type(entry).__name__, spec.name)
