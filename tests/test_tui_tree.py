"""The conversation as a tree, under Pilot: edit and resend, regenerate,
move between versions, /fork, and search that opens at the match — each
reopened from the store equal to the screen."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from textual.widgets import OptionList

from app.settings.config import Config
from app.settings.profiles import ProviderProfile
from app.tui.app import CallstreamApp, make_app
from tests.test_tree import ADA, runs_of, ticket_tool
from tests.test_tui import SIZE, cards, send, settle, texts, transcripts_listed
from tests.waiting import quiet, wait_for
from widgets.branch_marker import BranchMarker
from widgets.prompt_input import PromptInput
from widgets.user_message import UserMessage


def app_for(tmp_path: Path | None = None, conversation: str | None = None) -> CallstreamApp:
    tools = {"create_ticket": ticket_tool(tmp_path)} if tmp_path is not None else {}
    config = Config(providers={"demo": ProviderProfile(name="demo", provider="demo", demo_speed=0.0)},
                    default="demo", tools=tools, record=False, allow=["create_ticket"])
    app = make_app(config=config, conversation=conversation)
    app.cursor_blink = False
    return app


async def screen_text(app: CallstreamApp, pilot: Any) -> list[tuple[str, str]]:
    """What the screen shows, glyph run by glyph run, top to bottom, with its
    column: the SVG's text without the way Rich happened to split the
    background, and without the conversation's vertical offset (a short
    conversation sits at the top or, anchored, at the bottom of its scroll
    view depending on when its prose finished measuring — the same screen
    either way). How long the last exchange took (the status line's detail) is live-only,
    so it is left out."""
    from widgets.status_line import StatusLine

    await quiet(pilot)
    app.screen.query_one(StatusLine).detail = ""
    svg = app.export_screenshot()
    runs = re.findall(r'<text[^>]*x="([^"]+)" y="([^"]+)"[^>]*>(.*?)</text>', svg)
    ordered = sorted(((float(y), float(x), html.unescape(text)) for x, y, text in runs), key=lambda r: (r[0], r[1]))
    return [(text, f"{x:g}") for _, x, text in ordered]


def markers(app: CallstreamApp) -> list[tuple[int, int]]:
    return [(m.position, m.count) for m in app.screen.query(BranchMarker)]


def questions(app: CallstreamApp) -> list[str]:
    return [m.message_text for m in app.screen.query(UserMessage)]


async def test_edit_and_resend_then_move_between_versions() -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        await pilot.press("alt+e")
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "Show me order A-1042"  # the message, back in the composer
        prompt.text = "Show me Grace Hopper's open and shipped orders"
        await pilot.press("enter")
        await settle(app, pilot)
        await wait_for(pilot, lambda: markers(app) == [(2, 2)])
        assert questions(app) == ["Show me Grace Hopper's open and shipped orders"]
        assert [c.block.name for c in cards(app)] == ["search_orders", "search_orders"]
        await pilot.press("alt+up", "alt+up", "alt+up", "alt+up")  # up to the question
        await pilot.press("alt+left")  # the first version again, whole
        await wait_for(pilot, lambda: markers(app) == [(1, 2)])
        assert questions(app) == ["Show me order A-1042"] and [c.block.name for c in cards(app)] == ["get_order"]
        await pilot.press("alt+right")
        await wait_for(pilot, lambda: markers(app) == [(2, 2)])
        await pilot.press("alt+left")
        await wait_for(pilot, lambda: markers(app) == [(1, 2)])
        await pilot.press("escape")  # nothing selected any more
        live = await screen_text(app, pilot)
        conversation = app.session.conversation
    reopened = app_for(conversation=conversation)
    async with reopened.run_test(size=SIZE) as pilot:
        await quiet(pilot)
        assert markers(reopened) == [(1, 2)]  # reopened on the version last looked at
        assert await screen_text(reopened, pilot) == live


async def test_regenerate_states_a_side_effect_from_the_other_branch(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, ADA)
        assert runs_of(tmp_path) == 1
        await pilot.press("alt+up", "alt+up", "alt+up", "alt+up", "alt+down")  # the first reply
        await pilot.press("ctrl+g")
        # running the ticket again is a second side effect: it asks first, saying what ran on the other branch
        await wait_for(pilot, lambda: any(c.block.name == "create_ticket" and c.block.state == "awaiting approval"
                                          for c in cards(app)))
        ticket = next(c for c in cards(app) if c.block.name == "create_ticket")
        other_branch = str(ticket._other_branch.render())  # type: ignore[attr-defined]
        assert other_branch.startswith("⚠ ran on another branch: ") and "T-10001" in other_branch
        assert runs_of(tmp_path) == 1
        await pilot.press("y")
        await settle(app, pilot)
        await wait_for(pilot, lambda: (2, 2) in markers(app))
        ticket = next(c for c in cards(app) if c.block.name == "create_ticket")
        assert "T-10002" in texts(app)  # this branch's own ticket
        assert ticket.block.state == "ran" and runs_of(tmp_path) == 2  # approved: it ran again, and said so
        reads = [c for c in cards(app) if c.block.name == "search_orders"]
        assert reads and all("reused" in str(c._other_branch.render()) for c in reads)  # type: ignore[attr-defined]
        live = await screen_text(app, pilot)
        conversation = app.session.conversation
    reopened = app_for(tmp_path, conversation=conversation)
    async with reopened.run_test(size=SIZE) as pilot:
        assert await screen_text(reopened, pilot) == live


async def test_slash_fork_opens_a_new_conversation_up_to_the_selected_entry() -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        await send(app, pilot, "Thanks")
        original = app.session.conversation
        size = len(app.runtime.store.load(original).tree)  # type: ignore[union-attr]
        await pilot.press("alt+up", "alt+up", "alt+up")  # the reply before "Thanks"
        app.screen.query_one(PromptInput).text = "/fork"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session.conversation != original)
        await quiet(pilot)
        assert questions(app) == ["Show me order A-1042"]
        stored = app.runtime.store.load(app.session.conversation)
        assert stored is not None and stored.forked_from == original
        assert len(app.runtime.store.load(original).tree) == size  # type: ignore[union-attr]  # untouched
        await send(app, pilot, "Show me order A-1042")  # and the fork goes on by itself
        assert len(app.runtime.store.load(original).tree) == size  # type: ignore[union-attr]


async def test_search_opens_a_match_on_its_own_branch_at_the_message() -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "Show me order A-1042")
        await pilot.press("alt+e")
        app.screen.query_one(PromptInput).text = "Show me Grace Hopper's open and shipped orders"
        await pilot.press("enter")
        await settle(app, pilot)
        await wait_for(pilot, lambda: markers(app) == [(2, 2)])
        await pilot.press("ctrl+o")
        await transcripts_listed(app, pilot, "")
        for key in "Carrier":  # a field get_order's result allow-list shows, only on the first branch
            await pilot.press(key)
        await transcripts_listed(app, pilot, "Carrier")
        assert app.screen.query_one(OptionList).option_count >= 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: questions(app) == ["Show me order A-1042"])
        selected = [w for w in app.screen.query(".-selected")]
        assert selected and "get_order" in [c.block.name for c in cards(app)]
