"""A live sitting's finished exchanges join the window's pages (issue 31 item 4, ``app/tui/adopting.py``).

Typed on the demo model in a real Textual app under Pilot, written through the real store:

- at its end, a sitting keeps its last page and one screen above it mounted, whatever its length,
  with no reset (no re-show from the store); the pages it dropped come back from the store as the
  view goes up (PageUp, Home) and End shows the last exchange again;
- what dropping them removed is collected thoroughly (it lived through turns, so was frozen);
- its exchanges are drawn light once the view is still, like a reopened conversation's, and a
  light one comes back as the widgets its stored entries build;
- widgets that do not line up with the store's entries are not taken (the sitting is then shown
  again from the store when crowded, ``test_live_flat.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import app.tui.lights as lights
from app.store.pages import OutlineEntry
from app.tui import adopting, collector
from app.tui.adopting import adopt
from app.tui.paging import EXCHANGES_PER_PAGE, LIVE_NEAR_SCREENS
from app.tui.tree import LIVE_MOST
from tests.test_long_conversation import on_screen
from tests.test_tui import demo_app, send
from tests.waiting import quiet, wait_for
from widgets.light_exchange import LightExchange
from widgets.user_message import UserMessage

SIZE = (100, 30)


def ask(i: int) -> str:
    return f"Live question {i}: show me order A-{1000 + i}"


def transcript_of(app: Any) -> Any:
    return app.screen.query_one("#transcript")


def above_the_view(transcript: Any) -> float:
    """Rows mounted above the view: from the top of the first page mounted to the view's top."""
    window = transcript.window
    first = window.mounted[min(window.mounted)][0]
    return float(transcript.scroll_y - window.where(first).y)


async def test_a_live_sitting_at_its_end_keeps_its_last_page_and_a_screen_above_at_any_length(home: Path) -> None:
    """Past ``LIVE_MOST`` exchanges no reset comes; after each exchange at most two pages are mounted
    (the last, growing, and the one that fills a screen above it), every finished exchange mounted
    belongs to a page, and a screen above the view is mounted. PageUp and Home bring the first
    exchange back from the store; End the last."""
    app = demo_app()
    resets: list[int] = []
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        transcript = transcript_of(app)
        window = transcript.window
        reset = transcript.reset

        def resetting() -> None:
            resets.append(1)
            reset()

        transcript.reset = resetting
        live = LIVE_MOST + 2 * EXCHANGES_PER_PAGE
        for i in range(live):
            await send(app, pilot, ask(i))
            await quiet(pilot)
            shown = list(app.screen.query(UserMessage))
            assert len(shown) <= 2 * EXCHANGES_PER_PAGE + 1, (i, len(shown))
            paged = {id(widget) for runs in window.runs.values() for run in runs for widget in run.widgets}
            assert all(id(message) in paged for message in shown[:-1]), i  # all but the one going on
            if transcript.max_scroll_y > 2 * transcript.size.height:
                assert above_the_view(transcript) >= LIVE_NEAR_SCREENS * transcript.size.height, i
        assert resets == []
        assert 0 not in window.mounted  # the first page went with the view far below it
        assert on_screen(app, ask(live - 1))
        mounted = len(window.mounted)
        await pilot.press("pageup")
        await wait_for(pilot, lambda: len(window.mounted) > mounted, "a page above, once the view left the end")
        await pilot.press("home")
        await wait_for(pilot, lambda: on_screen(app, ask(0)), "the first question, from the store")
        await quiet(pilot)
        await pilot.press("end")
        await wait_for(pilot, lambda: on_screen(app, ask(live - 1)), "the last question again")
        await quiet(pilot)
        assert resets == []


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each collection of dropped widgets the sweeper runs (``collector.pages_dropped``): thorough or not."""
    seen: list[bool] = []
    dropped = collector.pages_dropped

    def collecting(thorough: bool = False) -> None:
        seen.append(thorough)
        dropped(thorough)

    monkeypatch.setattr(collector, "pages_dropped", collecting)
    return seen


async def test_pages_a_live_sitting_dropped_are_collected_thoroughly(home: Path, passes: list[bool]) -> None:
    """The widgets of a page dropped at the end of a sitting lived through turns (frozen after each,
    ``collector.between_turns``): only the thorough pass frees them, and it comes once the view is
    still."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        window = transcript_of(app).window
        i = 0
        while 0 in window.mounted or i < EXCHANGES_PER_PAGE:
            await send(app, pilot, ask(i))
            await quiet(pilot)
            i += 1
            assert i < 4 * EXCHANGES_PER_PAGE, "the first page never went"
        await wait_for(pilot, lambda: True in passes, "a thorough pass after the page went", seen=lambda: passes)


