"""A running tool's progress (issue 26 item 7): one inert line, worded once
(``app.stream.progress``), shown on the running card under Pilot and gone
when the call ends."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from app.stream import ToolCallBlock
from app.stream.progress import PROGRESS_MESSAGE_CHARS, progress_words
from tests.test_tool_card_layout import CardApp, card_rows
from tests.waiting import wait_for
from widgets.tool_card import ToolCard


def test_progress_reads_as_a_share_of_its_total_with_the_message() -> None:
    assert progress_words(1, 4, "reading files") == "1/4 (25%) — reading files"
    assert progress_words(3) == "3"
    assert progress_words(7, 0) == "7"  # a total of nothing is no total


def test_a_hostile_progress_message_is_made_inert_and_cut() -> None:
    words = progress_words(1, 2, "\x1b[2J\x1b]0;pwned\x07 next\nline" + "x" * 500)
    assert "\x1b" not in words and "\x07" not in words and "\n" not in words
    assert len(words) < PROGRESS_MESSAGE_CHARS + 20


@given(st.floats(allow_nan=True), st.one_of(st.none(), st.floats(allow_nan=True)), st.one_of(st.none(), st.text()))
def test_any_progress_report_is_one_printable_line(done: float, total: float | None, message: str | None) -> None:
    words = progress_words(done, total, message)
    assert words and "\n" not in words and "\x1b" not in words


def running_call() -> ToolCallBlock:
    raw = json.dumps({"duration": 1})
    return ToolCallBlock("c1", "ev__trigger-long-running-operation", fragments=[raw], size=len(raw), ended=True,
                         final=True, arguments={"duration": 1}, state="running")


async def test_the_running_card_shows_the_latest_progress_and_drops_it_when_done() -> None:
    block = running_call()
    card = ToolCard(block)
    app = CardApp(card)
    async with app.run_test(size=(80, 20)) as pilot:
        block.progress = progress_words(1, 2, "step one")
        card.refresh_card()
        await wait_for(pilot, lambda: any("⋯ 1/2 (50%) — step one" in row for row in card_rows(app, card)),
                       "the progress line on the card", seen=lambda: card_rows(app, card))
        block.progress = progress_words(2, 2)
        card.refresh_card()
        await wait_for(pilot, lambda: any("⋯ 2/2 (100%)" in row for row in card_rows(app, card)),
                       "the newer progress line", seen=lambda: card_rows(app, card))
        block.state, block.result = "ran", "Long running operation completed."
        card.refresh_card()
        await wait_for(pilot, lambda: not any("⋯" in row for row in card_rows(app, card)),
                       "no progress line once it ran", seen=lambda: card_rows(app, card))
