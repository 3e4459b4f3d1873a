"""The chat TUI under Pilot: blocks in event order, cards that form without
lying, stated failures, inert untrusted text, and SVG snapshots of each."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import Static

from app.net.endpoint import Endpoint
from app.settings.config import Config
from app.settings.profiles import ProviderProfile
from app.settings.tools import CommandToolConfig
from app.tui.app import CallstreamApp, make_app
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.snapshots import check_snapshot, screen_svg
from tests.waiting import quiet, screen_lines, wait_for, wait_until
from widgets.note import NoteBlock
from widgets.prompt_input import PromptInput
from widgets.prose import ProseBlock
from widgets.status_line import StatusLine
from widgets.tool_card import ToolCard
from widgets.user_message import UserMessage

SIZE = (100, 40)


def demo_config(retries: int = 3) -> Config:
    # create_ticket is allowed without asking here: these tests are about rendering (approvals: test_approvals.py)
    return Config(providers={"demo": ProviderProfile(name="demo", provider="demo", demo_speed=0.0,
                                                     retries=retries)}, default="demo", allow=["create_ticket"])


def still(app: CallstreamApp) -> CallstreamApp:
    """No blinking cursor and a stopped clock: two renders of one screen are identical."""
    app.cursor_blink = False
    app.clock = lambda: 0.0
    return app


def demo_app(retries: int = 3) -> CallstreamApp:
    return still(make_app(config=demo_config(retries)))


async def send(app: CallstreamApp, pilot: Any, text: str) -> None:
    prompt = app.screen.query_one(PromptInput)
    prompt.text = text
    await pilot.press("enter")
    await settle(app, pilot)


async def settle(app: CallstreamApp, pilot: Any) -> None:
    """The turn is over and the screen has drawn all of it."""
    await wait_for(pilot, lambda: not app.session.busy, "the turn to end")
    await quiet(pilot)


async def transcripts_listed(app: CallstreamApp, pilot: Any, typed: str) -> None:
    """The transcripts screen is up with ``typed`` in its box, and its list shows what that finds."""
    from textual.widgets import Input

    from app.tui.transcripts_screen import TranscriptsScreen

    def listed() -> bool:
        return isinstance(app.screen, TranscriptsScreen) and app.screen.query_one(Input).has_focus and (
            app.screen.query_one(Input).value == typed)

    await wait_for(pilot, listed, f"the transcripts screen with {typed!r} typed")
    await pilot.pause()  # the screen has handled the last Input.Changed too


def texts(app: CallstreamApp) -> str:
    """Everything the conversation widgets would show, as text."""
    out = []
    for widget in app.screen.query("#transcript *"):
        if isinstance(widget, Static):
            out.append(str(widget.render()))
        elif isinstance(widget, ProseBlock):
            out.append(widget.source)
    return "\n".join(out)


def cards(app: CallstreamApp) -> list[ToolCard]:
    return list(app.screen.query(ToolCard))


def on_screen(app: CallstreamApp) -> str:
    """What a person sees, row by row, as plain text (the screenshot's no-break spaces as spaces)."""
    return "\n".join(screen_lines(app)).replace("\xa0", " ")


def in_order(shown: str, *parts: str) -> bool:
    """Each part appears in ``shown`` after the one before it."""
    at = 0
    for part in parts:
        at = shown.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


async def test_preamble_and_two_calls_of_the_same_tool(request: pytest.FixtureRequest) -> None:
    app = demo_app()
    messages: list[str] = []
    async with app.run_test(size=SIZE, message_hook=lambda m: messages.append(type(m).__name__)) as pilot:
        await send(app, pilot, "Show me Grace Hopper's open and shipped orders")
        assert "Submitted" in messages
        shown = on_screen(app)  # the welcome, the question, the preamble, both cards, the answer, what it cost
        assert in_order(shown, "You are talking to the demo model", "Show me Grace Hopper's open and shipped orders",
                        "I'll look up Grace Hopper's", "search_orders", "Found: 1", "search_orders", "Found: 2",
                        "I found 3 orders:", "demo · tokens"), shown
        first, second = cards(app)
        assert (first.block.name, first.block.state) == ("search_orders", "ran")
        assert second.block.arguments == {"customer": "Grace Hopper", "status": "shipped"}
        assert "Customer  Grace Hopper" in str(first.query_one(".card-fields", Static).render())
        check_snapshot(app, "preamble_and_two_calls", request.config)


async def test_a_call_caught_mid_formation(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    pieces = ['{"customer": "Ada Lo', 'velace", ', '"status": "la', 'te", "text": "tracking stale for a week"}']
    encoder = streamgen.MessagesEncoder("m")
    head = streamgen.render(encoder, [("text", "Searching. "), ("start", 0, "t1", "search_orders")]
                            + [("args", 0, p) for p in pieces[:3]])
    tail = streamgen.render(encoder, [("args", 0, pieces[3]), ("end", 0)])[1:]  # [1:]: no second message_start
    tail += encoder.finish("tool_use") + encoder.terminal()
    body = b"".join(head + tail)
    pause_at = len(b"".join(head))  # the customer closed, the status still streaming
    hold = threading.Event()
    with FaultServer() as server:
        # the server holds the stream at that point until the snapshot is taken: the test
        # waits for the card's state, and no timer can move the screen on under it
        server.replies.append(Reply(body, chunk=16, pause_at=pause_at, hold=hold))
        endpoint = Endpoint("anthropic", server.url, "m", "test")
        # the held stream must outlast the wait, however slow the machine: not the demo's 15 s read timeout
        held = ProviderProfile(name="demo", provider="demo", read_timeout=300.0)
        app = still(make_app(config=Config(providers={"demo": held}, default="demo"), endpoint=endpoint))
        try:
            async with app.run_test(size=SIZE) as pilot:
                prompt = app.screen.query_one(PromptInput)
                prompt.text = "find Ada's late orders"
                await pilot.press("enter")

                def formed() -> bool:
                    found = cards(app)
                    prose = list(app.screen.query(ProseBlock))
                    # everything up to the hold has arrived: the customer stable, the status begun
                    fields = str(found[0].query_one(".card-fields", Static).render()) if found else ""
                    return bool(prose) and "Searching." in prose[0].source and (
                        "Customer  Ada Lovelace" in fields and "Status" in fields)

                await wait_for(pilot, formed)
                await wait_for(pilot, lambda: not app.screen.query_one(PromptInput).text)
                card = cards(app)[0]
                shown = str(card.query_one(".card-fields", Static).render())
                assert card.block.state == "preparing"
                assert "Customer  Ada Lovelace" in shown and "late" not in shown
                assert '"' not in shown and "{" not in shown  # never raw JSON
                await quiet(pilot, running=("chat",))  # the stream is held; everything that came has drawn
                check_snapshot(app, "mid_formation", request.config)
                app.session.cancel()
                hold.set()
                await settle(app, pilot)
        finally:
            hold.set()


async def test_a_cut_off_turn_ends_as_a_stated_failure(request: pytest.FixtureRequest) -> None:
    app = demo_app(retries=0)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/demo cutoff")
        (card,) = cards(app)
        assert card.block.state == "not run"
        notes = [str(n.render()) for n in app.screen.query(NoteBlock)]
        assert "Interrupted: the connection dropped while create_ticket was being prepared; it was not run." in notes
        assert "failed" in str(app.screen.query_one("StatusLine").render())
        check_snapshot(app, "cut_off_turn", request.config)


async def test_a_schema_rejection_answered_in_band(request: pytest.FixtureRequest) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/demo invalid-args")
        rejected, corrected = cards(app)
        assert rejected.block.state == "rejected" and corrected.block.state == "ran"
        shown = str(rejected.query_one(".card-result", Static).render())
        assert "order_id: wrong type" in shown and "subject missing" in shown
        assert "1042" not in shown  # the card names fields, never their values
        check_snapshot(app, "schema_rejection", request.config)


async def test_a_failed_tool(request: pytest.FixtureRequest) -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-9999")
        (card,) = cards(app)
        assert card.block.state == "failed"
        assert str(card.query_one(".card-result", Static).render()) == "There is no order A-9999"
        check_snapshot(app, "failed_tool", request.config)


def _lookup_tool(tmp_path: Path) -> CommandToolConfig:
    script = tmp_path / "lookup.py"
    script.write_text("import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'user': args['query'], "
                      "'authorised': bool(args.get('api_token'))}))\n")
    return CommandToolConfig(
        "lookup_user", [sys.executable, str(script)], "Look a user up",
        {"type": "object", "properties": {"query": {"type": "string"}, "api_token": {"type": "string"}},
         "required": ["query"]},
        read_only=True, display=[("query", "Query")])


SECRET = "sk-live-5EcReT-9f8e7d"


async def test_an_unlisted_secret_field_never_appears(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    calls = (streamgen.call_script(0, "t1", "lookup_user", json.dumps({"query": "ada", "api_token": SECRET}), 5)
             + streamgen.call_script(1, "t2", "lookup_user", json.dumps({"query": "bob", "api_token": 12345}), 5))
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic([("text", "Looking them up. ")] + calls), chunk=23))
        server.replies.append(Reply(streamgen.anthropic([("text", "Found them.")], stop_reason="end_turn")))
        app = still(make_app(config=Config(tools={"lookup_user": _lookup_tool(tmp_path)}),
                             endpoint=Endpoint("anthropic", server.url, "m", "test")))
        seen: list[str] = []
        async with app.run_test(size=SIZE) as pilot:
            prompt = app.screen.query_one(PromptInput)
            prompt.text = "who are ada and bob?"
            await pilot.press("enter")
            def looked() -> bool:  # every frame while it streams
                seen.append(texts(app))
                return not app.session.busy

            await wait_for(pilot, looked, "the turn to end")
            await settle(app, pilot)
            first, second = cards(app)
            assert first.block.state == "ran" and second.block.state == "rejected"
            svg = check_snapshot(app, "unlisted_secret", request.config)
            for widget in app.screen.query("*"):
                if isinstance(widget, Widget):
                    assert SECRET not in str(widget.render()), widget
            assert all(SECRET not in frame and "api_token" not in frame for frame in seen)
            assert SECRET not in svg and "12345" not in texts(app)
            # the arguments themselves are intact: only the screen is filtered
            assert first.block.arguments == {"query": "ada", "api_token": SECRET}
            assert SECRET in json.dumps(server.requests[1]["body"])


HOSTILE = ["[/INST]", "[@click=app.quit]quit[/]", "\x1b]52;c;ZXZpbCBjbGlwYm9hcmQ=\x07", "\x1b[2J", "[link=http://x]y"]


async def test_hostile_text_is_inert_everywhere(tmp_path: Path) -> None:
    hostile = " ".join(HOSTILE)
    script = tmp_path / "echo.py"
    script.write_text("import json, sys\nprint(json.load(sys.stdin)['query'])\n")
    tool = CommandToolConfig("echo", [sys.executable, str(script)], "Echo",
                             {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
                             read_only=True, display=[("query", "Query")])
    call = streamgen.call_script(0, "t1", "echo", json.dumps({"query": hostile}), 4)
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic([("text", hostile + " ")] + call), chunk=9))
        server.replies.append(Reply(streamgen.anthropic([("text", "after " + hostile)], stop_reason="end_turn")))
        app = make_app(config=Config(tools={"echo": tool}), endpoint=Endpoint("anthropic", server.url, "m", "t"))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            prompt = app.screen.query_one(PromptInput)
            prompt.text = hostile
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.is_running  # [@click=app.quit] did nothing
            shown = texts(app)
            (card,) = cards(app)
            assert card.block.state == "ran"
            for widget in app.screen.query(UserMessage):
                assert "[/INST]" in str(widget.render())
            assert "\x1b" not in shown and "\x07" not in shown
            assert "\\x1b]52;c;" in shown and "\\x1b[2J" in shown
            assert "[@click=app.quit]" in shown
            prose = [w.source for w in app.screen.query(ProseBlock)]
            assert any("\\x1b[2J" in p for p in prose)
            result = str(card.query_one(".card-result", Static).render())
            assert "\\x1b[2J" in result and "[/INST]" in result


