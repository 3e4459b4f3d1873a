"""JSON written in pieces is the same text json.dumps writes, whatever the piece size."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.stream import jsonwrite

_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner,
                                                                                             max_size=5), max_leaves=30)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@given(_VALUES, st.integers(min_value=1, max_value=9))
def test_pieces_joined_are_json_dumps_whatever_the_piece_size(value: Any, piece: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonwrite, "PIECE", piece)
        assert "".join(jsonwrite.pieces(value)) == _dumps(value)
        assert jsonwrite.encode(value) == _dumps(value).encode("utf-8")


def test_a_long_string_comes_in_pieces_of_bounded_size() -> None:
    text = 'quote " back\\slash \n tab\t caf\u00e9 \U0001f600 ' * 20_000
    parts = list(jsonwrite.pieces({"body": text}))
    assert max(len(p) for p in parts) <= jsonwrite.PIECE * 2  # escapes may double a slice, no more
    assert "".join(parts) == _dumps({"body": text})


def test_a_long_list_of_numbers_comes_in_pieces_of_bounded_size() -> None:
    """Why: a value of small items is written at once (``small_text``); its numbers count toward
    the bound as its strings do, so an embedding of a million numbers is not one string."""
    value = {"v": list(range(300_000)), "f": [0.1] * 50_000, "n": [None, True] * 50_000}
    parts = list(jsonwrite.pieces(value))
    assert max(len(p) for p in parts) <= jsonwrite.PIECE
    assert "".join(parts) == _dumps(value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_number_json_cannot_write_is_refused_as_json_dumps_refuses_it(bad: float) -> None:
    with pytest.raises(ValueError):
        jsonwrite.encode({"x": bad})


@pytest.mark.parametrize("bad", [math.nan, -math.inf])
def test_a_number_json_cannot_write_is_named_in_a_small_value_too(bad: float) -> None:
    """Why: a small value is written by json's own encoder, whose refusal does not name the number;
    a config option of ``[1.0, -inf]`` must say ``-inf``."""
    with pytest.raises(ValueError, match=repr(bad)):
        jsonwrite.encode([1.0, bad])


def test_a_value_json_cannot_write_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        jsonwrite.encode({"x": object()})


def test_non_string_keys_are_written_as_json_dumps_writes_them() -> None:
    value = {7: "a", 2.5: "b", True: "c", False: "e", None: "d"}
    assert jsonwrite.encode(value) == _dumps(value).encode()


@given(st.binary(max_size=200_000), st.sampled_from(["", "data:image/png;base64,"]))
def test_an_attachments_base64_written_in_pieces_is_the_whole_base64(data: bytes, prefix: str) -> None:
    """Why: a request body streams an attachment's base64 a slice at a time (never held whole);
    the slices joined must be exactly the base64 a provider decodes, and the length a
    Content-Length counts."""
    import base64

    from app.stream.attachments import Base64Text
    from app.stream.jsonwrite import encode, plain

    text = Base64Text(data, prefix)
    whole = prefix + base64.b64encode(data).decode("ascii")
    assert str(text) == whole and len(text) == len(whole) and text == whole
    body = {"parts": [{"data": text, "name": "é"}]}
    assert encode(body) == json.dumps(plain(body), ensure_ascii=False, separators=(",", ":")).encode()


@given(st.dictionaries(st.text(max_size=8), _VALUES, max_size=5), st.integers(min_value=1, max_value=9))
def test_a_values_json_text_as_a_string_value_is_json_dumps_of_it(value: dict[str, Any], piece: int) -> None:
    """Why: the OpenAI wires carry a call's arguments as a string; ``JSONText``
    writes that string from the dict a piece at a time, and it must be the
    text ``json.dumps(arguments, ensure_ascii=False)`` wrote (the bytes a
    provider has always been sent), escaped inside the body as a ``str`` is."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonwrite, "PIECE", piece)
        text = jsonwrite.JSONText(value)
        whole = json.dumps(value, ensure_ascii=False)
        assert str(text) == whole and text == whole
        body = {"arguments": text, "n": [text]}
        assert jsonwrite.encode(body) == _dumps({"arguments": whole, "n": [whole]}).encode("utf-8")
        assert jsonwrite.plain(body) == {"arguments": whole, "n": [whole]}
