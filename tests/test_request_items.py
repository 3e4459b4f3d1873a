"""A request's items for the entries it shares with the last request are the same objects; a change
said (``history.changed``) gives new items, one unsaid fails loudly under the suite's check; and the body
is always what a fresh build of the same history is."""

from __future__ import annotations

import copy
import gc
import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.stream.attachments import Attachment
from app.stream.dialects import REQUEST_BUILDERS, anthropic, gemini, openai_chat, openai_responses
from app.stream.dialects.built import CHECK_ENV
from app.stream.dialects.openai_chat import build_request
from app.stream.history import Assistant, CallRecord, Entry, ToolResult, User, changed
from app.stream.jsonwrite import plain

#: Each dialect's request builder module (each keeps its last build).
_MODULES = {"openai-chat": openai_chat, "openai-responses": openai_responses, "anthropic": anthropic,
            "gemini": gemini}


def _body(history: list[Entry], dialect: str = "openai-chat") -> str:
    _, body = REQUEST_BUILDERS[dialect]("m", history, [], "Be brief.")
    return json.dumps(plain(body), ensure_ascii=False)


def _fresh(history: list[Entry], dialect: str = "openai-chat") -> str:
    """The body of copies of the entries (no item of the last build can be theirs), leaving the builder
    as the last build of ``history`` left it."""
    built = _MODULES[dialect]._BUILT  # type: ignore[attr-defined]
    kept = built._last
    try:
        return _body(copy.deepcopy(history), dialect)
    finally:
        built._last = kept


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
    and by the collection after the turn (``tui.collector``); the items of 400 unchanged entries are the
    last build's (it left 400 new records, each with its mark, under a memo by entry)."""
    history = [entry for n in range(100) for entry in _exchange(n)]
    build_request("m", history, [])
    gc.collect()
    before = {id(o) for o in gc.get_objects()}
    _, body = build_request("m", history, [])
    gc.collect()
    new = [o for o in gc.get_objects() if id(o) not in before]
    assert len(new) < 20, sorted({type(o).__name__ for o in new})
    assert len(body["messages"]) == 400


def test_a_change_in_place_said_gets_new_items() -> None:
    history = _exchange(1) + _exchange(2)
    _, first = build_request("m", history, [])
    result = history[2]
    assert isinstance(result, ToolResult)
    result.images.append(_image(b"fake"))  # as with_tool_images does
    changed()
    _, second = build_request("m", history, [])
    assert not any(m is n for m in second["messages"] for n in first["messages"])  # built whole
    assert _body(history) == _fresh(history)
    assert "image_url" in _body(history)


