"""The command line's start of the TUI: the first frame from the config
alone, everything else (provider, tools, store, httpx) right after it, and
nothing typed in between lost."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.store.schema import SCHEMA_VERSION
from app.tui.app import CallstreamApp, make_deferred_app
from tests.test_tui import settle, texts
from tests.waiting import wait_for
from widgets.prompt_input import PromptInput
from widgets.status_line import StatusLine

ROOT = Path(__file__).resolve().parents[1]


def test_the_first_frame_imports_neither_the_provider_nor_the_store_nor_markdown(home: Path) -> None:
    """What a fresh process has imported once the deferred app is built (the
    state its first frame is drawn in): no httpx, no demo server or dialects,
    no sqlite store, no markdown-it."""
    script = (
        "import sys\n"
        "from app.cli import _parser\n"
        "_parser()\n"
        "from app.tui.app import CallstreamApp, make_deferred_app\n"
        "app = make_deferred_app()\n"
        "heavy = ['httpx', 'markdown_it', 'app.demo.server', 'app.chat.session', 'app.store.transcripts',\n"
        "         'app.runtime', 'app.tools.dispatcher', 'app.ledger', 'widgets.prose', 'widgets.tool_card']\n"
        "print(' '.join(name for name in heavy if name in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


async def test_a_message_typed_before_the_session_opens_is_sent_once_it_has(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    app = make_deferred_app()
    app.cursor_blink = False
    held: list[Any] = []
    # the opening after the first frame is held until the message is typed
    monkeypatch.setattr(app, "_open_deferred", held.append)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: bool(held))
        screen = app.screen
        # the first frame: the welcome and the provider, before any session
        assert "talking to the demo model" in texts(app)
        assert screen.query_one(StatusLine).provider.startswith("demo model")
        assert getattr(app, "session", None) is None
        prompt = screen.query_one(PromptInput)
        prompt.text = "Show me order A-1042"
        await pilot.press("enter")
        await pilot.press("escape", "ctrl+r")  # no session yet: nothing to cancel or retry, and no crash
        assert screen.queued == ["Show me order A-1042"]
        assert prompt.text == ""
        CallstreamApp._open_deferred(app, held[0])
        await wait_for(pilot, lambda: bool(app.session.turns))
        await settle(app, pilot)
        calls = [b for t in app.session.turns for b in t.blocks if b.type == "tool_call"]
        assert [(c.name, c.state) for c in calls] == [("get_order", "ran")]
        assert not screen.queued
        assert screen.query_one(StatusLine).state == "ready"


async def test_a_data_file_that_cannot_be_used_after_the_first_frame_ends_the_app_with_its_reason(
        home: Path) -> None:
    database = home / "home" / "callstream.db"
    database.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(database) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    app = make_deferred_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.start_error is not None)
    assert app.return_code == 2
    assert app.start_error is not None and "callstream.db" in app.start_error


def test_a_missing_api_key_is_said_before_any_screen(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    from app.settings.checks import ConfigError

    with pytest.raises(ConfigError, match="API key"):
        make_deferred_app(provider="anthropic")


async def test_after_the_warm_up_full_collections_wait_for_the_end_of_an_exchange(home: Path) -> None:
    import gc

    from app.tui import collector
    from tests.test_tui import demo_app, send

    before = gc.get_threshold()
    app = demo_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.warmed)
        for name in ("widgets.prose", "widgets.tool_card", "jsonschema"):
            assert name in sys.modules
        assert gc.get_threshold()[2] == collector.NO_AUTOMATIC_FULL
        assert gc.get_freeze_count() > 0
        collected: list[int] = []
        gc.callbacks.append(lambda phase, info: collected.append(info["generation"]) if phase == "stop" else None)
        try:
            await send(app, pilot, "Show me order A-1042")
            await wait_for(pilot, lambda: 2 in collected)  # the exchange ended: one full collection, then
        finally:
            gc.callbacks.pop()
    assert gc.get_threshold() == before  # the app closed: the interpreter's own thresholds again
    assert gc.get_freeze_count() == 0


def test_plain_callstream_starts_the_tui_without_building_every_commands_parser(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.cli as cli
    import app.tui.app as tui_app

    started: list[tuple[Any, ...]] = []

    class Started:
        start_error = None

        def run(self) -> None:
            started.append(("ran",))

    def deferred(*args: Any, **kwargs: Any) -> Started:
        started.append((args, kwargs))
        return Started()

    def no_parser() -> None:
        raise AssertionError("the parser was built")

    monkeypatch.setattr(cli, "_parser", no_parser)
    monkeypatch.setattr(tui_app, "make_deferred_app", deferred)
    assert cli.main([]) == 0
    assert started == [((None, None, None), {"system": None, "role": None}), ("ran",)]
