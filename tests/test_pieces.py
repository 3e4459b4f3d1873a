"""Argument buffers, prose and forming strings keep their text exactly,
in arrival order, while holding few objects however small the deltas."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from app.stream import TextBlock, ToolCallBlock
from app.stream.pieces import JOIN_EVERY, append_piece
from app.stream.preview import KEPT, FormingPreview

_PIECES = st.lists(st.text(max_size=6), max_size=400)


@given(_PIECES)
def test_a_call_buffer_is_its_fragments_joined_in_order(pieces: list[str]) -> None:
    call = ToolCallBlock(id="c", name="t")
    for piece in pieces:
        call.add(piece)
    assert call.arguments_raw == "".join(pieces)
    assert call.size == len(call.arguments_raw)


@given(_PIECES)
def test_prose_is_its_deltas_joined_in_order(pieces: list[str]) -> None:
    block = TextBlock()
    for i, piece in enumerate(pieces):
        block.append(piece)
        if i % 97 == 3:
            assert block.text == "".join(pieces[: i + 1])  # a read in between changes nothing
    assert block.text == "".join(pieces)


@given(st.lists(st.integers(min_value=0, max_value=5), max_size=300), st.integers(min_value=0, max_value=300))
def test_a_wrong_loose_count_never_changes_the_text(sizes: list[int], wrong: int) -> None:
    parts: list[str] = []
    loose = wrong  # as after the list was cleared or replaced behind the counter's back
    expected = ""
    for i, size in enumerate(sizes):
        piece = str(i % 10) * size
        expected += piece
        loose = append_piece(parts, piece, loose)
    assert "".join(parts) == expected


def test_a_megabyte_in_four_character_fragments_is_a_few_thousand_objects() -> None:
    body = "abcd" * 250_000
    call = ToolCallBlock(id="c", name="t")
    preview = FormingPreview()
    text = json.dumps({"body": body})
    for i in range(0, len(text), 4):
        call.add(text[i : i + 4])
        preview.feed(text[i : i + 4])
        if i == len(text) // 2:
            assert len(call.fragments) <= len(text) // 4 // JOIN_EVERY + JOIN_EVERY
            assert all(len(p) <= len(text) // 4 // JOIN_EVERY + JOIN_EVERY for p in preview._open_strings.values())
    assert call.arguments_raw == text
    assert preview.stable_names() == {"body"}
    assert preview._values[("body",)] == body[:KEPT]  # the card's line needs no more: the value is the call's
