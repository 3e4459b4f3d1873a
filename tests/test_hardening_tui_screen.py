"""Issue 24, the TUI's share: approval keys that always reach the call, the
cursor after a cancelled turn, and /export that fails in words."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from app.net.endpoint import Endpoint
from app.settings.config import Config
from app.settings.tools import CommandToolConfig
from app.tui.app import CallstreamApp, make_app
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.waiting import screen_lines, wait_for
from widgets.prompt_input import PromptInput
from widgets.status_line import StatusLine
from widgets.tool_card import ToolCard

SIZE = (100, 40)


def still(app: CallstreamApp) -> CallstreamApp:
    app.cursor_blink = False
    app.clock = lambda: 0.0
    return app


def prompt_of(app: CallstreamApp) -> PromptInput:
    return app.screen.query_one(PromptInput)


def on_screen(app: CallstreamApp) -> str:
    return "\n".join(screen_lines(app)).replace("\xa0", " ")


def note_tool(runs: Path) -> CommandToolConfig:
    """A side-effecting tool that appends one line to ``runs`` each time it runs."""
    script = runs.with_suffix(".py")
    script.write_text("import json, sys\n"
                      f"with open({str(runs)!r}, 'a') as f:\n"
                      "    f.write(json.dumps(json.load(sys.stdin)) + '\\n')\n"
                      "print('filed')\n")
    return CommandToolConfig("file_note", [sys.executable, str(script)], read_only=False,
                             parameters={"type": "object", "properties": {"text": {"type": "string"}},
                                         "required": ["text"]},
                             display=[("text", "Note")])


def one_chunk_call(*calls: tuple[str, str]) -> Reply:
    """A whole turn of side-effecting calls (id, text) in ONE network chunk, as a fast local server sends it."""
    script = [step for i, (call_id, text) in enumerate(calls)
              for step in streamgen.call_script(i, call_id, "file_note", f'{{"text": "{text}"}}')]
    body = streamgen.openai_chat(script)
    return Reply(body, chunk=len(body))


def text_reply(text: str) -> Reply:
    body = streamgen.openai_chat([("text", text)], finish="stop")
    return Reply(body, chunk=len(body))


def runs_of(runs: Path) -> list[str]:
    return runs.read_text().splitlines() if runs.exists() else []


# -- item 1: `y` always reaches the card -----------------------------------------------------


async def test_y_pressed_in_the_input_box_approves_a_call_that_arrived_in_one_chunk(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    config = Config(tools={"file_note": note_tool(runs)})
    with FaultServer() as server:
        for attempt in range(5):  # the race lost about 1 run in 5: five in a row, each from the input box
            server.replies += [one_chunk_call((f"c{attempt}", f"note {attempt}")), text_reply(f"Filed {attempt}.")]
        app = still(make_app(config=config, endpoint=Endpoint("openai-chat", server.url, "m", "test")))
        async with app.run_test(size=SIZE) as pilot:
            for attempt in range(5):
                prompt = prompt_of(app)
                prompt.text = f"file note {attempt}"
                await pilot.press("enter")
                await wait_for(pilot, lambda: on_screen(app).count("awaiting approval") == 1,
                               "the card to show awaiting approval")
                prompt.focus()  # whatever has focus: here the box, where a stray `y` used to land
                await pilot.press("y")
                await wait_for(pilot, lambda a=attempt: len(runs_of(runs)) == a + 1 and not app.session.busy,
                               f"note {attempt} to run and the turn to end")
                assert prompt.text == ""
                assert f"Filed {attempt}." in on_screen(app)
        assert runs_of(runs) == [f'{{"text": "note {i}"}}' for i in range(5)]  # each ran once, none twice


async def test_typing_in_the_box_still_works_when_no_approval_is_pending(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    config = Config(tools={"file_note": note_tool(runs)})
    with FaultServer() as server:
        server.replies += [one_chunk_call(("c1", "first")), text_reply("Filed.")]
        app = still(make_app(config=config, endpoint=Endpoint("openai-chat", server.url, "m", "test")))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"yacht, fancy")  # every approval key, typed with nothing pending
            assert prompt_of(app).text == "yacht, fancy"
            prompt_of(app).text = "file it"
            await pilot.press("enter")
            await wait_for(pilot, lambda: "awaiting approval" in on_screen(app), "the card to await approval")
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.session.busy, "the turn to end")
            await pilot.press(*"yes, done")  # answered: the keys type again
            assert prompt_of(app).text == "yes, done"
            assert len(runs_of(runs)) == 1


async def test_words_being_typed_when_a_call_starts_waiting_stay_words(tmp_path: Path) -> None:
    """The approval keys reach a waiting call from an EMPTY box only: someone typing a follow-up as a
    card starts waiting keeps their words, and an 'a' of theirs answers nothing."""
    runs = tmp_path / "runs.txt"
    config = Config(tools={"file_note": note_tool(runs)})
    with FaultServer() as server:
        server.replies += [one_chunk_call(("c1", "first")), text_reply("Filed.")]
        app = still(make_app(config=config, endpoint=Endpoint("openai-chat", server.url, "m", "test")))
        async with app.run_test(size=SIZE) as pilot:
            prompt_of(app).text = "file it"
            await pilot.press("enter")
            await wait_for(pilot, lambda: "awaiting approval" in on_screen(app), "the card to await approval")
            prompt_of(app).focus()
            await pilot.press(*"x, yacht")  # a follow-up being typed: every approval letter in it
            assert prompt_of(app).text == "x, yacht"
            assert "awaiting approval" in on_screen(app) and runs_of(runs) == []  # nothing answered
            prompt_of(app).text = ""
            await pilot.press("y")  # the box is empty: y is the card's again
            await wait_for(pilot, lambda: not app.session.busy, "the turn to end")
            assert len(runs_of(runs)) == 1 and prompt_of(app).text == ""


async def test_the_status_line_says_waiting_for_approval_while_a_parallel_call_runs(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    go_on = tmp_path / "go_on"
    # the read-only tool runs until the test lets it finish: it is running while the other call awaits
    os.mkfifo(go_on)  # opening it blocks until the test opens the other end: no polling, no timer
    wait = f"open({str(go_on)!r}).read()\nprint('found')\n"
    lookup = CommandToolConfig("look_up", [sys.executable, "-c", wait], read_only=True,
                               parameters={"type": "object", "properties": {"text": {"type": "string"}}})
    config = Config(tools={"file_note": note_tool(runs), "look_up": lookup})
    script = (streamgen.call_script(0, "c1", "file_note", '{"text": "b"}')
              + streamgen.call_script(1, "c2", "look_up", '{"text": "a"}'))
    body = streamgen.openai_chat(script)
    with FaultServer() as server:
        server.replies += [Reply(body, chunk=len(body)), text_reply("Both done.")]
        app = still(make_app(config=config, endpoint=Endpoint("openai-chat", server.url, "m", "test")))
        async with app.run_test(size=SIZE) as pilot:
            said: list[tuple[list[str], str]] = []  # (the cards' states, the status line) at each change of it
            status = app.screen.status
            set_state = status.set_state

            def states() -> list[str]:
                return [c.block.state for c in app.screen.query(ToolCard)]

            def recording(state: str) -> None:
                set_state(state)
                said.append((states(), state))

            status.set_state = recording  # type: ignore[method-assign]
            prompt_of(app).text = "file it and look it up"
            await pilot.press("enter")
            await wait_for(pilot, lambda: states() == ["awaiting approval", "running"], "one awaits, one runs")
            await pilot.pause()
            line = app.screen.query_one(StatusLine)
            assert line.state == "waiting for your approval"
            assert "waiting for your approval" in on_screen(app)
            # from the moment a call awaited, the status line named nothing else until it was answered
            awaited = next(i for i, (s, _) in enumerate(said) if "awaiting approval" in s)
            assert all(state == "waiting for your approval" for _, state in said[awaited:]), said
            await pilot.press("n")
            with open(go_on, "w"):  # the tool's read returns: it finishes
                pass
            await wait_for(pilot, lambda: not app.session.busy, "the turn to end")
            assert states() == ["denied", "ran"] and runs_of(runs) == []
            assert "Both done." in on_screen(app)




# -- item 23: the cursor after a cancelled turn -------------------------------------------------


def held_reply(hold: threading.Event) -> Reply:
    """A reply that stops after its first words until the test sets ``hold``."""
    encoder = streamgen.MessagesEncoder("m")
    head = b"".join(streamgen.render(encoder, [("text", "Thinking it over. ")]))
    tail = b"".join(streamgen.render(encoder, [("text", "Done.")])[1:] + encoder.finish("end_turn")
                    + encoder.terminal())
    return Reply(head + tail, pause_at=len(head), hold=hold)


async def test_a_queued_message_put_back_after_a_cancel_leaves_the_cursor_at_its_end() -> None:
    from textual.widgets import Static

    from app.stream.history import User

    hold = threading.Event()
    with FaultServer() as server:
        server.replies.append(held_reply(hold))
        app = still(make_app(config=Config(), endpoint=Endpoint("anthropic", server.url, "m", "test")))
        try:
            async with app.run_test(size=SIZE) as pilot:
                prompt = prompt_of(app)
                prompt.text = "first question"
                await pilot.press("enter")
                await wait_for(pilot, lambda: "Thinking it over." in on_screen(app), "the reply to start")
                await pilot.press(*"and then this")
                await pilot.press("ctrl+j")
                await pilot.press(*"second line")
                await pilot.press("enter")
                assert prompt.text == "" and app.screen.queued == ["and then this\nsecond line"]
                await pilot.press("escape")
                await wait_for(pilot, lambda: not app.screen.busy and prompt.text != "", "the message back in the box")
                assert prompt.text == "and then this\nsecond line"
                assert prompt.cursor_location == (1, len("second line"))
                await pilot.press(*" too")  # what the user types next goes after it
                assert prompt.text == "and then this\nsecond line too"
                shown = on_screen(app)
                assert "your queued message was not sent: it is back in the input box" in shown
                assert "second line too" in shown
                assert not app.screen.query_one("#queued", Static).has_class("-shown")
                # nothing sent meanwhile; the first question is kept
                assert [e.text for e in app.session.history if isinstance(e, User)] == ["first question"]
                assert len(server.requests) == 1
        finally:
            hold.set()


# -- item 20: /export to a path that cannot be ---------------------------------------------------


async def test_export_to_an_unknown_users_home_or_a_path_with_nul_is_a_stated_failure(tmp_path: Path) -> None:
    import json
    import pwd

    import pytest

    from app.settings.profiles import ProviderProfile
    from tests.conversations import stored
    from widgets.note import NoteBlock

    user = "nosuchuser_cs24"
    with pytest.raises(KeyError):
        pwd.getpwnam(user)
    config = Config(providers={"demo": ProviderProfile(name="demo", provider="demo", demo_speed=0.0)},
                    default="demo")
    app = still(make_app(config=config))
    async with app.run_test(size=SIZE) as pilot:
        prompt = prompt_of(app)
        prompt.text = "Show me order A-1042"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.session.busy and bool(app.session.history), "the reply")
        conversation = app.session.conversation

        def notes() -> list[str]:
            return [str(n.render()) for n in app.screen.query(NoteBlock)]

        for typed, said in ((f"/export ~{user}/x.json",
                             f"Nothing exported: ~{user} names no home directory on this system (no such user)."),
                            (f"/export json {tmp_path}/a\x00b.json",
                             "Nothing exported: the path holds a NUL character, which no file name can hold."),
                            (f"/export {tmp_path}/no/such/dir/x.md", f"Nothing exported: cannot write {tmp_path}/no/"
                                                                     "such/dir/x.md: No such file or directory.")):
            before = len(notes())
            prompt.text = typed
            await pilot.press("enter")
            await wait_for(pilot, lambda b=before: len(notes()) > b, f"a note after {typed!r}")
            assert said in notes()[-1] and "The conversation is unchanged." in notes()[-1]
            assert app.is_running and prompt.text == ""
        assert "Traceback" not in on_screen(app)
        assert list(tmp_path.iterdir()) == []  # nothing written anywhere
        # the app goes on: the same conversation exports, whole, to a path that can be
        prompt.text = f"/export json {tmp_path}/ok.json"
        await pilot.press("enter")
        await wait_for(pilot, lambda: (tmp_path / "ok.json").exists(), "the export")
        assert f"Exported the conversation as json to {tmp_path}/ok.json." in notes()[-1]
        assert "A-1042" in json.dumps(json.loads((tmp_path / "ok.json").read_text()))
    saved = stored(conversation)
    assert saved is not None and any("A-1042" in getattr(i, "text", "") for i in saved.items)
