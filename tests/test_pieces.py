"""Argument buffers, prose and forming strings keep their text exactly,
in arrival order, while holding few objects however small the deltas."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from app.stream import TextBlock, ToolCallBlock
from app.stream.pieces import BIG, JOIN_EVERY, append_piece
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


def test_a_megabyte_buffer_is_held_in_pieces_of_at_least_big() -> None:
    """Why: pieces of a kilobyte are heap blocks, and the hole they leave when
    the buffer is joined stays resident beside the buffer and its parse; pieces
    of ``BIG`` or more are each mapped on their own and given back when freed.
    Only the pieces since the last big one (fewer than ``BIG`` in all) are small."""
    text = json.dumps({"body": "The parcel left the hub. " * 40_000})
    call = ToolCallBlock(id="c", name="t")
    for i in range(0, len(text), 16):
        call.add(text[i : i + 16])
    small = [p for p in call.fragments if len(p) < BIG]
    assert sum(map(len, small)) < BIG + 16 * JOIN_EVERY
    assert len(call.fragments) - len(small) <= len(text) // BIG
    assert call.arguments_raw == text


def test_a_piece_already_big_is_never_joined_again() -> None:
    """The second join takes only the small pieces after the last big one: a big piece is copied once."""
    big = "x" * BIG
    parts: list[str] = [big]
    loose = 0
    for _ in range(BIG // 8 + JOIN_EVERY):
        loose = append_piece(parts, "abcdefgh", loose)
    assert parts[0] is big and "".join(parts) == big + "abcdefgh" * (BIG // 8 + JOIN_EVERY)
    assert len(parts[1]) >= BIG
