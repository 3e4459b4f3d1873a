"""The demo's request parsers fold on from where the last body's fold ended when the next body begins
with it (``app/demo/dialects/resumed.py``), and always give what a fold from the start gives."""

from __future__ import annotations

import copy
import hashlib
import importlib
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.demo.bodies import Bodies
from app.demo.dialects import PARSERS, RequestError
from app.demo.dialects.base import Request
from app.demo.dialects.resumed import Resumed
from app.stream.attachments import Attachment
from app.stream.dialects import REQUEST_BUILDERS
from app.stream.history import Assistant, CallRecord, Entry, ToolResult, ToolSpec, User
from app.stream.jsonwrite import encode

DIALECTS = ("openai-chat", "openai-responses", "anthropic", "gemini")
_MODULES = {"openai-chat": "openai_chat", "openai-responses": "openai_responses", "anthropic": "anthropic",
            "gemini": "gemini"}
#: Each dialect's list of the conversation in a request body.
_LISTS = {"openai-chat": "messages", "anthropic": "messages", "openai-responses": "input", "gemini": "contents"}
_TOOLS = [ToolSpec("get_order", "An order by id.",
                   {"type": "object", "properties": {"order_id": {"type": "string"}}})]


def _module(dialect: str) -> ModuleType:
    return importlib.import_module(f"app.demo.dialects.{_MODULES[dialect]}")


def _image(tail: bytes) -> Attachment:
    data = b"\x89PNG\r\n\x1a\n" + tail
    return Attachment("shot.png", "image/png", len(data), hashlib.sha256(data).hexdigest(), data, 1, 1)


def _exchange(n: int, images: bool = False) -> list[Entry]:
    call = CallRecord(f"c{n}", "get_order", {"order_id": f"A-{n}"})
    shots = [_image(bytes([n % 256]))] if images else []
    result = ToolResult(f"c{n}", "get_order", f'{{"order": "A-{n}"}}', False, shots)
    return [User(f"order {n}?"), Assistant(f"Looking {n}." if n % 2 else "", [call]), result,
            Assistant(f"Order {n} shipped.")]


def _body(dialect: str, history: list[Entry]) -> bytes:
    _, body = REQUEST_BUILDERS[dialect]("demo", history, _TOOLS, "Be brief.")
    return encode(body)


def _fresh(dialect: str, payload: dict[str, Any]) -> Request:
    """A fold from the start (nothing kept to fold on from, and copies of the items), leaving the
    parser's kept fold as it was."""
    resumed = _module(dialect)._RESUMED
    kept, resumed._last = resumed._last, None
    try:
        return PARSERS[dialect](copy.deepcopy(payload))
    finally:
        resumed._last = kept


def _starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where each fold began (0: from the start)."""
    starts: list[int] = []
    take = Resumed.take

    def recording(self: Resumed[Any], items: list[Any]) -> tuple[int, Any]:
        start, state = take(self, items)
        starts.append(start)
        return start, state

    monkeypatch.setattr(Resumed, "take", recording)
    return starts


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_sittings_bodies_fold_on_from_the_last_and_read_as_from_the_start(
        dialect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Why: each request carries the whole conversation; at 450 exchanges the demo's fold of it took
    1.5 ms, twice an exchange, inside every Enter → ready of a sitting at full speed."""
    bodies = Bodies()
    history: list[Entry] = []
    starts = _starts(monkeypatch)
    for n in range(1, 7):
        history += _exchange(n, images=n == 3)
        for cut in (len(history) - 3, len(history) - 1, len(history)):  # each request of the exchange
            payload = bodies.read(_body(dialect, history[:cut]))
            request = PARSERS[dialect](payload)
            assert request.history == _fresh(dialect, payload).history
    assert sum(start > 0 for start in starts[::2]) >= 10  # (every second take is the fresh fold's)


_STEPS = st.lists(st.tuples(st.sampled_from(["grow", "grow", "images", "cut", "edit", "same"]),
                            st.integers(min_value=0, max_value=40)), min_size=1, max_size=10)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(DIALECTS), _STEPS)
def test_any_run_of_bodies_reads_as_a_fold_from_the_start(dialect: str, steps: list[tuple[str, int]]) -> None:
    bodies = Bodies()
    history: list[Entry] = _exchange(0)
    for step, (change, n) in enumerate(steps, start=1):
        if change == "grow":
            history = history + _exchange(step)[: 1 + n % 4]
        elif change == "images":
            history = history + _exchange(step, images=True)[:3]
        elif change == "cut" and len(history) > 1:
            history = history[: 1 + n % (len(history) - 1)]
        elif change == "edit":
            history = [*history]
            history[n % len(history)] = User(f"edited {step}")
        payload = bodies.read(_body(dialect, history))
        assert PARSERS[dialect](payload).history == _fresh(dialect, payload).history


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_bad_body_leaves_nothing_to_fold_on_from(dialect: str) -> None:
    """A fold that fails half-way (the client gets a 400) may have changed the state it took: it is not
    kept, and the next body is folded from the start, as it reads."""
    bodies = Bodies()
    history = _exchange(1) + _exchange(2)
    good = bodies.read(_body(dialect, history))
    PARSERS[dialect](good)
    key = _LISTS[dialect]
    bad = dict(good)
    bad[key] = [*good[key], "not an object"]
    with pytest.raises(RequestError):
        PARSERS[dialect](bad)
    assert _module(dialect)._RESUMED._last is None
    later = bodies.read(_body(dialect, history + _exchange(3)))
    assert PARSERS[dialect](later).history == _fresh(dialect, later).history
