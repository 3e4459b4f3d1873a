"""The pages a little further from the view come while the person is still (issue 31).

A page coming blocks the app for tens of milliseconds, and a key that
arrives meanwhile waits for it. So the window mounts what the view needs
(``NEAR_SCREENS`` around it) right after the key that needed it, and what it
may need next (``AHEAD_SCREENS``) only as the conversation opens and once
the person has paged, scrolled and typed nothing for ``AHEAD_AFTER``
(``app/tui/stillness.py``, ``Window.wanted``). And PageUp scrolls at once,
not after the next refresh (a key just after a frame waited a frame more).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.tui import window as window_module
from app.tui.paging import AHEAD_SCREENS, NEAR_SCREENS
from tests.long_transcript import question, write_long
from tests.test_long_conversation import app_on, on_screen
from tests.test_tui import SIZE
from tests.waiting import quiet, wait_for
from widgets.page_gap import PageGap

EXCHANGES = 120


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("ahead") / "callstream.db"
    return path, write_long(path, EXCHANGES)


def transcript_of(app: Any) -> Any:
    return app.screen.query_one("#transcript")


def screens_above(app: Any) -> float:
    """How many screens of the conversation are mounted above the view's top, down from the gap that
    stands for the pages not mounted (the first page, pinned, is above the gap)."""
    transcript = transcript_of(app)
    gaps = [child for child in transcript.children if isinstance(child, PageGap)]
    assert len(gaps) == 1, f"one gap between the first page and the pages at the view: {len(gaps)}"
    return (transcript.scroll_y - transcript.window.where(gaps[0]).bottom) / transcript.size.height


async def opened(app: Any, pilot: Any) -> None:
    await wait_for(pilot, lambda: on_screen(app, question(EXCHANGES - 1)), "the last question on screen")
    await quiet(pilot)


async def test_the_pages_a_few_screens_above_the_view_come_as_it_opens(written: tuple[Path, str]) -> None:
    app = app_on(written)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        await wait_for(pilot, lambda: screens_above(app) >= AHEAD_SCREENS,
                       f"{AHEAD_SCREENS} screens mounted above the view", seen=lambda: screens_above(app))


async def test_after_paging_what_lies_further_waits_for_the_person_to_pause(
        written: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    app = app_on(written)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        await wait_for(pilot, lambda: screens_above(app) >= AHEAD_SCREENS, "the pages ahead, as it opened")
        window = transcript_of(app).window
        monkeypatch.setattr(window_module, "AHEAD_AFTER", 600.0)  # a person who never pauses
        for _ in range(20):  # up until what is mounted above is less than the pages ahead would make it
            await pilot.press("pageup")
            await quiet(pilot)
            if screens_above(app) < AHEAD_SCREENS:
                break
        # what the view needs is there; what lies further waits for a pause
        assert NEAR_SCREENS <= screens_above(app) < AHEAD_SCREENS
        assert window._ahead is not None, "the pause awaited"
        # a person who pauses: the pause awaited is short now (the 600 s one set above is let go)
        monkeypatch.setattr(window_module, "AHEAD_AFTER", 0.2)
        window._ahead.stop()
        window._ahead = None
        await pilot.press("pageup")
        await wait_for(pilot, lambda: screens_above(app) >= AHEAD_SCREENS,
                       f"{AHEAD_SCREENS} screens above the view once the person paused",
                       seen=lambda: screens_above(app))


async def test_typing_counts_as_not_being_still(written: tuple[Path, str]) -> None:
    app = app_on(written)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        still = transcript_of(app).still
        assert still.still_for() == float("inf")  # nobody has moved yet: the pages ahead came at once
        await pilot.press("h", "i")
        assert still.still_for() < 600


async def test_page_up_scrolls_at_once(written: tuple[Path, str]) -> None:
    """Textual's ``scroll_page_up`` moves the view after the next refresh; ours before it returns."""
    app = app_on(written)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        transcript = transcript_of(app)
        before = transcript.scroll_y
        transcript.page(-1)
        assert transcript.scroll_y == before - transcript.scrollable_content_region.height
        transcript.page(1)
        assert transcript.scroll_y == before
