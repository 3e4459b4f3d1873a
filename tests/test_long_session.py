"""A live session stays flat (issue 31 item 4): what a key press does never
lays out the conversation, and the collector's work between turns is what
the turn made, not what the conversation holds.

A layout is counted where Textual does it: the screen's compositor
``reflow`` (the pass that walks every widget of the screen); a scroll's
cheaper ``reflow_visible`` is not one.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from app.tui import collector
from tests.test_tui import demo_app, send
from tests.waiting import quiet, screen_lines, wait_for


@contextmanager
def counted_layouts(app: Any) -> Iterator[list[int]]:
    """The screen's full layouts while the block runs (one entry each)."""
    compositor = app.screen._compositor
    original = compositor.reflow
    seen: list[int] = []

    def reflow(*args: Any, **kwargs: Any) -> Any:
        seen.append(1)
        return original(*args, **kwargs)

    compositor.reflow = reflow
    try:
        yield seen
    finally:
        compositor.reflow = original


async def test_typing_in_the_box_lays_out_nothing(home: Path) -> None:
    app = demo_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        await send(app, pilot, "Show me order A-1042")  # a conversation on screen behind the box
        await quiet(pilot)
        with counted_layouts(app) as layouts:
            for key in ("h", "e", "l", "l", "o", "space", "w", "backspace"):
                await pilot.press(key)
            await pilot.pause()
        assert app.screen.query_one("PromptInput").text == "hello "  # type: ignore[attr-defined]
        assert layouts == []


async def test_a_key_looks_for_waiting_cards_only_while_a_call_can_wait(home: Path) -> None:
    """Every key asks whether the approval keys apply (their bindings' ``check_action``): with no call
    waiting, that answer comes from the session, never from walking the conversation's widgets (it
    did, six times a key: most of what a PageUp cost at any length)."""
    app = demo_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        await send(app, pilot, "Show me order A-1042")  # cards on screen
        await quiet(pilot)
        transcript: Any = app.screen.query_one("#transcript")
        assert transcript.cards()
        walked: list[int] = []
        original = transcript.cards
        transcript.cards = lambda: walked.append(1) or original()
        for key in ("pageup", "pagedown", "h", "i", "end", "home", "y", "backspace", "backspace"):
            await pilot.press(key)
        await quiet(pilot)
        assert walked == []


async def test_the_slash_hint_changes_its_words_without_a_layout(home: Path) -> None:
    app = demo_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        hint = app.screen.query_one("#hint", Static)
        await quiet(pilot)
        with counted_layouts(app) as layouts:
            await pilot.press("slash")
            await wait_for(pilot, lambda: hint.display and hint.region.height == 1, "the hint line laid out")
            await quiet(pilot)
            shown = len(layouts)  # the line appearing moves the box: that is a layout
            await pilot.press("h", "e")
            await wait_for(pilot, lambda: any("/help" in line for line in screen_lines(app)), "the /help hint drawn")
            assert len(layouts) == shown  # its words changed in place
            assert "/help" in str(hint.render())
        for _ in range(3):
            await pilot.press("backspace")
        await wait_for(pilot, lambda: not hint.display, "the hint line to hide")


@contextmanager
def settled() -> Iterator[None]:
    collector.settle()
    try:
        yield
    finally:
        collector.restore()


class Node:
    """A cycle (it refers to itself): only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_the_collection_between_turns_walks_only_what_the_turn_made() -> None:
    with settled():
        kept = [Node() for _ in range(2000)]  # an exchange's widgets, on screen after it
        assert len(gc.get_objects()) >= 2000
        collector.between_turns()
        # everything that survived is frozen: the next turn's collection walks that turn's objects only
        assert len(gc.get_objects()) < 500
        assert gc.get_freeze_count() > len(kept)
        garbage = weakref.ref(Node())  # what a turn made and dropped dies in the next collection
        collector.between_turns()
        assert garbage() is None


def test_the_collection_between_turns_measures_the_heap_without_walking_the_frozen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Why: ``gc.get_freeze_count`` walks the whole frozen list (10–15 ms a turn in a long sitting);
    the collector reads the allocator's count of blocks instead."""
    with settled():
        kept = [Node() for _ in range(2000)]

        def walked() -> int:
            raise AssertionError("the frozen list walked to count it")

        monkeypatch.setattr(gc, "get_freeze_count", walked)
        collector.between_turns()
        assert len(kept) == 2000


def test_frozen_objects_freed_by_their_count_do_not_bring_the_thorough_pass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Why: an exchange's survivors include what the next frame lets go (the compositor's map, lines);
    counted as they were frozen, they looked like growth, and the 100 ms pass ran every exchange or
    two in a long sitting that had not grown."""
    passes: list[int] = []
    thorough = collector._thorough
    monkeypatch.setattr(collector, "_thorough", lambda: (passes.append(1), thorough()))
    with settled():
        for _ in range(12):
            start, made = sys.getallocatedblocks(), []
            while sys.getallocatedblocks() < start * 1.15:  # an exchange's survivors: the heap a seventh larger
                made += [(object(), [n]) for n in range(1000)]
            collector.between_turns()  # frozen while alive ...
            del made  # ... and freed by their count before the next turn
        assert passes == []


def test_a_cycle_dropped_after_it_was_frozen_is_freed_once_the_heap_grows_by_a_quarter() -> None:
    with settled():
        removed = Node()
        gone = weakref.ref(removed)
        collector.between_turns()  # frozen while still shown
        del removed  # a widget removed later: garbage among the frozen
        collector.between_turns()
        assert gone() is not None  # the cheap collection does not walk the frozen
        quarter = int(collector._thorough_at * collector.THOROUGH_GROWTH) - sys.getallocatedblocks()
        grown = [[] for _ in range(quarter + 1000)]  # a block each
        collector.between_turns()  # the heap grew by a quarter: the thorough pass
        assert gone() is None
        assert len(grown) > 0


def test_a_reset_s_thorough_pass_frees_the_frozen_but_keeps_the_baseline_of_growth() -> None:
    """Why: a live sitting shown again from the store empties the transcript, collects, and refills it;
    measured empty, the heap's refill looked like growth and brought a second 100 ms pass."""
    with settled():
        removed = Node()
        gone = weakref.ref(removed)
        collector.between_turns()  # frozen while shown
        del removed  # the reset removed it
        baseline = collector._thorough_at
        collector.pages_dropped(thorough=True)
        assert gone() is None
        assert collector._thorough_at == baseline


async def test_an_exchange_s_usage_line_stays_where_it_was_mounted(home: Path) -> None:
    """Each exchange mounts its line once; the next exchange neither removes nor remounts it."""
    from widgets.usage_line import UsageLine

    app = demo_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        await send(app, pilot, "Show me order A-1042")
        first = list(app.screen.query(UsageLine))
        await send(app, pilot, "Show me order A-1043")
        now = list(app.screen.query(UsageLine))
    assert len(first) == 1 and len(now) == 2
    assert now[0] is first[0]


def test_each_collection_between_turns_gives_the_freed_memory_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Why: the holes what a turn freed leaves in glibc's heap stay resident otherwise; handed back
    only at the thorough pass (every few exchanges), a live sitting's RSS grew by a fifth in 500
    exchanges (0.3 ms a turn: 0.7 MB less at 160, measured)."""
    given: list[int] = []
    monkeypatch.setattr(collector, "give_back", lambda: given.append(1))
    with settled():
        collector.between_turns()
        assert given == [1]
        collector.between_turns()
        assert given == [1, 1]
