"""The card's one-line formatting reads only what it can show."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from app.stream.preview import KEPT, FormingPreview, format_value

_TEXT = st.text(alphabet=st.sampled_from("ab \n\t\u00a0é"), max_size=800)


def _collapse_then_cut(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@given(_TEXT, st.integers(min_value=1, max_value=200))
def test_a_string_is_shown_as_if_collapsed_whole_then_cut(text: str, limit: int) -> None:
    assert format_value(text, limit) == _collapse_then_cut(text, limit)


@given(st.lists(_TEXT, max_size=30), st.integers(min_value=1, max_value=200))
def test_a_list_is_shown_as_if_joined_whole_then_cut(items: list[str], limit: int) -> None:
    whole = ", ".join(_collapse_then_cut(item, limit) for item in items)
    assert format_value(items, limit) == _collapse_then_cut(whole, limit)


def test_mostly_whitespace_still_fills_the_line() -> None:
    text = " " * 10_000 + "x " * 200
    assert format_value(text, 40) == _collapse_then_cut(text, 40)
    assert len(format_value(text, 40)) == 40


def test_a_huge_list_of_dicts_is_cut_without_reading_it_all() -> None:
    class Counting(dict[str, int]):
        reads = 0

        def items(self):  # type: ignore[override]
            Counting.reads += 1
            return super().items()

    rows = [Counting(n=i) for i in range(100_000)]
    line = format_value(rows, 60)
    assert line.endswith("…") and len(line) == 60
    assert Counting.reads < 100


def _fed(doc: str, step: int) -> FormingPreview:
    preview = FormingPreview()
    for i in range(0, len(doc), step):
        preview.feed(doc[i : i + step])
    return preview


@given(st.integers(min_value=1, max_value=5000))
def test_a_string_longer_than_kept_is_held_only_as_its_first_characters(step: int) -> None:
    body = "word " * (KEPT // 2)  # 2.5 × KEPT characters
    doc = json.dumps({"order_id": "A-1", "body": body, "priority": "high"})
    preview = _fed(doc, step)
    held = preview._values[("body",)]
    assert held == body[:KEPT]  # the prefix, exactly, whatever the fragmenting
    assert preview.stable_names() == {"order_id", "body", "priority"}
    assert preview.stable_top() == {"order_id": "A-1", "priority": "high"}  # no cut value passes for a whole one
    shown = dict(preview.fields([("body", "Body"), ("priority", "Priority")], 40))
    assert shown == {"Body": format_value(body, 40), "Priority": "high"}


def test_a_cut_string_that_collapses_short_still_says_it_goes_on() -> None:
    body = " " * (KEPT + 10) + "tail"
    preview = _fed(json.dumps({"body": body}), 997)
    (label, text), = preview.fields([("body", "Body")], 40)
    assert text is not None and text.endswith("…")


def test_a_string_of_exactly_kept_characters_is_held_whole() -> None:
    body = "x" * KEPT
    preview = _fed(json.dumps({"body": body}), 64)
    assert preview.stable_top() == {"body": body}


def test_a_field_that_begins_is_a_change_a_card_redraws_for() -> None:
    # the card shows "Status …" once the field has begun; a reader that redraws only on a new version
    # must hear of it, however the fragments were batched
    preview = FormingPreview()
    assert preview.feed('{"customer": "Ada"')
    before = preview.version
    assert preview.feed(', "status": "la')
    assert preview.version > before
    assert preview.fields([("customer", "Customer"), ("status", "Status")]) == [("Customer", "Ada"), ("Status", None)]
    assert not preview.feed("te")  # more of the same string: nothing new to show
