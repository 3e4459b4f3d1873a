"""The screens just out of view are drawn before a key scrolls them in (issue 31, ``app/tui/predraw.py``).

Textual draws a widget's lines the first time it is on screen; a PageUp onto
a screen never shown drew its forty widgets in the key's frame. Once the
window has mounted what it wants and the person is still, the lines of what
lies within ``AHEAD_SCREENS`` are drawn beforehand, then those of the first
screen (Home's), so the key's frame only puts them together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from app.tui import predraw as predraw_module
from tests import test_window_ahead
from tests.long_transcript import question
from tests.test_long_conversation import app_on, on_screen
from tests.test_tui import SIZE
from tests.test_window_ahead import EXCHANGES, transcript_of
from tests.waiting import quiet, wait_for

#: The conversation ``test_window_ahead.py`` writes (its fixture, the same 120 exchanges).
written = test_window_ahead.written


def drawn_out(app: Any) -> bool:
    """The window has what it wants and the drawing ahead is done (nothing left, nothing awaited)."""
    window = transcript_of(app).window
    return not window.paging and not window.predraw.due and not window.predraw._todo


async def opened(app: Any, pilot: Any) -> None:
    await wait_for(pilot, lambda: on_screen(app, question(EXCHANGES - 1)), "the last question on screen")
    await quiet(pilot)
    await wait_for(pilot, lambda: drawn_out(app), "the screens around the view drawn")


def first_drawn(transcript: Any) -> list[Widget]:
    """Every widget of the transcript, watched: the ones whose content lines are drawn from now on
    (Textual asks a widget for a content line only when the line is not drawn already)."""
    seen: list[Widget] = []
    for widget in transcript.walk_children(Widget):
        def watched(y: int, widget: Widget = widget, draw: Any = widget.render_line) -> Any:
            if widget not in seen:
                seen.append(widget)
            return draw(y)
        widget.render_line = watched  # type: ignore[method-assign]
    return seen


#: The keys checked, and how each one's move is seen: PageUp onto the screen just above (within
#: ``AHEAD_SCREENS``), Home onto the first (its page pinned, far above the view).
KEYS = {"pageup": lambda before, y: y < before, "home": lambda before, y: y == 0}


async def key_draws(app: Any, pilot: Any, key: str) -> list[Widget]:
    """The transcript's widgets ``key``'s frame drew lines of for the first time."""
    transcript = transcript_of(app)
    seen = first_drawn(transcript)
    before = transcript.scroll_y
    await pilot.press(key)
    await wait_for(pilot, lambda: KEYS[key](before, transcript.scroll_y), f"the view moved ({key})")
    await pilot.pause()  # the key's frame
    return [widget for widget in seen if widget.region.overlaps(transcript.region)]


@pytest.mark.parametrize("key", list(KEYS))
async def test_the_screen_a_key_shows_was_drawn_before_the_key(written: tuple[Path, str], key: str) -> None:
    app = app_on(written)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        drawn = await key_draws(app, pilot, key)
        assert drawn == [], f"drawn in the key's frame: {drawn}"


@pytest.mark.parametrize("key", list(KEYS))
async def test_without_the_drawing_ahead_the_key_draws_the_screen(
        written: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    """What the test above guards: with nothing drawn ahead, the key's frame draws the new screen."""
    monkeypatch.setattr(predraw_module.Predraw, "begin", lambda self: None)
    app = app_on(written)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert await key_draws(app, pilot, key), "a screen never shown is drawn in the key's frame"


async def test_the_drawing_waits_for_the_person_to_be_still(
        written: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    app = app_on(written)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        predraw = transcript_of(app).window.predraw
        monkeypatch.setattr(predraw_module, "AHEAD_AFTER", 600.0)  # a person who never pauses
        drawn = len(predraw._drawn)
        for _ in range(3):
            await pilot.press("pageup")
            await quiet(pilot)
        await wait_for(pilot, lambda: not transcript_of(app).window.paging, "the pages the view needs")
        assert predraw.due, "the drawing awaits a still moment"
        assert len(predraw._drawn) == drawn, "nothing drawn while the person pages"
        monkeypatch.setattr(predraw_module, "AHEAD_AFTER", 0.2)  # the person pauses
        predraw._due.stop()  # the 600 s wait set above, let go
        predraw._due = None
        await pilot.press("pageup")
        await wait_for(pilot, lambda: drawn_out(app) and len(predraw._drawn) > drawn,
                       "the screens around the new view drawn once the person paused",
                       seen=lambda: (predraw.due, len(predraw._drawn)))