async def cancel_the_slow_reply(app: CallstreamApp, pilot: Any) -> None:
    """``/demo slow``, and Esc once its preamble shows (the stream then stalls for a minute, before any call)."""
    app.screen.query_one(PromptInput).text = "/demo slow"
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.screen.query(ProseBlock) and app.session.busy, "the slow reply to begin")
    await pilot.press("escape")
    await settle(app, pilot)


async def test_escape_cancels_and_ctrl_r_retries() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await cancel_the_slow_reply(app, pilot)
        notes = [str(n.render()) for n in app.screen.query(NoteBlock)]
        assert "Interrupted: the turn was cancelled." in notes
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert cards(app) and cards(app)[-1].block.state == "ran"
        assert len(app.screen.query(ProseBlock)) == 2  # the cancelled attempt's prose was replaced


def shown_svg(app: CallstreamApp) -> str:
    """The live screen as a reopened one would show it: how long the last
    exchange took is live-only (the status line's detail), the rest must match."""
    app.screen.query_one(StatusLine).detail = ""
    return screen_svg(app)


async def reopened_svg(conversation: str, config: Config, endpoint: Endpoint | None = None) -> str:
    app = make_app(config=config, conversation=conversation, endpoint=endpoint)
    app.cursor_blink = False
    async with app.run_test(size=SIZE) as pilot:
        await quiet(pilot)
        return screen_svg(app)


