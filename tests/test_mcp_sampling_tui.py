"""The sampling card under Pilot (issue 26 item 3): server-everything's sampling tool called by a
scripted model in the real app; the card shows the request before anything is sent, and the person
sends it and edits the reply, refuses it up front, or refuses the reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Static

from app.net.endpoint import Endpoint
from app.settings.config import Config
from app.settings.mcp import parse_servers
from app.stream import ToolCallBlock
from app.tui.app import make_app
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.test_mcp_everything import everything
from tests.waiting import screen_lines, wait_for
from widgets.prompt_input import PromptInput
from widgets.sampling_card import SamplingCard

ASKED = "Resource trigger-sampling-request context: name a colour"


def on_screen(app: Any) -> str:
    return "\n".join(screen_lines(app)).replace("\xa0", " ")


def card_text(card: SamplingCard) -> str:
    return "\n".join(str(w.render()) for w in card.query(Static) if w.display)


async def exchange(home: Path, sampled: bool, steps: Any) -> tuple[Any, FaultServer, str, str]:
    """The app asked to sample; ``steps(pilot, app, card)`` answers the card; returns the app, the model, what
    the card shows at the end and the usage line's words."""
    config = Config(mcp=parse_servers({"ev": everything(approval="never")}, "test"))
    script = streamgen.call_script(
        0, "c1", "ev__trigger-sampling-request", json.dumps({"prompt": "name a colour", "maxTokens": 30})
    )
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic(script)))
        if sampled:
            server.replies.append(Reply(streamgen.anthropic([("text", "Teal.")], stop_reason="end_turn")))
        server.replies.append(Reply(streamgen.anthropic([("text", "All done.")], stop_reason="end_turn")))
        app = make_app(config=config, endpoint=Endpoint("anthropic", server.url, "m", "test"))
        app.cursor_blink = False
        async with app.run_test(size=(120, 80)) as pilot:
            await app.session.registry.settled()
            app.screen.query_one(PromptInput).text = "pick a colour"
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.screen.query(SamplingCard), "the sampling card on the running card")
            card = app.screen.query_one(SamplingCard)
            shown = card_text(card)
            # before anything is sent: the server, its message, its system prompt, maxTokens, the model
            assert f"✦ ev asks the model: {ASKED}" in shown
            assert f"user: {ASKED}" in shown and "system prompt: You are a helpful test server." in shown
            assert "maxTokens: 30 · model: m (the current model)" in shown
            assert "Nothing has been sent. Send this to the model?" in shown
            assert len(server.requests) == 1  # only the turn: the request waits for the person
            await steps(pilot, app, card)
            await wait_for(
                pilot,
                lambda: "All done." in on_screen(app) and not app.session.busy,
                "the call to end and the model to reply",
            )
            final, tally = card_text(card), app.screen.tally.words()
    return app, server, final, tally


async def test_the_person_sends_it_edits_the_reply_and_the_server_gets_the_edit(home: Path) -> None:
    async def steps(pilot: Any, app: Any, card: SamplingCard) -> None:
        # by keys, as a person would: the Send key has the focus, as an approval's keys do
        await wait_for(
            pilot, lambda: app.focused is card._send, "the Send key to take the focus", seen=lambda: app.focused
        )
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: card.asked.state == "replied" and app.focused is card._return,
            "the reply on the card and the Return key focused",
            seen=lambda: app.focused,
        )
        assert card.reply.text == "Teal." and "The model's reply (edit it" in card_text(card)
        await pilot.press("shift+tab")  # into the reply box
        assert app.focused is card.reply
        await pilot.press(*", as edited by me", "tab", "enter")

    app, server, final, tally = await exchange(home, True, steps)
    sampled = server.requests[1]["body"]
    assert sampled["max_tokens"] == 30 and "tools" not in sampled
    assert sampled["system"] == "You are a helpful test server."
    assert ASKED in json.dumps(sampled["messages"])
    assert "Teal., as edited by me" in json.dumps(server.requests[2]["body"])  # the server got the edit
    assert "→ returned (edited, m): Teal., as edited by me" in final
    # the tokens it spent count in the usage line
    turns = app.session.turns
    (asked,) = [b for b in turns[0].blocks if isinstance(b, ToolCallBlock)][0].samplings
    assert asked.usage is not None and asked.usage.input
    spent = sum((t.usage.input or 0) for t in turns if t.usage is not None)
    assert f"conversation tokens {spent:,} in" in tally
    # the transcript keeps what was asked and what was answered
    from app.cli.common import open_store

    tree = open_store().load(app.session.conversation)
    assert tree is not None
    calls = [b for item in tree.items for b in getattr(item, "blocks", []) if isinstance(b, ToolCallBlock)]
    (kept,) = calls[0].samplings
    assert (kept.state, kept.reply, kept.returned) == ("returned", "Teal.", "Teal., as edited by me")
    assert kept.messages[0].text == ASKED and kept.system == "You are a helpful test server."
    # reopened, the call's card shows what was asked and what went back, with nothing to press
    reopened = make_app(
        config=Config(),
        endpoint=Endpoint("anthropic", "http://127.0.0.1:9", "m", "test"),
        conversation=app.session.conversation,
    )
    async with reopened.run_test(size=(120, 60)) as pilot:
        await wait_for(pilot, lambda: reopened.screen.query(SamplingCard), "the stored sampling card")
        card = reopened.screen.query_one(SamplingCard)
        await wait_for(
            pilot, lambda: "→ returned (edited, m)" in card_text(card), "its outcome", seen=lambda: card_text(card)
        )
        assert f"✦ ev asked the model: {ASKED}" in card_text(card)
        assert not card._send.display and not card._return.display and not card.reply.display


async def test_refused_on_the_card_nothing_is_sent_to_the_model(home: Path) -> None:
    async def steps(pilot: Any, app: Any, card: SamplingCard) -> None:
        await pilot.click("#sample-refuse")

    app, server, final, _ = await exchange(home, False, steps)
    assert len(server.requests) == 2  # the turn and the next: nothing sampled
    assert "→ refused (the person refused to send it to the model)" in final
    assert "User rejected sampling request" in json.dumps(server.requests[1]["body"])


async def test_a_reply_refused_on_the_card_never_reaches_the_server(home: Path) -> None:
    async def steps(pilot: Any, app: Any, card: SamplingCard) -> None:
        await pilot.click("#sample-send")
        await wait_for(
            pilot,
            lambda: card.asked.state == "replied" and app.focused is card._return,
            "the reply on the card, its Return key focused",
        )
        await pilot.press("escape")

    app, server, final, _ = await exchange(home, True, steps)
    assert "→ refused (the person refused the reply)" in final
    assert "Teal." not in json.dumps(server.requests[2]["body"])
