"""A live sitting's memory stays flat (issue 31 item 4): what a sitting keeps
does not grow with the exchanges typed in it.

- A finished turn of an earlier exchange keeps how it ran, not its blocks,
  once the store holds them (``ChatSession.let_go_stored``); the store, and so
  a reopen, still has them whole; a session without a store keeps them.
- A live sitting shown again from the store (``tree.LIVE_MOST``) collects its
  old widgets before the pages above its last come (``Sweeper.collect_soon``):
  built first, they took fresh memory beside the old ones', kept for good.
- The thorough pass empties Textual's memos of region arithmetic, which fill
  with the places of widgets long gone.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region

from app.chat.turns import LiveTurn
from app.store import StoredTurn
from app.stream import TextBlock, Turn
from app.stream.usage import Usage
from app.tui import collector
from app.tui.paging import LIVE_NEAR_SCREENS, NEAR_SCREENS
from app.tui.tree import LIVE_MOST
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.test_long_session import settled
from tests.test_session import session_for
from tests.test_tui import SIZE, demo_app, send
from tests.waiting import quiet, wait_for
from widgets.page_gap import PageGap
from widgets.user_message import UserMessage


async def test_a_stored_turn_of_an_earlier_exchange_keeps_how_it_ran_not_its_blocks(home: Path) -> None:
    """Two exchanges on the demo model (a call, then a reply): once the second ends, the first's turns
    in ``session.turns`` keep their index, usage and outcome but no blocks; the second's stay whole
    (Ctrl+R and approvals read the last exchange); the store still has the first's blocks."""
    app = demo_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        await send(app, pilot, "Show me order A-1042")
        first = list(app.session.turns)
        assert first and all(record.blocks for record in first)  # (whole while their exchange is the last)
        await send(app, pilot, "Show me order A-1043")
        turns = app.session.turns
        last = turns[len(first):]
        assert all(record.blocks == [] for record in first)
        assert all(record.result is not None and record.result.blocks == [] and record.result.outcome == "complete"
                   for record in first)
        assert all(record.usage is not None for record in first)
        assert last and all(record.blocks for record in last)
        assert app.runtime is not None
        stored = app.runtime.store.load_path(app.session.conversation)
    assert stored is not None
    kept = [item for item in stored.items if isinstance(item, StoredTurn) and item.turn == first[0].index]
    assert kept and any(block.type == "tool_call" for block in kept[0].blocks)


def test_a_session_without_a_store_keeps_every_turn_whole(tmp_path: Path) -> None:
    """A replay's session (no store: nothing else has its turns) keeps each turn's blocks."""
    with FaultServer() as server:
        for text in ("One.", "Two."):
            server.replies.append(Reply(streamgen.anthropic([("text", text)], stop_reason="end_turn")))
        session = session_for(server, tmp_path)

        async def go() -> None:
            try:
                await session.send("first")
                await session.send("second")
                session.let_go_stored()
            finally:
                await session.aclose()

        asyncio.run(go())
    assert session.book is None
    assert [record.blocks[0].text for record in session.turns] == ["One.", "Two."]  # type: ignore[union-attr]


def test_a_turn_let_go_leaves_the_lists_others_hold_whole() -> None:
    """``let_go`` drops the turn's own references, never empties a list in place: the parser's list (a
    write of the store may still read it) and the result others were handed keep their blocks."""
    parsed = [TextBlock("Hello.")]
    result = Turn("anthropic", "complete", "end_turn", None, parsed)
    record = LiveTurn(3, attempts=1, blocks=parsed, result=result, note="a note", usage=Usage(10, 2), model="m")
    record.let_go()
    assert record.blocks == [] and record.result is not None and record.result.blocks == []
    assert (record.index, record.attempts, record.note, record.model) == (3, 1, "a note", "m")
    assert record.result.outcome == "complete" and record.usage == Usage(10, 2)
    assert parsed and parsed[0].text == "Hello." and result.blocks is parsed