async def test_ctrl_r_of_a_turn_cancelled_before_any_call_reissues_it_and_reopens_as_shown() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await cancel_the_slow_reply(app, pilot)
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert [t.index for t in app.session.turns[:2]] == [0, 0]  # the same turn, re-issued
        live = shown_svg(app)
        conversation = app.session.conversation
    assert await reopened_svg(conversation, demo_config()) == live


async def test_ctrl_r_after_esc_while_a_tool_ran_continues_from_it_and_stores_what_ran(tmp_path: Path) -> None:
    """Esc while a side-effecting tool runs: it may have happened (unknown),
    so Ctrl+R does not regenerate the turn; it continues from it, and the
    store holds exactly what the screen shows."""
    from tests.conversations import stored

    started = tmp_path / "started"
    script = tmp_path / "slow.py"
    # the tool runs until it is stopped (the scenario: Esc must find it running), saying first that it started
    script.write_text(f"import pathlib, signal\npathlib.Path({str(started)!r}).write_text('x')\nsignal.pause()\n")
    tool = CommandToolConfig("file_note", [sys.executable, str(script)], read_only=False,
                             parameters={"type": "object", "properties": {"text": {"type": "string"}}},
                             display=[("text", "Note")])
    config = Config(tools={"file_note": tool}, allow=["file_note"])  # runs without asking: this is about Esc
    call = streamgen.call_script(0, "t1", "file_note", '{"text": "hello"}')
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic([("text", "Filing it. ")] + call)))
        server.replies.append(Reply(streamgen.anthropic([("text", "It may have been filed.")],
                                                        stop_reason="end_turn")))
        endpoint = Endpoint("anthropic", server.url, "m", "test")
        app = make_app(config=config, endpoint=endpoint)
        app.cursor_blink = False
        async with app.run_test(size=SIZE) as pilot:
            prompt = app.screen.query_one(PromptInput)
            prompt.text = "file a note"
            await pilot.press("enter")
            await wait_for(pilot, lambda: started.exists() and cards(app) and cards(app)[0].block.state == "running",
                           "the tool to be running")
            await pilot.press("escape")
            await settle(app, pilot)
            assert cards(app)[0].block.state == "unknown"
            await pilot.press("ctrl+r")
            await settle(app, pilot)
            assert [t.index for t in app.session.turns] == [0, 1]  # continued as a new turn
            live = shown_svg(app)
            conversation = app.session.conversation
        second = json.dumps(server.requests[1]["body"])
        assert "outcome is unknown" in second and "hello" in second
        conv = stored(conversation)
        assert conv is not None
        turns = [i for i in conv.items if hasattr(i, "blocks")]
        assert [b.state for b in turns[0].blocks if b.type == "tool_call"] == ["unknown"]
        assert turns[1].blocks[0].text == "It may have been filed."
        assert await reopened_svg(conversation, config, endpoint) == live


