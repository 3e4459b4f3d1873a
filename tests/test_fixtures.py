"""Every real recorded stream in ../shared/fixtures/real assembles, and where
the official SDK handles it, callstream's blocks equal the SDK's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.stream import ToolCallBlock, assemble
from tests.conftest import fixture_params
from tests.oracles import ORACLES

# Recorded without the blank line after its last event: by the WHATWG rules
# that last frame (message_stop) is discarded, so the turn has no terminal
# marker. The SDK's decoder dispatches it anyway; we keep to the spec. The
# call itself ended (content_block_stop arrived), so it stays final.
NO_FINAL_BLANK_LINE = {"anthropic-sdk-preamble-get-weather"}


@pytest.mark.parametrize("path", fixture_params())
def test_fixture_assembles_with_every_call_final(path: Path) -> None:
    turn = assemble([path.read_bytes()])
    assert turn.dialect == path.parent.name
    expected = "cut_off" if path.stem in NO_FINAL_BLANK_LINE else "complete"
    assert turn.outcome == expected, turn.error
    calls = turn.calls
    assert calls, "every fixture holds at least one call"
    for call in calls:
        assert call.ended and call.name
        if call.provider_executed:
            assert not call.final  # run by the provider: never dispatched here
        else:
            assert call.final, call.problem
            assert isinstance(call.arguments, dict)
            assert call.arguments == json.loads(call.arguments_raw or "{}")


@pytest.mark.parametrize("path", fixture_params())
def test_fixture_dialect_is_detected_and_forced_dialect_agrees(path: Path) -> None:
    body = path.read_bytes()
    assert assemble([body]).to_dict() == assemble([body], dialect=path.parent.name).to_dict()


@pytest.mark.parametrize("path", fixture_params())
def test_fixture_blocks_equal_the_official_sdk(path: Path) -> None:
    oracle = ORACLES.get(path.parent.name)
    if oracle is None:
        pytest.skip(reason="no official SDK oracle for this dialect among the test dependencies")
    body = path.read_bytes()
    turn = assemble([body])
    ours = {
        "text": turn.text,
        "calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments if c.final else json.loads(c.arguments_raw or "{}")}
            for c in turn.blocks
            if isinstance(c, ToolCallBlock)
        ],
    }
    assert ours == oracle(body)


@pytest.mark.parametrize("path", fixture_params())
def test_fixture_blocks_keep_event_order(path: Path) -> None:
    """Text between calls stays between them: blocks alternate as the wire did."""
    turn = assemble([path.read_bytes()])
    kinds = [b.type for b in turn.blocks]
    # no two adjacent prose blocks of the same kind: they would have been one
    for a, b in zip(kinds, kinds[1:], strict=False):
        assert not (a == b and a != "tool_call")


def test_preamble_then_calls_order_in_a_known_fixture() -> None:
    params = [p for p in fixture_params() if getattr(p, "values", [None])[0] is not None]
    if not params:
        pytest.skip(reason="real fixtures absent")
    path = next(p.values[0] for p in params if p.values[0].stem == "pydantic-ai-tool-search-server-plus-client")
    turn = assemble([path.read_bytes()])
    assert [b.type for b in turn.blocks] == ["text", "tool_call", "text", "tool_call"]
    assert [c.name for c in turn.calls] == ["tool_search_tool_bm25", "get_exchange_rate"]
    assert turn.calls[0].provider_executed and not turn.calls[1].provider_executed