async def test_widgets_dropped_while_a_turn_runs_are_collected_once_it_is_over(home: Path,
                                                                               passes: list[bool]) -> None:
    """The sweeper's collection, due while a turn runs, waits for the turn instead of being dropped: the
    turn's end collects only what the turn made, and dropped widgets frozen after earlier turns would
    otherwise wait for the heap to grow by a quarter (``collector.THOROUGH_GROWTH``)."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        await send(app, pilot, ask(0))
        await quiet(pilot)
        passes.clear()
        transcript = transcript_of(app)
        busy = [True]
        tried: list[bool] = []

        def turn_runs() -> bool:
            tried.append(busy[0])
            return busy[0]

        transcript.sweeper.busy = turn_runs
        transcript.remove_widgets([next(iter(app.screen.query(UserMessage)))], frozen=True)
        await wait_for(pilot, lambda: True in tried, "the collection tried while the turn runs")
        assert passes == []
        busy[0] = False
        await wait_for(pilot, lambda: True in passes, "the thorough pass once the turn is over",
                       seen=lambda: (passes, tried))


async def test_a_live_sittings_exchanges_are_drawn_light_and_come_back_from_the_store(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Still, the exchanges of a live sitting a screen away are drawn light, as a reopened
    conversation's are; one brought back shows its question again, built from its stored entries."""
    monkeypatch.setattr(lights, "LIGHT_AFTER", 0.3)
    app = demo_app()
    async with app.run_test(size=(100, 20)) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        transcript = transcript_of(app)
        for i in range(EXCHANGES_PER_PAGE + 1):
            await send(app, pilot, ask(i))
        await wait_for(pilot, lambda: bool(app.screen.query(LightExchange)) and not transcript.lights.due,
                       "the far exchanges drawn light")
        await quiet(pilot)
        light = next(light for light in app.screen.query(LightExchange)
                     if any(getattr(entry, "text", None) == ask(0) for entry in light.entries))
        assert not any(message.message_text == ask(0) for message in app.screen.query(UserMessage))
        transcript.lights.expand(light)
        await wait_for(pilot, lambda: any(message.message_text == ask(0)
                                          for message in app.screen.query(UserMessage)), "the first question's widgets")


async def test_widgets_that_do_not_line_up_with_the_stored_entries_are_not_taken(home: Path) -> None:
    """A user message missing from the widgets, or another path's head, leaves the window as it was."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        transcript = transcript_of(app)
        window = transcript.window
        window.adopt = lambda *args: None  # the sitting's own adoption off: this test calls it
        for i in range(3):
            await send(app, pilot, ask(i))
        assert not window.active
        assert app.runtime is not None
        store, conversation = app.runtime.store, app.session.conversation
        head = app.session.position
        children = list(transcript.children)
        second = [m for m in children if isinstance(m, UserMessage)][1]
        del window.adopt
        without = [widget for widget in children if widget is not second]
        assert not adopt(window, store, conversation, head, without, transcript.entries)
        assert not window.active
        assert not adopt(window, store, conversation, None, children, transcript.entries)
        assert adopt(window, store, conversation, head, children, transcript.entries)
        assert sum(len(runs) for runs in window.runs.values()) == 2  # the third goes on


def test_an_entry_of_another_kind_or_a_turn_before_any_message_is_not_cut_into_exchanges() -> None:
    def entry(seq: int, kind: str) -> OutlineEntry:
        return OutlineEntry(seq, kind, seq - 1 if seq else None, "", (1, 1))

    assert adopting._exchanges([entry(1, "user"), entry(2, "turn"), entry(3, "user")]) == \
        [[entry(1, "user"), entry(2, "turn")], [entry(3, "user")]]
    assert adopting._exchanges([entry(1, "turn"), entry(2, "user")]) is None
    assert adopting._exchanges([entry(1, "user"), entry(2, "note")]) is None