async def test_enter_sends_and_ctrl_j_adds_a_line() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press("h", "i", "ctrl+j", "t", "h", "e", "r", "e")
        assert prompt.text == "hi\nthere"
        await pilot.press("enter")
        await settle(app, pilot)
        assert prompt.text == ""
        assert str(app.screen.query(UserMessage).first().render()) == "hi\nthere"


def test_layers_widgets_import_no_network_store_or_dispatcher() -> None:
    for path in (Path(__file__).resolve().parents[1] / "widgets").glob("*.py"):
        text = path.read_text()
        for forbidden in ("httpx", "sqlite3", "app.tools", "app.net", "app.chat", "app.demo", "app.store"):
            assert forbidden not in text, (path.name, forbidden)


def test_run_demo_app_factory_has_no_key_and_no_network(home: Path) -> None:
    app = make_app(config=Config())
    try:
        assert app.endpoint.base_url.startswith("http://127.0.0.1:")
        assert app.welcome and "demo model (offline, scripted)" in app.welcome
    finally:
        asyncio.run(app.session.aclose())
        app.runtime.close()


async def test_a_reopened_transcript_looks_as_it_did_live(request: pytest.FixtureRequest) -> None:
    """The snapshot taken live at the end of a conversation equals the
    snapshot of the same conversation reopened from the store."""
    live = demo_app()
    async with live.run_test(size=SIZE) as pilot:
        await send(live, pilot, "Show me Grace Hopper's open and shipped orders")
        await send(live, pilot, "/demo truncated")
        live.screen.query_one(StatusLine).detail = ""  # how long the turn took is live-only
        live_svg = check_snapshot(live, "reopen_live", request.config)
        conversation = live.session.conversation
    reopened = still(make_app(config=demo_config(), conversation=conversation))
    async with reopened.run_test(size=SIZE) as pilot:
        await quiet(pilot)
        assert len(cards(reopened)) == 3
        reopened_svg = check_snapshot(reopened, "reopen_live", request.config)
    assert reopened_svg == live_svg


