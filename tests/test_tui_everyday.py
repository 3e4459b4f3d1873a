"""The everyday parts of the chat TUI under Pilot: the composer (queued
sends, history, the editor), scrolling from the input box, focus, every
slash command, copy (the clipboard call observed), settings that persist,
and the screen at three sizes with the whole input box drawn."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from textual.widgets import OptionList, Static

from app.net.endpoint import Endpoint
from app.settings.config import Config
from app.settings.tools import CommandToolConfig
from app.stream.history import User
from app.tui import slash
from app.tui.app import CallstreamApp, make_app
from app.tui.commands import builtin_commands
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.snapshots import check_snapshot
from tests.test_tui import cards, demo_config, on_screen, settle, still
from tests.waiting import wait_for
from widgets.note import NoteBlock
from widgets.prompt_input import PromptInput
from widgets.status_line import StatusLine
from widgets.user_message import UserMessage

SIZE = (100, 40)


def demo(**config: Any) -> CallstreamApp:
    base = demo_config()
    for key, value in config.items():
        setattr(base, key, value)
    return still(make_app(config=base))


def prompt_of(app: CallstreamApp) -> PromptInput:
    return app.screen.query_one(PromptInput)


def notes(app: CallstreamApp) -> list[str]:
    return [str(n.render()) for n in app.screen.query(NoteBlock)]


def status(app: CallstreamApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


async def type_and_enter(app: CallstreamApp, pilot: Any, text: str) -> None:
    prompt_of(app).text = text
    await pilot.press("enter")
    await pilot.pause()


async def send(app: CallstreamApp, pilot: Any, text: str) -> None:
    await type_and_enter(app, pilot, text)
    await settle(app, pilot)


def recorded_requests(app: CallstreamApp) -> list[dict[str, Any]]:
    """The request bodies the session sent, from its recording (what went on the wire)."""
    from app.files.paths import data_dir
    from app.store.recording import read_recording, recording_path

    recording = read_recording(recording_path(data_dir() / "recordings", app.session.conversation))
    return [data["request"] for _, kind, data in recording.events
            if kind == "m" and isinstance(data, dict) and data.get("kind") == "turn"]


def held_reply(hold: threading.Event, first: str = "Thinking it over. ", then: str = "Done.") -> Reply:
    """A reply that stops after ``first`` until the test sets ``hold``: a turn
    that runs exactly as long as the test needs it to."""
    encoder = streamgen.MessagesEncoder("m")
    head = b"".join(streamgen.render(encoder, [("text", first)]))
    tail = b"".join(streamgen.render(encoder, [("text", then)])[1:] + encoder.finish("end_turn")
                    + encoder.terminal())
    return Reply(head + tail, pause_at=len(head), hold=hold)


def text_reply(text: str) -> Reply:
    return Reply(streamgen.anthropic([("text", text)], stop_reason="end_turn"))


def server_app(server: FaultServer) -> CallstreamApp:
    return still(make_app(config=Config(), endpoint=Endpoint("anthropic", server.url, "m", "test")))


# -- the composer ------------------------------------------------------------------


async def test_enter_while_a_reply_streams_queues_the_message_and_sends_it_after() -> None:
    hold = threading.Event()
    with FaultServer() as server:
        server.replies += [held_reply(hold), text_reply("Second answer.")]
        app = server_app(server)
        try:
            async with app.run_test(size=SIZE) as pilot:
                await type_and_enter(app, pilot, "first question")
                await wait_for(pilot, lambda: bool(app.screen.query("ProseBlock")))
                await pilot.press(*"second question")
                await pilot.press("enter")
                assert prompt_of(app).text == ""  # taken, not thrown away
                assert app.screen.queued == ["second question"]
                bar = app.screen.query_one("#queued", Static)
                assert bar.has_class("-shown") and "queued: second question" in str(bar.render())
                assert len(server.requests) == 1  # not sent while the turn runs
                hold.set()
                await wait_for(pilot, lambda: not app.screen.busy)
                await settle(app, pilot)
                users = [str(w.render()) for w in app.screen.query(UserMessage)]
                assert users == ["first question", "second question"]
                assert not bar.has_class("-shown")
                assert "Second answer." in app.session.history[-1].text  # type: ignore[union-attr]
        finally:
            hold.set()


async def test_a_queued_message_comes_back_to_the_box_when_the_turn_is_cancelled() -> None:
    hold = threading.Event()
    with FaultServer() as server:
        server.replies.append(held_reply(hold))
        app = server_app(server)
        try:
            async with app.run_test(size=SIZE) as pilot:
                await type_and_enter(app, pilot, "first question")
                await wait_for(pilot, lambda: bool(app.screen.query("ProseBlock")))
                await type_and_enter(app, pilot, "and then this")
                await pilot.press("escape")
                await wait_for(pilot, lambda: not app.screen.busy)
                await settle(app, pilot)
                assert prompt_of(app).text == "and then this"
                assert any("your queued message was not sent: it is back in the input box" in n for n in notes(app))
                assert [e.text for e in app.session.history if isinstance(e, User)] == ["first question"]
        finally:
            hold.set()


async def test_up_and_down_walk_the_prompt_history_which_survives_a_restart() -> None:
    first = demo()
    async with first.run_test(size=SIZE) as pilot:
        await send(first, pilot, "Show me order A-1042")
        await send(first, pilot, "Show me order A-1043")
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        prompt = prompt_of(app)
        await pilot.press(*"draft")
        await pilot.press("up")
        assert prompt.text == "Show me order A-1043"
        await pilot.press("up")
        assert prompt.text == "Show me order A-1042"
        await pilot.press("up")  # the oldest: stays
        assert prompt.text == "Show me order A-1042"
        await pilot.press("down")
        assert prompt.text == "Show me order A-1043"
        await pilot.press("down")
        assert prompt.text == "draft"  # what was being typed is not lost


async def test_up_inside_a_multi_line_prompt_moves_the_cursor_not_the_history() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        await pilot.press("a", "ctrl+j", "b")
        await pilot.press("up")
        assert prompt_of(app).text == "a\nb" and prompt_of(app).cursor_location[0] == 0


async def test_ctrl_e_edits_the_prompt_in_the_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\np = sys.argv[1]\ntext = open(p).read()\nopen(p, 'w').write(text + ' — and more')\n")
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"a long prompt")
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert prompt_of(app).text == "a long prompt — and more"
        assert app.screen.focused is prompt_of(app)


async def test_tab_never_swallows_typing() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hel")
        await pilot.press("tab")  # the focus moves on…
        assert app.screen.focused is not prompt_of(app)
        await pilot.press(*"lo")  # …and typing brings it back, nothing lost
        assert prompt_of(app).text == "hello"
        assert app.screen.focused is prompt_of(app)


async def test_the_focused_input_looks_focused() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        prompt = prompt_of(app)
        focused = prompt.styles.border_top[1]
        await pilot.press("tab")
        await pilot.pause()
        assert prompt.styles.border_top[1] != focused


# -- scrolling from the input box ------------------------------------------------------


async def test_pageup_pagedown_home_end_scroll_the_conversation_from_the_input() -> None:
    app = demo()
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(3):
            await send(app, pilot, "/help")
        conversation = app.screen.transcript
        assert conversation.max_scroll_y > 10 and app.screen.focused is prompt_of(app)
        bottom = conversation.scroll_y
        await pilot.press("pageup")
        assert conversation.scroll_y < bottom
        await pilot.press("home")
        assert conversation.scroll_y == 0
        await pilot.press("pagedown")
        assert conversation.scroll_y > 0
        await pilot.press("end")
        assert conversation.scroll_y == conversation.max_scroll_y
        assert app.screen.focused is prompt_of(app)  # the keys never took the focus away
        await pilot.press(*"abc", "home")  # with text in the box, Home and End move in the line
        assert prompt_of(app).cursor_location == (0, 0) and conversation.scroll_y == conversation.max_scroll_y


async def test_new_output_while_scrolled_up_is_marked_and_sending_scrolls_to_the_bottom() -> None:
    hold = threading.Event()
    with FaultServer() as server:
        server.replies += [held_reply(hold, then="\n\n" + "More text. " * 200), text_reply("Short.")]
        app = server_app(server)
        try:
            async with app.run_test(size=(80, 24)) as pilot:
                for _ in range(3):
                    await send(app, pilot, "/help")
                conversation = app.screen.transcript
                await type_and_enter(app, pilot, "tell me more")
                await wait_for(pilot, lambda: bool(app.screen.query("ProseBlock")))
                await pilot.press("home")
                marker = app.screen.query_one("#new-output", Static)
                hold.set()
                await wait_for(pilot, lambda: marker.has_class("-shown"))
                assert "new output" in str(marker.render()) and conversation.scroll_y == 0
                await settle(app, pilot)
                await pilot.press("end")
                assert not marker.has_class("-shown")
                await pilot.press("home")
                await send(app, pilot, "again")
                assert conversation.scroll_y == conversation.max_scroll_y
        finally:
            hold.set()


# -- slash commands ---------------------------------------------------------------------


def test_slash_words_parse_paths_and_the_demo_do_not() -> None:
    assert slash.parse("/model gpt-4o") == ("model", "gpt-4o")
    assert slash.parse("/help") == ("help", "")
    assert slash.parse("/etc/hosts says what?") is None
    assert slash.parse("/demo cutoff") is None
    assert slash.parse("what about /model") is None
    commands = builtin_commands()
    assert commands.complete("/mo") == "/model " and commands.complete("/cl") == "/clear"
    assert commands.complete("/zz") is None


async def test_help_is_generated_from_the_registry() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/help")
        shown = notes(app)[-1]
        for name in builtin_commands():
            assert f"/{name}" in shown
        assert "/demo" in shown
        assert not app.session.history  # nothing went to the model


async def test_a_registered_command_appears_in_help_and_runs() -> None:
    ran: list[str] = []
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        app.screen.commands.command("ping", "[WORD]", "answer pong")(lambda context, argument: ran.append(argument))
        await send(app, pilot, "/help")
        assert "/ping [WORD]" in notes(app)[-1]
        await send(app, pilot, "/ping hello")
        assert ran == ["hello"]


async def test_an_unknown_command_says_so_and_keeps_the_text() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/frobnicate now")
        assert "Unknown command /frobnicate — /help lists the commands." in notes(app)
        assert prompt_of(app).text == "/frobnicate now"
        assert not app.session.history


async def test_tab_completes_a_command_and_a_hint_lists_matches() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/", "m", "o")
        hint = app.screen.query_one("#hint", Static)
        assert hint.has_class("-shown") and "/model [NAME]" in str(hint.render())
        await pilot.press("tab")
        assert prompt_of(app).text == "/model "
        assert app.screen.focused is prompt_of(app)


async def test_slash_new_starts_a_fresh_conversation() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        first = app.session.conversation
        await send(app, pilot, "/new")
        await wait_for(pilot, lambda: app.session.conversation != first, "a new conversation")
        assert not app.session.history
        shown = on_screen(app)
        assert "Let me pull up A-1042" not in shown and "get_order" not in shown, shown  # the old exchange is gone
        assert app.runtime.store.load(first) is not None  # the old one stays saved


async def test_slash_model_switches_the_demo_to_anthropic_then_gemini_with_the_whole_history() -> None:
    """The next request in each new dialect carries every earlier message, tool
    call and tool result, and is a valid request of that dialect."""
    from anthropic.types.message_create_params import MessageCreateParamsStreaming

    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        assert app.session.endpoint.dialect == "openai-chat"
        await send(app, pilot, "/model anthropic")
        assert app.session.endpoint.dialect == "anthropic" and "speaking anthropic" in status(app)
        assert "the next request carries the whole conversation" in notes(app)[-1]
        await send(app, pilot, "Show me order A-1043")
        await send(app, pilot, "/model gemini")
        await send(app, pilot, "Show me Grace Hopper's open orders")
        assert app.session.endpoint.dialect == "gemini"
        bodies = recorded_requests(app)
        states = [c.block.state for c in cards(app)]
        assert states == ["ran", "ran", "ran"]
    anthropic = next(b for b in bodies if "messages" in b and "system" not in b and b.get("max_tokens"))
    TypeAdapter(MessageCreateParamsStreaming).validate_python(anthropic)
    texts = json.dumps(anthropic["messages"])
    assert "Show me order A-1042" in texts and "Show me order A-1043" in texts
    kinds = [block["type"] for m in anthropic["messages"] for block in m["content"]]
    assert "tool_use" in kinds and "tool_result" in kinds  # the openai-chat turn's call, in Anthropic's shape
    gemini = next(b for b in bodies if "contents" in b)
    roles = [c["role"] for c in gemini["contents"]]
    assert roles[0] == "user" and set(roles) == {"user", "model"}
    parts = [next(iter(p)) for c in gemini["contents"] for p in c["parts"]]
    assert parts.count("functionCall") == 2 and parts.count("functionResponse") == 2
    said = json.dumps(gemini["contents"])
    for prompt in ("Show me order A-1042", "Show me order A-1043", "Grace Hopper"):
        assert prompt in said


async def test_slash_provider_with_an_unknown_name_changes_nothing() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/provider cohere")
        assert "Cannot switch: unknown provider 'cohere'" in notes(app)[-1]
        assert app.session.endpoint.dialect == "openai-chat"
        await send(app, pilot, "/provider")
        assert "Talking to demo model" in notes(app)[-1]


async def test_slash_system_sets_the_system_prompt_of_the_next_request() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/system Answer like a pirate.")
        await send(app, pilot, "Show me order A-1042")
        first = recorded_requests(app)[0]
        assert first["messages"][0] == {"role": "system", "content": "Answer like a pirate."}
        await send(app, pilot, "/system")
        assert "System prompt: Answer like a pirate." in notes(app)[-1]


async def test_slash_tools_lists_and_switches_a_tool_off() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/tools")
        assert "search_orders (on), get_order (on), create_ticket (on)" in notes(app)[-1]
        await send(app, pilot, "/tools off create_ticket")
        assert "create_ticket (off)" in notes(app)[-1]
        await send(app, pilot, "Show me order A-1042")
        offered = [t["function"]["name"] for t in recorded_requests(app)[0]["tools"]]
        assert offered == ["search_orders", "get_order"]
        await send(app, pilot, "/tools off nope")
        assert "No tool 'nope' here" in notes(app)[-1]


async def test_slash_retry_runs_the_failed_turn_again() -> None:
    app = still(make_app(config=demo_config(retries=0)))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "/demo cutoff")
        assert cards(app)[-1].block.state == "not run"
        await send(app, pilot, "/retry")
        assert cards(app)[-1].block.state == "ran"


async def test_slash_export_writes_the_conversation(tmp_path: Path) -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        target = tmp_path / "out.md"
        await send(app, pilot, f"/export markdown {target}")
        assert f"to {target}" in notes(app)[-1]
        text = target.read_text()
        assert "Show me order A-1042" in text and "get_order" in text
        await send(app, pilot, f"/export json {tmp_path / 'out.json'}")
        assert json.loads((tmp_path / "out.json").read_text())["conversation"]["id"] == app.session.conversation


async def test_slash_clear_empties_the_screen_and_keeps_the_conversation() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        before = list(app.session.history)
        await send(app, pilot, "/clear")
        shown = on_screen(app)
        assert "Let me pull up A-1042" not in shown and "get_order" not in shown, shown
        assert app.session.history == before
        assert "Screen cleared" in notes(app)[-1]


async def test_a_command_that_must_wait_is_refused_while_a_turn_runs() -> None:
    hold = threading.Event()
    with FaultServer() as server:
        server.replies.append(held_reply(hold))
        app = server_app(server)
        try:
            async with app.run_test(size=SIZE, notifications=True) as pilot:
                await type_and_enter(app, pilot, "first question")
                await wait_for(pilot, lambda: app.session.busy)
                await type_and_enter(app, pilot, "/model anthropic")
                assert prompt_of(app).text == "/model anthropic"  # kept
                assert app.session.endpoint.dialect == "anthropic" and app.session.endpoint.base_url == server.url
                hold.set()
                await settle(app, pilot)
        finally:
            hold.set()


# -- copy -------------------------------------------------------------------------------

REPLY = "Here is the fix:\n\n```python\nprint('fixed')\n```\n\nAnd a second:\n\n```sh\nmake test\n```\n"


def _lookup_tool(tmp_path: Path) -> CommandToolConfig:
    script = tmp_path / "lookup.py"
    script.write_text("import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'user': args['query']}))\n")
    return CommandToolConfig(
        "lookup_user", [sys.executable, str(script)], "Look a user up",
        {"type": "object", "properties": {"query": {"type": "string"}, "note": {"type": "string"}},
         "required": ["query"]}, read_only=True, display=[("query", "Query")])


def _copy_app(server: FaultServer, tmp_path: Path) -> CallstreamApp:
    call = streamgen.call_script(0, "t1", "lookup_user", json.dumps({"query": "ada", "note": "unlisted-note"}), 5)
    server.replies.append(Reply(streamgen.anthropic([("text", "Looking. ")] + call)))
    server.replies.append(Reply(streamgen.anthropic([("text", REPLY)], stop_reason="end_turn")))
    app = still(make_app(config=Config(tools={"lookup_user": _lookup_tool(tmp_path)}),
                         endpoint=Endpoint("anthropic", server.url, "m", "test")))
    copied: list[str] = []
    original = app.copy_to_clipboard

    def observed(text: str) -> None:
        copied.append(text)
        original(text)

    app.copy_to_clipboard = observed  # type: ignore[method-assign]
    app.copied = copied  # type: ignore[attr-defined]
    return app


async def test_slash_copy_puts_the_reply_a_code_block_and_a_card_on_the_clipboard(tmp_path: Path) -> None:
    with FaultServer() as server:
        app = _copy_app(server, tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await send(app, pilot, "who is ada?")
            await send(app, pilot, "/copy")
            await send(app, pilot, "/copy code 2")
            await send(app, pilot, "/copy card")
            await send(app, pilot, "/copy result")
            await send(app, pilot, "/copy code 9")
            copied = app.copied  # type: ignore[attr-defined]
            assert copied == [REPLY, "make test\n", "lookup_user\nQuery: ada",
                              '{"user": "ada"}']
            assert app.clipboard == '{"user": "ada"}'
            assert "The last reply has 2 code blocks." in notes(app)[-1]
            assert all("unlisted-note" not in text for text in copied)


async def test_ctrl_y_picks_a_block_to_copy_and_can_show_a_cards_whole_arguments(tmp_path: Path) -> None:
    with FaultServer() as server:
        app = _copy_app(server, tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await send(app, pilot, "who is ada?")
            await pilot.press("ctrl+y")
            await pilot.pause()
            options = app.screen.query_one(OptionList)
            labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
            assert labels[0] == "The last reply" and labels[1].startswith("Code block 1 (python)")
            await pilot.press("down", "enter")
            await pilot.pause()
            assert app.copied == ["print('fixed')\n"]  # type: ignore[attr-defined]
            (card,) = cards(app)
            assert "unlisted-note" not in json.dumps([str(w.render()) for w in card.query(Static)])
            await pilot.press("ctrl+y")
            await pilot.pause()
            options = app.screen.query_one(OptionList)
            reveal = next(i for i in range(options.option_count)
                          if "show all its arguments" in str(options.get_option_at_index(i).prompt))
            options.highlighted = reveal
            await pilot.press("enter")
            await pilot.pause()
            shown = str(card.query_one(".card-args", Static).render())
            assert "unlisted-note" in shown and "All arguments (shown on request)" in shown


# -- time, waiting, size ------------------------------------------------------------------


async def test_waiting_seconds_show_while_no_byte_arrives_and_the_turn_time_after() -> None:
    encoder = streamgen.MessagesEncoder("m")
    head = b"".join(streamgen.render(encoder, [("text", "Thinking. ")]))
    tail = b"".join(streamgen.render(encoder, [("text", "Done.")])[1:] + encoder.finish("end_turn")
                    + encoder.terminal())
    hold = threading.Event()
    now = [100.0]
    with FaultServer() as server:
        server.replies.append(Reply(head + tail, pause_at=len(head), hold=hold))
        app = still(make_app(config=Config(), endpoint=Endpoint("anthropic", server.url, "m", "test")))
        app.clock = lambda: now[0]
        try:
            async with app.run_test(size=SIZE) as pilot:
                await type_and_enter(app, pilot, "hello")
                await wait_for(pilot, lambda: bool(app.screen.query("ProseBlock")))
                now[0] += 12
                await wait_for(pilot, lambda: "waiting 12 s for the provider" in status(app), timeout=10)
                hold.set()
                await settle(app, pilot)
                assert "took 12.0 s" in status(app) and "ready" in status(app)
        finally:
            hold.set()


async def test_a_long_call_shows_its_received_size_while_it_forms() -> None:
    body = json.dumps({"order_id": "A-1042", "subject": "Late", "body": "x" * 6000})
    encoder = streamgen.MessagesEncoder("m")
    script = [("start", 0, "t1", "create_ticket")] + [("args", 0, p) for p in streamgen.fragments(body, 500)]
    head = b"".join(streamgen.render(encoder, script))
    tail = b"".join(streamgen.render(encoder, [("end", 0)])[1:] + encoder.finish("tool_use") + encoder.terminal())
    hold = threading.Event()
    with FaultServer() as server:
        server.replies.append(Reply(head + tail, pause_at=len(head), hold=hold))
        app = still(make_app(config=Config(), endpoint=Endpoint("anthropic", server.url, "m", "test")))
        try:
            async with app.run_test(size=SIZE) as pilot:
                await type_and_enter(app, pilot, "file a ticket")
                await wait_for(pilot, lambda: bool(cards(app)) and "KB received" in str(
                    cards(app)[0].query_one(".card-head", Static).render()))
                assert "5.9 KB received" in str(cards(app)[0].query_one(".card-head", Static).render())
                app.session.cancel()
                hold.set()
                await settle(app, pilot)
                assert "received" not in str(cards(app)[0].query_one(".card-head", Static).render())
        finally:
            hold.set()


# -- settings that persist -------------------------------------------------------------------


async def test_the_theme_chosen_is_remembered_across_restarts() -> None:
    app = demo()
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme != "nord"
        app.theme = "nord"
        await pilot.pause()
    again = demo()
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == "nord"


async def test_the_config_theme_is_the_default_until_one_is_chosen() -> None:
    app = demo(theme="gruvbox")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "gruvbox"


async def test_key_bindings_can_be_overridden_in_the_config() -> None:
    app = demo(keys={"copy": "ctrl+k", "nonsense": "f9"})
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(app, pilot, "Show me order A-1042")
        await pilot.press("ctrl+k")
        await pilot.pause()
        assert app.screen.query(OptionList)  # the copy picker
        assert any("'nonsense' is not a binding" in w for w in app.runtime.config.warnings)


# -- sizes -------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(120, 40), (60, 20), (40, 15)], ids=["120x40", "60x20", "40x15"])
async def test_the_whole_input_box_and_the_turn_state_at_every_size(size: tuple[int, int],
                                                                     request: pytest.FixtureRequest) -> None:
    """You should see the status line starting with the turn's state, the
    conversation, the input box with all four borders, and the footer."""
    app = demo()
    async with app.run_test(size=size) as pilot:
        await send(app, pilot, "Show me order A-1042")
        prompt = prompt_of(app)
        footer = app.screen.query_one("Footer")
        assert prompt.region.right <= size[0] - 1 and prompt.region.bottom <= footer.region.y
        assert prompt.region.width >= size[0] - 2 and prompt.region.height >= 3
        assert status(app).startswith("ready")
        svg = check_snapshot(app, f"everyday_{size[0]}x{size[1]}", request.config)
        assert "╰" in svg and "╯" in svg