def test_a_change_in_place_unsaid_fails_loudly_under_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite runs with the check on (``conftest.py``): a path that changes a built entry and does not
    say so breaks a test instead of sending the model a stale request."""
    assert os.environ.get(CHECK_ENV)
    history = _exchange(1) + _exchange(2)
    build_request("m", history, [])
    history[0].text = "edited"  # type: ignore[union-attr]
    with pytest.raises(AssertionError, match="changed in place"):
        build_request("m", history, [])
    monkeypatch.delenv(CHECK_ENV)
    build_request("m", history, [])  # (unchecked, as a user's program runs: not raised)


def test_another_history_built_in_between_costs_a_rebuild_not_a_wrong_item() -> None:
    history = _exchange(1) + _exchange(2)
    other = _exchange(7)
    build_request("m", history, [])
    build_request("m", other, [])
    assert _body(history) == _fresh(history)
    assert _body(other) == _fresh(other)


def test_tool_images_waiting_for_their_message_are_never_cut_from_it() -> None:
    """OpenAI chat sends a tool's images in a user message after the results; a history that grows
    between the results and that message is built from before the results."""
    history = _exchange(1)[:3]
    result = history[2]
    assert isinstance(result, ToolResult)
    result.images.append(_image(b"one"))
    build_request("m", history, [])
    history += [ToolResult("c9", "get_order", "{}", False, [_image(b"two")]), User("and?")]
    assert _body(history) == _fresh(history)
    assert _body(history).count("\"type\": \"image_url\"") == 2


_STEPS = ["append", "grow", "user", "user", "text", "images", "calls", "drop", "drop", "swap"]
_EDITS = st.lists(st.tuples(st.sampled_from(_STEPS), st.integers(min_value=0, max_value=30)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_MODULES)), _EDITS)
def test_any_run_of_edits_is_sent_as_a_fresh_build_would_send_it(dialect: str, edits: list[tuple[str, int]]) -> None:
    """Every dialect's builder, the merging ones too (Anthropic and Gemini put consecutive entries of a
    role in one message: a reused message is replaced by a merged one, never extended)."""
    history: list[Entry] = _exchange(0)
    for step, (edit, n) in enumerate(edits):
        entry: Any = history[n % len(history)] if history else None
        if edit == "append" or entry is None:
            history = history + _exchange(step + 1)  # a new list, as a branch or a reload makes
        elif edit == "text" and isinstance(entry, User | Assistant):
            entry.text = f"edited {step}"
            changed()
        elif edit == "images" and isinstance(entry, ToolResult):
            entry.images.append(_image(bytes([step])))
            changed()
        elif edit == "calls" and isinstance(entry, Assistant):
            entry.calls.append(CallRecord(f"x{step}", "get_order", {"order_id": str(step)}))
            changed()
        elif edit == "drop" and len(history) > 1:
            history = history[:-1]
        elif edit == "swap" and len(history) > 1:
            history[0], history[-1] = history[-1], history[0]
        elif edit == "grow":
            history += _exchange(step + 1)  # the same list, grown, as a live session's
        elif edit == "user":
            history += [User(f"and {step}?")]  # after a result: merged into its message where roles merge
        assert _body(history, dialect) == _fresh(history, dialect)


@pytest.mark.parametrize("dialect", sorted(_MODULES))
def test_an_entry_merged_into_a_reused_message_leaves_that_message_as_it_was(dialect: str) -> None:
    """Anthropic and Gemini send a result and the user's next words in one message: built from the
    last build's messages, that merge makes a new message; the reused one, which the last request and
    the next reuse hold, is not extended (a request that drops the words again sends it without them)."""
    history = _exchange(1)[:3]  # ends with a result
    _body(history, dialect)
    history = [*history, User("and the other one?")]
    assert _body(history, dialect) == _fresh(history, dialect)
    history = history[:-1]
    assert "the other one" not in _body(history, dialect)
    assert _body(history, dialect) == _fresh(history, dialect)


def test_every_field_of_every_entry_type_is_in_its_mark() -> None:
    """Why: the suite's check compares each reused entry's mark; a field the mark leaves out (one added to
    an entry type later) could be changed in place unsaid and go unseen."""
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


def test_a_tool_image_that_reaches_a_result_after_it_was_sent_is_sent_with_the_next_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``with_tool_images`` gives a result its image when the image's file is there; a result built
    while the file was not (written later, by another conversation's tool with the same image) says
    so (``history.changed``), and the next request carries the image."""
    from PIL import Image

    from app.chat.attaching import with_tool_images
    from app.stream.attachments import tool_image_line

    monkeypatch.setenv("CALLSTREAM_HOME", str(tmp_path))
    monkeypatch.delenv(CHECK_ENV)  # (the check would name the change; this is about the request)
    picture = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(picture, "PNG")
    data = picture.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    history = _exchange(1)[:2] + [ToolResult("c1", "get_order", tool_image_line("image/png", "4×4", digest))]
    history += [Assistant("Here it is."), User("thanks")]
    with_tool_images(history)
    assert '"type": "image_url"' not in _body(history)  # no file yet: the line only
    stored = tmp_path / "attachments" / digest[:2] / digest
    stored.parent.mkdir(parents=True)
    stored.write_bytes(data)
    with_tool_images(history)
    assert '"type": "image_url"' in _body(history)
    assert _body(history) == _fresh(history)


def test_tool_images_are_looked_for_only_in_what_a_history_adds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Why: every request looked at every result's text for an image reference, a cost that grew with
    the conversation; a result still waiting for its image file is looked at again each time."""
    from app.chat import attaching
    from app.stream.attachments import tool_image_line

    looked: list[int] = []
    real = attaching._given_images
    monkeypatch.setattr(attaching, "_given_images", lambda entry: looked.append(id(entry)) or real(entry))
    waiting = ToolResult("c0", "get_order", tool_image_line("image/png", "4×4", "0" * 64))  # its file: none
    history = [*_exchange(1), waiting, *_exchange(2)]
    attaching.with_tool_images(history)
    assert len(looked) == len(history)
    looked.clear()
    history += _exchange(3)
    attaching.with_tool_images(history)
    assert looked == [id(waiting), *map(id, history[-4:])]
    looked.clear()
    attaching.with_tool_images(history[:3] + history[5:])  # another path: looked at whole
    assert len(looked) == len(history) - 2


def test_the_system_message_is_the_same_object_request_after_request() -> None:
    """Why: it leads OpenAI chat's list, and the body's writer and the recording find what a request
    shares with the last one from the start, by identity; a new one each request made them compare the
    other 1,800 messages of a long conversation value by value."""
    history = _exchange(1)
    _, first = build_request("m", history, [], "Be brief.")
    history += _exchange(2)
    _, second = build_request("m", history, [], "Be brief.")
    assert second["messages"][0] is first["messages"][0]
    assert all(a is b for a, b in zip(first["messages"], second["messages"][:5], strict=True))
    _, other = build_request("m", history, [], "Be terse.")
    assert other["messages"][0]["content"] == "Be terse."