async def test_ctrl_o_lists_transcripts_and_opens_one() -> None:
    first = demo_app()
    async with first.run_test(size=SIZE) as pilot:
        await send(first, pilot, "Show me order A-1042")
        conversation = first.session.conversation
    from textual.widgets import OptionList

    from app.tui.transcripts_screen import TranscriptsScreen

    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await transcripts_listed(app, pilot, "")
        options = app.screen.query_one(OptionList)
        assert options.option_count == 1  # an app opened and not used leaves no conversation behind
        await pilot.press("n", "o", "p", "e")
        await transcripts_listed(app, pilot, "nope")
        assert app.screen.query_one(OptionList).get_option_at_index(0).disabled  # "no saved transcripts match"
        for _ in range(4):
            await pilot.press("backspace")
        await pilot.press("A", "-", "1", "0", "4", "2")
        await transcripts_listed(app, pilot, "A-1042")
        # the matching messages of that one conversation: the question, the prose, the card's fields
        assert app.screen.query_one(OptionList).option_count >= 2
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, TranscriptsScreen) and cards(app),
                       "the chosen conversation on the chat screen")
        assert app.session.conversation == conversation
        assert [c.block.name for c in cards(app)] == ["get_order"]
        await send(app, pilot, "Thanks")  # and the conversation goes on
        assert len(app.session.history) > 3