def test_the_thorough_pass_empties_textual_s_region_memos() -> None:
    Region(0, 0, 4, 4).union(Region(2, 2, 4, 4))
    Region(0, 0, 4, 4).intersection(Region(2, 2, 4, 4))
    assert Region.union.cache_info().currsize and Region.intersection.cache_info().currsize
    with settled():
        collector.pages_dropped(thorough=True)
    assert Region.union.cache_info().currsize == 0 and Region.intersection.cache_info().currsize == 0


def not_adopted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sitting whose exchanges do not join the window's pages (``adopting.py``: they do not line up
    with the stored entries) is shown again from the store once crowded, as before adoption."""
    monkeypatch.setattr("app.tui.tree.adopt", lambda *args: False)


async def test_a_live_sitting_shown_again_collects_its_old_widgets_before_the_pages_above_come(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``LIVE_MOST`` exchanges the last page is shown again from the store at once (the screen
    changes in one go), and the pages above it are mounted only after the thorough collection that
    frees the old widgets: the order of the transcript's reset, the collections and the window's
    page loads is recorded (the re-show is the only reset of a sitting that follows the end)."""
    not_adopted(monkeypatch)
    app = demo_app()
    log: list[str] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        transcript: Any = app.screen.query_one("#transcript")
        window = transcript.window
        reset, load, dropped = transcript.reset, window.load, collector.pages_dropped

        def resetting() -> None:
            log.append("reset")
            reset()

        def loading(number: int) -> None:
            log.append("load")
            load(number)

        def collecting(thorough: bool = False) -> None:
            log.append("thorough" if thorough else "collect")
            dropped(thorough)

        transcript.reset, window.load = resetting, loading
        collector.pages_dropped = collecting  # type: ignore[assignment]
        try:
            for i in range(LIVE_MOST + 2):
                await send(app, pilot, f"Show me order A-{1000 + i}")
            await wait_for(pilot, lambda: "load" in log[log.index("reset"):] if "reset" in log else False,
                           "the re-show's pages above its last", seen=lambda: " ".join(log))
            await quiet(pilot)
        finally:
            collector.pages_dropped = dropped  # type: ignore[assignment]
        shown = len(app.screen.query(UserMessage))
    after = log[log.index("reset"):]
    assert "thorough" in after and after.index("thorough") < after.index("load"), " ".join(log)
    assert 0 < shown <= LIVE_MOST + 1


async def test_a_live_sitting_shown_again_at_its_end_keeps_one_screen_above_and_a_page_up_brings_more(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Following its end, a live sitting shown again from the store (``tree.LIVE_MOST``) mounts the pages
    that fill ``LIVE_NEAR_SCREENS`` above the view and no more (without its top page, less than that would
    be mounted): each re-show builds less, so they come less often. A first PageUp still moves a whole
    screen, and once the view has left the end the pages that fill ``NEAR_SCREENS`` above it come."""
    not_adopted(monkeypatch)
    app = demo_app()
    resets: list[int] = []
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        transcript: Any = app.screen.query_one("#transcript")
        window = transcript.window
        reset = transcript.reset

        def resetting() -> None:
            resets.append(len(window.mounted))
            reset()

        transcript.reset = resetting
        for i in range(LIVE_MOST + 2):
            await send(app, pilot, f"Show me order A-{1000 + i}")
        await wait_for(pilot, lambda: bool(resets) and not window.paging and not window._held, "the re-show settled")
        await quiet(pilot)
        height = transcript.size.height
        assert transcript.held_at_end()
        above = transcript.scroll_y
        assert above >= LIVE_NEAR_SCREENS * height, (above, height)
        top = window.mounted[min(window.mounted)]
        top_rows = window.where(top[-1]).bottom - window.where(top[0]).y
        assert len(window.mounted) > 1 and above - top_rows < LIVE_NEAR_SCREENS * height, (above, top_rows, height)
        mounted = len(window.mounted)
        await pilot.press("pageup")
        await wait_for(pilot, lambda: len(window.mounted) > mounted, "the pages above, once the view left the end")
        await quiet(pilot)
        gaps = [child for child in transcript.children if isinstance(child, PageGap)]
        floor = window.where(gaps[0]).bottom if gaps else 0
        assert transcript.scroll_y - floor >= NEAR_SCREENS * height
