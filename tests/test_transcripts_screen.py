"""The transcripts screen's keys under Pilot (Ctrl+O): ↓ to the list, Delete
with a confirmation, F2 to rename; the store and the recordings checked after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList

from app.files.paths import data_dir
from app.store.transcripts import Store
from app.tui.transcripts_screen import ConfirmDelete, RenameDialog, TranscriptsScreen
from tests.conversations import converse
from tests.test_transcripts_cli import imported
from tests.test_tui import SIZE, demo_app, send
from tests.waiting import wait_for


def titles() -> dict[str, str]:
    store = Store(data_dir() / "callstream.db")
    try:
        return {row["id"]: row["title"] for row in store.list()}
    finally:
        store.close()


def labels(app: Any) -> list[str]:
    options = app.screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def open_list(app: Any, pilot: Any) -> None:
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: isinstance(app.screen, TranscriptsScreen))
    await pilot.press("down")  # from the search box to the list
    await wait_for(pilot, lambda: isinstance(app.focused, OptionList))


async def dialog(app: Any, pilot: Any, key: str, kind: type) -> None:
    """In the list, press ``key`` and wait for its dialog."""
    await open_list(app, pilot)
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, kind))


@pytest.fixture
def demo_conversation(home: Path) -> str:
    """A conversation run on the demo model (its turns, its recording), made before the app starts."""
    return converse(["Show me order A-1042"]).conversation


async def test_delete_asks_then_removes_the_conversation_and_its_recording(home: Path, demo_conversation: str) -> None:
    recording = data_dir() / "recordings" / f"{demo_conversation}.ndjson.gz"
    assert recording.exists()
    imported(home, "keep-me", "keep me")  # the newer one: first in the list
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_list(app, pilot)
        await pilot.press("down")  # the second row: the demo conversation
        await pilot.press("delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDelete))
        shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "Show me order A-1042" in shown and "ledger keeps its rows" in shown
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptsScreen) and len(labels(app)) == 1)
        assert "keep me" in labels(app)[0]
    assert list(titles()) == ["keep-me"] and not recording.exists()


async def test_delete_answered_no_keeps_the_conversation(home: Path) -> None:
    imported(home, "keep-me", "keep me")
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await dialog(app, pilot, "delete", ConfirmDelete)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptsScreen))
        assert len(labels(app)) == 1
    assert list(titles()) == ["keep-me"]


async def test_delete_in_the_search_box_deletes_a_character_not_a_conversation(home: Path) -> None:
    imported(home, "keep-me", "keep me")
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptsScreen))
        await pilot.press("k", "e", "left", "delete")
        assert app.screen.query_one(Input).value == "k" and isinstance(app.screen, TranscriptsScreen)
    assert list(titles()) == ["keep-me"]


async def test_the_open_conversation_is_not_deleted_from_the_list(home: Path) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        current = app.session.conversation
        await open_list(app, pilot)
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, TranscriptsScreen)  # no confirmation: it says why instead
        assert any("open in the chat" in str(n.message) for n in app._notifications)
    assert current in titles()


async def test_f2_renames_and_the_list_shows_the_title(home: Path) -> None:
    imported(home, "to-rename", "old title")
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await dialog(app, pilot, "f2", RenameDialog)
        field = app.screen.query_one(Input)
        assert field.value == "old title"
        field.value = ""
        await pilot.press(*"Friday lunch")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptsScreen) and "Friday lunch" in labels(app)[0])
    assert titles() == {"to-rename": "Friday lunch"}
    exported = Store(data_dir() / "callstream.db")
    try:
        stored = exported.load("to-rename")
        assert stored is not None and stored.title == "Friday lunch"
    finally:
        exported.close()


async def test_f2_with_an_empty_title_says_why_and_esc_keeps_the_old_one(home: Path) -> None:
    imported(home, "to-rename", "old title")
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await dialog(app, pilot, "f2", RenameDialog)
        app.screen.query_one(Input).value = "   "
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RenameDialog)
        assert "at least one character" in str(app.screen.query_one(".problem").render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptsScreen))
    assert titles() == {"to-rename": "old title"}
