"""Issue 24, the store's hardening (items 15, 17, 18 and the store's part of 21): an import never
builds a bad tree, a bad tree already on disk is a stated failure (never a query that spins), search
obeys the allow-list the tools have now, and llm's logs.db imports again as it grows. Each test
asserts the words the user sees, the exit code, no traceback, and that what was saved before is
still there, unchanged. Real sqlite files throughout; ``storefaults`` damages one from outside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.store import Store
from tests import storefaults
from tests.test_hostile_input import Saved, run, saved, stated  # noqa: F401  (the fixture)


def _items_file(saved: Saved, tmp: Path, change: Any) -> Path:  # noqa: F811
    """The saved export under a fresh id, its items changed by ``change(items)``."""
    document = json.loads(saved.export)
    document["conversation"]["id"] = "e" * 32
    change(document["items"])
    path = tmp / "bad-tree.json"
    path.write_text(json.dumps(document))
    return path


def _refused(saved: Saved, path: Path, *words: str) -> None:  # noqa: F811
    stated(run("import", str(path)), 2, "the transcript is damaged", *words)
    saved.intact(alone=True)  # nothing of the refused file was stored: the import is one transaction
    code, _, err = run("export", "e" * 32)
    assert code == 2 and "no stored conversation" in err


# -- item 15: imports cannot build a bad tree ---------------------------------------------------------------------

def test_an_imported_entry_that_follows_itself_is_refused(saved: Saved, tmp_path: Path) -> None:  # noqa: F811
    def follow_itself(items: list[dict[str, Any]]) -> None:
        items[2]["parent"] = items[2]["entry"]

    _refused(saved, _items_file(saved, tmp_path, follow_itself), "item 2 (entry 2) follows itself")


def test_an_imported_entry_number_used_twice_is_refused(saved: Saved, tmp_path: Path) -> None:  # noqa: F811
    def twice(items: list[dict[str, Any]]) -> None:
        items[2]["entry"] = 0

    _refused(saved, _items_file(saved, tmp_path, twice),
             "item 2 uses entry number 0 again (item 0 has it already)")


def test_an_imported_parent_that_is_not_a_number_is_refused(saved: Saved, tmp_path: Path) -> None:  # noqa: F811
    def text_parent(items: list[dict[str, Any]]) -> None:
        items[1]["parent"] = "0"

    _refused(saved, _items_file(saved, tmp_path, text_parent),
             "item 1.parent (the entry it follows) must be a whole number", "(got '0')")


def test_an_imported_parent_that_comes_later_is_refused(saved: Saved, tmp_path: Path) -> None:  # noqa: F811
    def loop(items: list[dict[str, Any]]) -> None:
        items[0]["parent"] = 2  # 0 → 2 → 1 → 0: a loop through a later entry

    _refused(saved, _items_file(saved, tmp_path, loop),
             "item 0 (entry 0) follows entry 2, which is not before it")


def test_an_imported_parent_that_does_not_exist_is_refused(saved: Saved, tmp_path: Path) -> None:  # noqa: F811
    def missing(items: list[dict[str, Any]]) -> None:
        items[2]["parent"] = 99

    _refused(saved, _items_file(saved, tmp_path, missing), "item 2 (entry 2) follows entry 99")


def test_a_loop_made_on_disk_is_a_stated_failure_not_a_spin(saved: Saved) -> None:  # noqa: F811
    database = saved.data / "callstream.db"
    storefaults.loop_parents(database, saved.id)
    words = (f"conversation {saved.id} is damaged", "follows itself through its parents", "it was not opened",
             f"callstream transcripts delete {saved.id[:12]}")
    stated(run("export", saved.id), 2, str(database), *words)
    stated(run("ask", "and again", "--conversation", saved.id), 2, *words)
    stated(run("fork", saved.id), 2, *words)
    # the recursive query a new entry is placed by ends on the loop (bounded), instead of spinning
    store = Store(database)
    try:
        seq = store.add_user(saved.id, "placed beside a loop", parent=0)
        assert seq == 3
    finally:
        store.close()
    code, out, _ = run("transcripts", "--json")
    assert code == 0 and [row["id"] for row in json.loads(out)] == [saved.id]  # listed, still there
    code, out, err = run("transcripts", "delete", saved.id, "--yes")
    assert code == 0 and "Traceback" not in err and f"deleted {saved.id}" in out


# -- item 21: an import item's entry or parent of the wrong type is a sentence ------------------------------------

def test_an_imported_entry_that_is_a_list_is_a_sentence(saved: Saved, tmp_path: Path) -> None:  # noqa: F811
    def listed(items: list[dict[str, Any]]) -> None:
        items[1]["entry"] = [1]

    _refused(saved, _items_file(saved, tmp_path, listed),
             "item 1.entry (its entry number) must be a whole number from 0 to 1000000000", "(got '[1]')")


def test_an_imported_parent_that_is_an_object_is_a_sentence(saved: Saved, tmp_path: Path) -> None:  # noqa: F811
    def object_parent(items: list[dict[str, Any]]) -> None:
        items[1]["parent"] = {"entry": 0}

    _refused(saved, _items_file(saved, tmp_path, object_parent),
             "item 1.parent (the entry it follows) must be a whole number")


def test_search_with_a_limit_of_ten_to_the_twenty_is_a_sentence(saved: Saved) -> None:  # noqa: F811
    stated(run("search", "order", "--limit", "100000000000000000000"), 2,
           "--limit must be a whole number from 1 to 10000 (got 100000000000000000000)")
    stated(run("search", "order", "--limit", "0"), 2, "--limit must be a whole number from 1 to 10000")
    code, out, err = run("search", "order", "--limit", "10000", "--json")
    assert code == 0 and "Traceback" not in err and [hit["conversation"] for hit in json.loads(out)][:1] == [saved.id]
    saved.intact(alone=True)


@pytest.fixture
def looped(home: Path) -> str:
    """A conversation run on the demo model, then a loop put in its tree on disk."""
    from app.files.paths import data_dir
    from tests.conversations import converse

    conversation = converse(["Show me order A-1042"]).conversation
    storefaults.loop_parents(data_dir() / "callstream.db", conversation)
    return conversation


async def test_a_looped_conversation_chosen_in_the_tui_is_a_stated_failure(looped: str) -> None:
    from app.tui.chat_screen import ChatScreen
    from tests.test_transcripts_screen import open_list
    from tests.test_tui import SIZE, demo_app
    from tests.waiting import wait_for

    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        before = app.session
        await open_list(app, pilot)
        await pilot.press("enter")  # the only row: the looped conversation
        await wait_for(pilot, lambda: any("is damaged" in str(n.message) for n in app._notifications))
        message = next(str(n.message) for n in app._notifications if "is damaged" in str(n.message))
        assert f"conversation {looped} is damaged" in message and "it was not opened" in message
        assert isinstance(app.screen, ChatScreen) and app.session is before  # the app goes on where it was
        assert app.is_running
    code, out, _ = run("transcripts", "--json")
    assert code == 0 and [row["id"] for row in json.loads(out)] == [looped]  # still there, to delete or restore