async def test_a_turn_killed_while_a_call_formed_reopens_with_the_card_and_the_note() -> None:
    import os
    import signal
    import sqlite3
    import subprocess

    from app.files.paths import data_dir
    from tests.conftest import ROOT

    def customer_stored() -> bool:
        """The stored buffer has reached the customer: the order id before it is stable."""
        if not (data_dir() / "callstream.db").exists():
            return False
        db = sqlite3.connect(f"file:{data_dir() / 'callstream.db'}?mode=ro", uri=True, timeout=5)
        try:
            rows = db.execute("SELECT CAST(raw AS TEXT) FROM call_arguments "
                              "WHERE conversation = 'killed-forming'").fetchall()
        except sqlite3.OperationalError:  # the schema not made yet
            return False
        finally:
            db.close()
        return any('"customer"' in raw for (raw,) in rows)

    worker = subprocess.Popen([sys.executable, "-m", "tests.kill_worker", "killed-forming", "forming"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    assert worker.stdout is not None
    try:
        assert worker.stdout.readline().strip() == "started"
        assert worker.stdout.readline().strip() == "forming"
        # some of the 200 KB body has streamed into the store (it takes ~5 s); any moment after will do
        await wait_until(customer_stored, "the call's stored buffer to reach the customer")
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    app = make_app(config=demo_config(), conversation="killed-forming")
    app.cursor_blink = False
    async with app.run_test(size=SIZE) as pilot:
        await quiet(pilot)
        (card,) = cards(app)
        assert (card.block.name, card.block.state) == ("create_ticket", "not run")
        fields = str(card.query_one(".card-fields", Static).render())
        assert "A-1042" in fields and '"' not in fields  # the stable allow-listed fields, never raw JSON
        notes = [str(n.render()) for n in app.screen.query(NoteBlock)]
        assert "Interrupted: callstream stopped while create_ticket was being prepared; it was not run." in notes


async def test_an_error_inside_a_turn_ends_it_as_a_stated_failure_and_the_app_stays_usable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.chat.session import ChatSession

    real = ChatSession._round
    broken = {"once": True}

    async def round_that_breaks(self: ChatSession) -> str:
        if broken.pop("once", False):
            raise RuntimeError("a bug deep in the loop")
        return await real(self)

    monkeypatch.setattr(ChatSession, "_round", round_that_breaks)
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Look up order A-1042")
        await wait_for(pilot, lambda: "This turn stopped" in texts(app))
        assert "RuntimeError: a bug deep in the loop" in texts(app)
        from widgets.status_line import StatusLine

        assert app.screen.query_one(StatusLine).state == "ready" and not app.session.busy
        await send(app, pilot, "Look up order A-1042")
        await wait_for(pilot, lambda: any(c.block.state == "ran" for c in cards(app)))


async def test_a_widget_that_fails_is_said_once_and_the_turn_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def feed_that_breaks(self: ToolCard, fragment: str) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(ToolCard, "feed", feed_that_breaks)
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Look up order A-1042")
        await wait_for(pilot, lambda: not app.session.busy)
        assert texts(app).count("could not be shown") == 1
        assert app.session.turns and app.session.turns[-1].result is not None
        assert app.session.turns[-1].result.outcome == "complete"


async def test_a_tool_result_a_hundred_thousand_deep_shows_and_reopens(tmp_path: Path) -> None:
    script = tmp_path / "deep.py"
    script.write_text("print('[' * 100000 + ']' * 100000)\n")
    tool = CommandToolConfig("deep", [sys.executable, str(script)], "Deep", {"type": "object", "properties": {}},
                             read_only=True)
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic(streamgen.call_script(0, "t1", "deep", "{}"))))
        server.replies.append(Reply(streamgen.anthropic([("text", "It was deep.")], stop_reason="end_turn")))
        config = Config(tools={"deep": tool})
        endpoint = Endpoint("anthropic", server.url, "m", "test")
        app = make_app(config=config, endpoint=endpoint)
        app.cursor_blink = False
        async with app.run_test(size=SIZE) as pilot:
            await send(app, pilot, "go deep")
            await wait_for(pilot, lambda: not app.session.busy and "It was deep." in texts(app))
            (card,) = cards(app)
            assert card.block.state == "ran"
            from widgets.status_line import StatusLine

            assert app.screen.query_one(StatusLine).state == "ready"
            conversation = app.session.conversation
        reopened = make_app(config=config, endpoint=Endpoint("anthropic", server.url, "m", "test"),
                            conversation=conversation)
        reopened.cursor_blink = False
        async with reopened.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: len(cards(reopened)) == 1)
            assert cards(reopened)[0].block.state == "ran" and "It was deep." in texts(reopened)
