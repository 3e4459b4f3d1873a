"""Synthetic streams from tests/streamgen.py, in all four dialects: what real
recordings do not reach (interleaved calls of one tool, a megabyte of escaped
arguments, text before, between and after calls)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.stream import assemble
from tests import streamgen
from tests.streamgen import ENCODERS

DIALECTS = list(ENCODERS)

TWO_SEARCHES = streamgen.interleave(
    streamgen.call_script(0, "call_a", "search_orders", json.dumps({"customer": "Ada Lovelace", "status": "open"}), 3),
    streamgen.call_script(1, "call_b", "search_orders", json.dumps({"customer": "Ada Lovelace", "status": "late"}), 5),
)


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses", "anthropic"])
def test_two_calls_of_the_same_tool_interleaved_fragment_by_fragment(dialect: str) -> None:
    turn = assemble([ENCODERS[dialect](TWO_SEARCHES)])
    assert turn.outcome == "complete"
    assert [(c.id, c.name, c.arguments) for c in turn.calls] == [
        ("call_a", "search_orders", {"customer": "Ada Lovelace", "status": "open"}),
        ("call_b", "search_orders", {"customer": "Ada Lovelace", "status": "late"}),
    ]


def _nasty_value(size: int) -> str:
    unit = 'quote " backslash \\ newline \n tab \t e\u0301 \u00e9 \u4e2d \U0001f600 \u2028 nul-ish \x01 '
    return (unit * (size // len(unit) + 1))[:size]


def _escaped_args(size: int) -> tuple[str, dict[str, str]]:
    value = {"body": _nasty_value(size)}
    # ensure_ascii=True writes \uXXXX escapes and surrogate pairs for the emoji
    return json.dumps(value, ensure_ascii=True), value


@pytest.mark.parametrize("dialect", DIALECTS)
def test_text_before_between_and_after_calls_stays_in_order(dialect: str) -> None:
    script = (
        [("text", "Let me look. ")]
        + streamgen.call_script(0, "c1", "get_order", '{"order_id": "A-1001"}')
        + [("text", "And the other one. ")]
        + streamgen.call_script(1, "c2", "get_order", '{"order_id": "A-1002"}')
        + [("text", "Both found.")]
    )
    turn = assemble([ENCODERS[dialect](script, **({"finish": "STOP"} if dialect == "gemini" else {}))])
    assert turn.outcome == "complete", turn.error
    shape = [(b.type, b.text if b.type == "text" else b.arguments) for b in turn.blocks]
    assert shape == [
        ("text", "Let me look. "),
        ("tool_call", {"order_id": "A-1001"}),
        ("text", "And the other one. "),
        ("tool_call", {"order_id": "A-1002"}),
        ("text", "Both found."),
    ]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_one_megabyte_of_escaped_arguments_split_inside_escapes(dialect: str) -> None:
    text, value = _escaped_args(1_000_000)
    assert len(text) > 1_000_000
    # 13-character fragments cut \uXXXX escapes, surrogate pairs and \" apart
    script = [("text", "Writing it.")] + streamgen.call_script(0, "big", "create_ticket", text, 13)
    body = ENCODERS[dialect](script)
    turn = assemble(streamgen.chunked(body, 4096))
    assert turn.outcome == "complete"
    assert turn.calls[0].final
    assert turn.calls[0].arguments == value


@pytest.mark.parametrize("dialect", DIALECTS)
@given(cuts=st.lists(st.integers(min_value=1, max_value=20_000), max_size=30))
def test_any_split_of_a_synthetic_escaped_stream_gives_the_same_turn(dialect: str, cuts: list[int]) -> None:
    text, _ = _escaped_args(600)
    script = (
        [("reasoning", "Think \u00e9."), ("text", "Pre \u2028 amble. ")]
        + streamgen.call_script(0, "x1", "create_ticket", text, 5)
        + [("text", "after")]
    )
    body = ENCODERS[dialect](script)
    points = sorted({c % len(body) for c in cuts if c % len(body)})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=False)]
    assert assemble(pieces).to_dict() == assemble([body]).to_dict()


def test_every_byte_offset_inside_escapes_and_multibyte_utf8() -> None:
    """Raw (not \\u-escaped) multi-byte UTF-8 and escapes, every offset, every dialect."""
    args = json.dumps({"q": 'é "x" \\ \u4e2d \U0001f600 \\u0041'}, ensure_ascii=False)
    for dialect in DIALECTS:
        body = ENCODERS[dialect](streamgen.call_script(0, "u", "search_orders", args, 2))
        whole = assemble([body]).to_dict()
        assert whole["blocks"][0]["arguments"] == json.loads(args)
        for cut in range(1, len(body)):
            assert assemble([body[:cut], body[cut:]]).to_dict() == whole, (dialect, cut)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_same_script_gives_the_same_blocks_in_every_dialect(dialect: str) -> None:
    script = (
        [("reasoning", "hmm"), ("text", "Checking. ")]
        + TWO_SEARCHES[:0]
        + streamgen.call_script(0, "k", "search_orders", '{"status": "open", "limit": 5}')
    )
    turn = assemble([ENCODERS[dialect](script)])
    assert [(b.type, b.text if b.type != "tool_call" else b.arguments) for b in turn.blocks] == [
        ("reasoning", "hmm"),
        ("text", "Checking. "),
        ("tool_call", {"status": "open", "limit": 5}),
    ]
