"""Issue 26 items 5 and 6 in the TUI, under Pilot against server-everything (peers/everything):
its prompts as ``/ev:prompt`` slash commands whose expansion is shown and put in the box before
anything is sent; ``@ev:uri`` in the composer, completed with Tab and attached when sent;
``/resource open`` showing a card's linked resources on the card, inert, and again when the
subscribed resource changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.settings.config import load_config
from app.tui.app import make_app
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.test_mcp_everything import everything
from tests.waiting import wait_for
from widgets.attachment_chips import AttachmentChips
from widgets.note import NoteBlock
from widgets.prompt_input import PromptInput
from widgets.resource_view import ResourceView


def configure(home: Path, provider: str = 'default = "demo"\n[providers.demo]\nprovider = "demo"\n') -> None:
    table = everything()
    args = ", ".join(json.dumps(a) for a in table["args"])
    (home / "config.toml").write_text(f"{provider}\n[mcp.ev]\ncommand = {json.dumps(table['command'])}\n"
                                      f'args = [{args}]\nstartup_timeout = 60\napproval = "never"\n')


def notes(app: Any) -> list[str]:
    return [str(n.render()) for n in app.screen.query(NoteBlock)]


def box(app: Any) -> PromptInput:
    return app.screen.query_one(PromptInput)


async def enter(app: Any, pilot: Any, text: str) -> None:
    box(app).text = text
    await pilot.press("enter")
    await pilot.pause()


def said(app: Any) -> str:
    turns = app.session.turns
    return "".join(b.text for b in turns[-1].blocks if b.type == "text") if turns else ""


async def test_a_servers_prompts_are_slash_commands_whose_expansion_is_shown_before_it_is_sent(home: Path) -> None:
    configure(home)
    app = make_app(config=load_config())
    app.cursor_blink = False
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: "ev:args-prompt" in app.screen.commands, "ev's prompts as commands",
                       seen=lambda: list(app.screen.commands))
        await enter(app, pilot, "/help")
        assert any("/ev:args-prompt city=… [state=…]" in n for n in notes(app))
        box(app).text = "/ev:simp"
        await pilot.press("tab")
        assert box(app).text == "/ev:simple-prompt"
        # an argument completed by the server (completion/complete), given the ones typed before it
        box(app).text = "/ev:completable-prompt department=Eng"
        await pilot.press("tab")
        await wait_for(pilot, lambda: box(app).text == "/ev:completable-prompt department=Engineering",
                       "the server's completion", seen=lambda: box(app).text)
        box(app).text = "/ev:completable-prompt department=Engineering name=A"
        await pilot.press("tab")
        await wait_for(pilot, lambda: box(app).text == "/ev:completable-prompt department=Engineering name=Alice",
                       "the completion for the department typed", seen=lambda: box(app).text)
        await enter(app, pilot, "/ev:args-prompt")  # its required argument missing: said, nothing sent
        await wait_for(pilot, lambda: any("/ev:args-prompt needs city" in n for n in notes(app)), "the usage")
        await enter(app, pilot, '/ev:args-prompt "New York" state=NY')
        await wait_for(pilot, lambda: "New York" in box(app).text, "the expansion in the box",
                       seen=lambda: (box(app).text, notes(app)[-1:]))
        expansion = box(app).text
        assert "NY" in expansion and not app.session.turns  # shown, not sent
        assert any("/ev:args-prompt expanded to 1 message(s)" in n and "[user] " in n for n in notes(app))
        await pilot.press("enter")  # the person sends it
        await wait_for(pilot, lambda: app.session.turns and not app.screen.busy, "the demo's answer")
        assert app.session.history[0].text == expansion
        # a prompt that embeds a resource: the resource goes along as an attachment
        await enter(app, pilot, "/ev:resource-prompt Text 2")
        await wait_for(pilot, lambda: any("/ev:resource-prompt expanded to 2 message(s) and 1 attachment(s)" in n
                                          for n in notes(app)), "the expansion", seen=lambda: notes(app)[-1:])
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.session.turns) == 2 and not app.screen.busy, "the second answer")
        chips = [str(c.render()) for c in app.screen.query(AttachmentChips)]
        assert any("demo://resource/dynamic/text/2" in c for c in chips), chips
        assert said(app).startswith("I received 1 file:")
        # /new: a fresh screen has the prompts too, and the old one is no longer told of changes
        catalog = app.screen.mcp.catalog
        await enter(app, pilot, "/new")
        await wait_for(pilot, lambda: app.screen.mcp is not None and "ev:args-prompt" in app.screen.commands,
                       "the new screen's prompt commands")
        assert len(catalog.listeners) == 1 and len(catalog.updates) == 1


async def test_an_at_resource_is_completed_with_tab_and_attached_when_the_message_is_sent(home: Path) -> None:
    configure(home)
    app = make_app(config=load_config())
    app.cursor_blink = False
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: app.screen.mcp is not None and app.screen.mcp.catalog.offered["ev"].resources,
                       "ev's resources listed")
        box(app).text = "Summarise @e"
        await pilot.press("tab")
        assert box(app).text == "Summarise @ev:"
        box(app).text = "Summarise @ev:demo://resource/static/document/arch"
        await pilot.press("tab")
        assert box(app).text == "Summarise @ev:demo://resource/static/document/architecture.md"
        await enter(app, pilot, "What does this say: @ev:demo://resource/dynamic/text/1?")  # the ? is the sentence's
        await wait_for(pilot, lambda: app.session.turns and not app.screen.busy, "the demo's answer",
                       seen=lambda: notes(app)[-2:])
        chips = [str(c.render()) for c in app.screen.query(AttachmentChips)]
        assert any("demo://resource/dynamic/text/1" in c for c in chips), chips
        assert said(app).startswith("I received 1 file:") and "Resource 1: This is a plaintext resource" in said(app)
        # one that cannot be read sends nothing and gives the words back
        await enter(app, pilot, "And @ev:demo://nothing/here ?")
        await wait_for(pilot, lambda: any("Not sent: ev could not read demo://nothing/here" in n for n in notes(app)),
                       "the refusal")
        assert box(app).text == "And @ev:demo://nothing/here ?" and len(app.session.turns) == 1
        await enter(app, pilot, "/resource elsewhere:a://b")
        await wait_for(pilot, lambda: any("no connected MCP server named 'elsewhere' offers resources (those that "
                                          "do: ev)" in n for n in notes(app)), "the refusal of an unknown server")
        await enter(app, pilot, "/resource ???")
        await wait_for(pilot, lambda: any(n.startswith("Usage: /resource") for n in notes(app)), "the usage")


async def test_resource_open_shows_a_cards_linked_resources_on_it_inert_and_again_when_they_change(home: Path) -> None:
    script = streamgen.call_script(0, "c1", "ev__get-resource-reference", json.dumps({"resourceType": "Text",
                                                                                     "resourceId": 3}))
    with FaultServer() as model:
        model.replies += [Reply(streamgen.openai_chat(script)),
                          Reply(streamgen.openai_chat([("text", "Here it is.")], finish="stop"))]
        configure(home, f'default = "fx"\n[providers.fx]\nprovider = "openai-chat"\nbase_url = "{model.url}"\n'
                        'model = "m"\napi_key_env = "NO_KEY"\n')
        app = make_app(config=load_config())
        app.cursor_blink = False
        async with app.run_test(size=(120, 50)) as pilot:
            await wait_for(pilot, lambda: app.screen.mcp is not None and app.screen.mcp.catalog.with_resources(),
                           "ev connected")
            await enter(app, pilot, "show me resource 3")
            await wait_for(pilot, lambda: app.session.turns and not app.screen.busy, "the turn",
                           seen=lambda: notes(app)[-2:])
            await enter(app, pilot, "/resource open")

            def views() -> list[str]:
                return [str(v.render()) for v in app.screen.query(ResourceView)]

            await wait_for(pilot, lambda: views(), "the resource on the card", seen=lambda: notes(app)[-2:])
            (view,) = views()
            assert view.startswith("resource demo://resource/dynamic/text/3\n[resource demo://resource/dynamic/")
            assert "Resource 3: This is a plaintext resource" in view
            server = app.screen.mcp.catalog.server("ev")
            await server.call("toggle-subscriber-updates", {}, "k-updates")  # it tells of subscribed changes
            await wait_for(pilot, lambda: "updated 1×" in "".join(views()), "the card read it again",
                           seen=views, timeout=60)
            await server.call("toggle-subscriber-updates", {}, "k-updates-off")


async def test_hostile_resource_and_prompt_text_is_shown_inert_on_the_card_in_notes_and_in_the_box(
        home: Path) -> None:
    import sys

    from tests.conftest import ROOT

    script = streamgen.call_script(0, "c1", "rx__linker", "{}")
    with FaultServer() as model:
        model.replies += [Reply(streamgen.openai_chat(script)),
                          Reply(streamgen.openai_chat([("text", "Linked.")], finish="stop"))]
        (home / "config.toml").write_text(
            f'default = "fx"\n[providers.fx]\nprovider = "openai-chat"\nbase_url = "{model.url}"\nmodel = "m"\n'
            f'api_key_env = "NO_KEY"\n\n[mcp.rx]\ncommand = {json.dumps(sys.executable)}\n'
            f'args = ["-m", "tests.mcp_resources_fixture"]\ncwd = {json.dumps(str(ROOT))}\nstartup_timeout = 60\n')
        app = make_app(config=load_config())
        app.cursor_blink = False
        async with app.run_test(size=(120, 50)) as pilot:
            await wait_for(pilot, lambda: "rx:evil" in app.screen.commands, "rx's prompt", seen=lambda: notes(app))
            await enter(app, pilot, "link them")
            await wait_for(pilot, lambda: app.session.turns and not app.screen.busy, "the turn")
            await enter(app, pilot, "/resource open")

            def views() -> list[str]:
                return [str(v.render()) for v in app.screen.query(ResourceView)]

            await wait_for(pilot, lambda: len(views()) == 3, "the three resources on the card", seen=views)
            shown = "\n".join(views())
            assert "Hello\\x1b[2J\\x1b]0;owned\\x07 world \\u202eevil" in shown and "\x1b" not in shown
            assert "(sent to the model as an image;" in shown and "(binary content, not shown to the model)" in shown
            await enter(app, pilot, "/help")
            assert any("/rx:evil" in n and "a prompt\\x1b[31m in red" in n for n in notes(app))
            # a template's variable completed by the server (completion/complete)
            box(app).text = "Read @rx:note://al"
            await pilot.press("tab")
            await wait_for(pilot, lambda: box(app).text == "Read @rx:note://alp", "the common start of two",
                           seen=lambda: box(app).text)
            box(app).text = "Read @rx:note://alph"
            await pilot.press("tab")
            await wait_for(pilot, lambda: box(app).text == "Read @rx:note://alpha", "the one value",
                           seen=lambda: box(app).text)
            await enter(app, pilot, "/rx:evil")
            await wait_for(pilot, lambda: "Hello" in box(app).text, "the expansion in the box")
            assert "\x1b" not in box(app).text and "\u202e" not in box(app).text
            assert not any("\x1b" in n for n in notes(app))
