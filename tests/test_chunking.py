"""Chunk invariance: any split of any stream gives the identical turn; and a
stream cut at any byte never yields a final call that differs from the
complete stream's (the prefix property of reliability.md §4.2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.stream import StreamParser, Turn, assemble
from tests import streamgen
from tests.conftest import fixture_params, real_fixtures

#: Fixtures up to this size are split at every byte offset by default; the
#: rest (and all of them, under --run-slow) in the exhaustive variant.
EVERY_OFFSET_DEFAULT = 4200


def canonical(turn: Turn) -> str:
    return json.dumps(turn.to_dict(), sort_keys=True)


def split_at(data: bytes, points: list[int]) -> list[bytes]:
    points = sorted(set(p for p in points if 0 < p < len(data)))
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=False)]


def _bodies() -> list[bytes]:
    return [p.read_bytes() for p in real_fixtures()]


BODIES = _bodies()


@pytest.mark.skipif(not BODIES, reason="real fixtures absent: ../shared/fixtures/real not found")
@given(data=st.data())
def test_any_random_split_of_any_fixture_gives_the_same_turn(data: st.DataObject) -> None:
    body = data.draw(st.sampled_from(BODIES))
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=40))
    assert canonical(assemble(split_at(body, cuts))) == canonical(assemble([body]))


@pytest.mark.parametrize("path", fixture_params())
@pytest.mark.parametrize("size", [1, 3, 64])
def test_fixed_size_chunks_give_the_same_turn(path: Path, size: int) -> None:
    body = path.read_bytes()
    assert canonical(assemble(streamgen.chunked(body, size))) == canonical(assemble([body]))


def _unmetered(turn: Turn) -> str:
    document = turn.to_dict()
    document.pop("usage", None)
    return json.dumps(document, sort_keys=True)


def _every_offset(body: bytes) -> None:
    whole = canonical(assemble([body]))
    for cut in range(1, len(body)):
        assert canonical(assemble([body[:cut], body[cut:]])) == whole, f"split at byte {cut}"


def _prefix_property(body: bytes) -> None:
    whole = assemble([body])
    for cut in range(len(body)):
        turn = assemble([body[:cut]])
        if turn.outcome == "complete":
            # only possible once the terminal marker is inside the prefix; a chat body may end
            # cleanly after its finish reason and before its usage chunk: no usage, never another one
            assert _unmetered(turn) == _unmetered(whole)
            assert turn.usage is None or turn.usage == whole.usage, f"cut at {cut}: other usage"
            continue
        assert turn.outcome == "cut_off" or turn.outcome == whole.outcome
        for index, block in enumerate(turn.blocks):
            if block.type == "tool_call" and block.final:
                full = whole.blocks[index]
                assert full.type == "tool_call" and full.final, f"cut at {cut}: a call final only in the prefix"
                assert block.arguments == full.arguments, f"cut at {cut}: final arguments differ"


def _small() -> list[object]:
    return [p for p in fixture_params() if p.values[0] is None or p.values[0].stat().st_size <= EVERY_OFFSET_DEFAULT]


def _large() -> list[object]:
    return [
        p for p in fixture_params() if p.values[0] is not None and p.values[0].stat().st_size > EVERY_OFFSET_DEFAULT
    ]


@pytest.mark.parametrize("path", _small())
def test_every_byte_offset_split_of_small_fixtures(path: Path) -> None:
    _every_offset(path.read_bytes())


@pytest.mark.slow
@pytest.mark.parametrize("path", _large())
def test_every_byte_offset_split_of_large_fixtures(path: Path) -> None:
    _every_offset(path.read_bytes())


@pytest.mark.parametrize("path", _small())
def test_cut_at_every_byte_never_finalises_a_different_call(path: Path) -> None:
    _prefix_property(path.read_bytes())


@pytest.mark.slow
@pytest.mark.parametrize("path", _large())
def test_cut_at_every_byte_never_finalises_a_different_call_large(path: Path) -> None:
    _prefix_property(path.read_bytes())


def test_incremental_updates_rebuild_the_same_blocks() -> None:
    """What the live path sees (updates) is enough to rebuild the turn."""
    script = (
        [("text", "Looking that up. ")]
        + streamgen.interleave(
            streamgen.call_script(0, "c1", "search_orders", '{"status":"open","q":"a\\"b"}', 3),
            streamgen.call_script(1, "c2", "search_orders", '{"status":"late"}', 4),
        )
        + [("text", "Done.")]
    )
    body = streamgen.openai_chat(script)
    parser = StreamParser()
    rebuilt: dict[int, str] = {}
    closed: list[tuple[int, bool]] = []
    updates = []
    for chunk in streamgen.chunked(body, 17):
        updates.extend(parser.feed(chunk))
    turn = parser.close()
    updates.extend(parser.updates())
    for update in updates:
        name = type(update).__name__
        if name == "BlockAdded":
            rebuilt[update.index] = ""
        elif name == "BlockChanged":
            rebuilt[update.index] += update.delta
        elif name == "CallClosed":
            closed.append((update.index, update.final))
    assert [type(u).__name__ for u in updates][-1] == "TurnClosed"
    assert rebuilt == {i: (b.text if b.type != "tool_call" else b.arguments_raw) for i, b in enumerate(turn.blocks)}
    assert closed == [(1, True), (2, True)]


def test_call_timings_come_from_the_caller_clock() -> None:
    body = streamgen.anthropic(streamgen.call_script(0, "c", "f", '{"a": 1}', 3))
    parser = StreamParser()
    chunks = streamgen.chunked(body, 40)
    for i, piece in enumerate(chunks):
        parser.feed(piece, at=float(i))
    turn = parser.close(at=999.0)
    call = turn.calls[0]
    assert call.announced_at is not None and call.ended_at is not None
    assert 0.0 <= call.announced_at < call.ended_at < len(chunks)
