"""Finished exchanges drawn light (issue 31, item 3): once the view is still, an exchange of a long
conversation a screen or more away is one ``LightExchange`` drawing the lines its widgets drew, and
comes back as widgets when it is near the view again, clicked, jumped to, needed for a card, or the
width changes. Each test opens a real conversation written through the real store, in a real
Textual app under Pilot.

The parity test is the one that matters: the screen over an exchange drawn light equals, cell for
cell and style for style, the screen over its widgets built again, at the three snapshot sizes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import app.tui.lights as lights
from app.tui.app import CallstreamApp
from tests.long_transcript import question, write_long
from tests.test_long_conversation import app_on
from tests.waiting import quiet, wait_for
from widgets.light_exchange import LightExchange
from widgets.tool_card import ToolCard
from widgets.user_message import UserMessage

EXCHANGES = 40


@pytest.fixture(scope="module")
def light_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("light") / "callstream.db"
    return path, write_long(path, EXCHANGES)


@pytest.fixture(autouse=True)
def soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exchanges drawn light 0.3 s after the person left the app alone, not the app's 3 s (what
    comes of it does not depend on how long: each test waits for the state, ``lit``)."""
    monkeypatch.setattr(lights, "LIGHT_AFTER", 0.3)


async def lit(app: CallstreamApp, pilot: Any) -> None:
    """The person left the app alone: every exchange that may be is drawn light (no still moment
    awaited any more), and what that mounted and removed is settled."""
    transcript = transcript_of(app)
    await wait_for(pilot, lambda: light_ones(app) and not transcript.lights.due, "the exchanges drawn light")
    await quiet(pilot)


def opened_app(light_file: tuple[Path, str]) -> CallstreamApp:
    return app_on(light_file)


def transcript_of(app: CallstreamApp) -> Any:
    return app.screen.query_one("#transcript")


def light_ones(app: CallstreamApp) -> list[LightExchange]:
    return list(app.screen.query(LightExchange))


def light_holding(app: CallstreamApp, text: str) -> LightExchange | None:
    return next((light for light in light_ones(app)
                 if any(getattr(entry, "text", None) == text for entry in light.entries)), None)


def on_screen(app: CallstreamApp, widget: Any) -> bool:
    return widget.is_attached and widget.region.height > 0 and transcript_of(app).region.overlaps(widget.region)


def rows(app: CallstreamApp) -> list[list[tuple[str, Any]]]:
    """The transcript's rows as the screen draws them: each run of text with its style."""
    transcript = transcript_of(app)
    region = transcript.scrollable_content_region
    strips = app.screen._compositor.render_strips()
    return [[(segment.text, segment.style) for segment in
             strips[y].crop(region.x, region.right).simplify().discard_meta()]
            for y in range(region.y, region.bottom)]


async def at_home_lit(app: CallstreamApp, pilot: Any) -> None:
    """Opened (the exchanges far above the view drawn light once it was still), then Home: the
    first exchanges on screen, still drawn light."""
    transcript = transcript_of(app)
    await opened_and_quiet(app, pilot)
    await pilot.press("home")
    await wait_for(pilot, lambda: transcript.scroll_y == 0 and 0 in transcript.window.mounted)
    await quiet(pilot)
    assert any(on_screen(app, light) for light in light_ones(app))


async def opened_and_quiet(app: CallstreamApp, pilot: Any) -> None:
    await wait_for(pilot, lambda: any(m.message_text == question(EXCHANGES - 1)
                                      for m in app.screen.query(UserMessage)), "the last question")
    await quiet(pilot)
    await lit(app, pilot)


@pytest.mark.parametrize("size", [(120, 40), (60, 20), (40, 15)])
async def test_an_exchange_drawn_light_shows_what_its_widgets_show(
        light_file: tuple[Path, str], size: tuple[int, int]) -> None:
    app = opened_app(light_file)
    async with app.run_test(size=size) as pilot:
        transcript = transcript_of(app)
        await wait_for(pilot, lambda: any(m.message_text == question(EXCHANGES - 1)
                                          for m in app.screen.query(UserMessage)), "the last question")
        await quiet(pilot)
        await lit(app, pilot)
        drawn = light_ones(app)
        assert len(drawn) >= 2
        for light in drawn[-2:]:
            text = next(entry.text for entry in light.entries if getattr(entry, "kind", "") == "user")
            transcript.scroll_to_entry(light)  # a jump (a scroll of the person's would stop at a gap)
            await wait_for(pilot, lambda light=light: on_screen(app, light) and light.region.y == transcript.region.y,
                           "the light exchange at the top of the view",
                           seen=lambda light=light: (light.region, transcript.region, transcript.scroll_y))
            await pilot.pause()
            drawn_light = rows(app)
            transcript.lights.expand(light)

            def back(text: str = text) -> bool:
                message = next((m for m in app.screen.query(UserMessage) if m.message_text == text), None)
                return (message is not None and on_screen(app, message) and message.region.y == transcript.region.y
                        and all(prose.settled for prose in app.screen.query("ProseBlock")))

            await wait_for(pilot, back, "its widgets back, at the top of the view")
            await pilot.pause()
            await pilot.pause()
            drawn_widgets = rows(app)
            for y, (a, b) in enumerate(zip(drawn_light, drawn_widgets, strict=True)):
                assert a == b, f"row {y} differs at {size}:\n{''.join(t for t, _ in a)}\n{''.join(t for t, _ in b)}"


async def test_far_exchanges_are_drawn_light_and_the_near_ones_stay_widgets(light_file: tuple[Path, str]) -> None:
    app = opened_app(light_file)
    async with app.run_test(size=(120, 40)) as pilot:
        await opened_and_quiet(app, pilot)
        transcript = transcript_of(app)
        y, height = round(transcript.scroll_y), transcript.size.height
        for light in light_ones(app):  # a screen or more from where the view was still
            region = transcript.window.where(light)
            assert region.bottom <= y - height or region.y >= y + 2 * height
        assert any(on_screen(app, m) for m in app.screen.query(UserMessage))
        # each light stands for an exchange's forty-odd widgets
        exchanges = sum(len(runs) for runs in transcript.window.runs.values())
        assert len(list(transcript.walk_children())) < 30 * exchanges
        # the path's last exchange stays widgets (an exchange that goes on is answered on it)
        assert light_holding(app, question(EXCHANGES - 1)) is None


async def test_a_click_on_an_exchange_drawn_light_brings_its_widgets_back(light_file: tuple[Path, str]) -> None:
    app = opened_app(light_file)
    async with app.run_test(size=(120, 40)) as pilot:
        await at_home_lit(app, pilot)
        transcript = transcript_of(app)
        light = next(light for light in light_ones(app) if on_screen(app, light))
        seqs = list(light.seqs)
        await pilot.click(light, offset=(5, 0))
        await wait_for(pilot, lambda: not light.is_attached and all(seq in transcript.entries for seq in seqs),
                       "its widgets instead")
        assert isinstance(transcript.entries[seqs[0]], UserMessage)


async def test_a_click_on_a_folded_title_drawn_light_opens_it(light_file: tuple[Path, str]) -> None:
    """One click, as on the widgets: the exchange comes back and the card's "Full result" opens."""
    from textual.widgets import Collapsible

    app = opened_app(light_file)
    async with app.run_test(size=(120, 40)) as pilot:
        await at_home_lit(app, pilot)
        light = next(light for light in light_ones(app) if on_screen(app, light) and light.titles
                     and light.titles[0].y < transcript_of(app).size.height)
        title = light.titles[0]
        y = transcript_of(app).scroll_y
        await pilot.click(light, offset=(title.x + 2, title.y))
        await wait_for(pilot, lambda: not light.is_attached and any(
            not c.collapsed for card in app.screen.query(ToolCard) for c in card.query(Collapsible)),
            "the card's full result open")
        opened = [card for card in app.screen.query(ToolCard) if not card.query_one(Collapsible).collapsed]
        assert len(opened) == 1 and opened[0].block is light.calls()[0]
        assert transcript_of(app).scroll_y == y  # where it was: the person's view did not move


async def test_a_jump_to_an_entry_of_an_exchange_drawn_light_shows_its_widgets(light_file: tuple[Path, str]) -> None:
    app = opened_app(light_file)
    async with app.run_test(size=(120, 40)) as pilot:
        await opened_and_quiet(app, pilot)
        light = light_ones(app)[-1]
        seq = light.seqs[0]
        app.screen.tree_control.select(seq)  # Alt+↑ / a search hit: the entry selected and scrolled to
        transcript = transcript_of(app)
        await wait_for(pilot, lambda: seq in transcript.entries and on_screen(app, transcript.entries[seq]),
                       "the selected entry's widgets on screen")
        assert transcript.entries[seq].has_class("-selected") and not light.is_attached


async def test_a_new_width_brings_the_light_exchanges_back_and_they_are_drawn_again(
        light_file: tuple[Path, str]) -> None:
    app = opened_app(light_file)
    async with app.run_test(size=(120, 40)) as pilot:
        await opened_and_quiet(app, pilot)
        old = light_ones(app)
        await pilot.resize_terminal(90, 40)
        await wait_for(pilot, lambda: not any(light.is_attached for light in old), "the old lines gone")
        await quiet(pilot)
        await lit(app, pilot)
        width = transcript_of(app).scrollable_content_region.width
        assert light_ones(app) and all(light.width == width for light in light_ones(app))


async def test_an_opened_card_and_a_selected_entry_keep_their_exchange_widgets(
        light_file: tuple[Path, str]) -> None:
    from textual.widgets import Collapsible

    app = opened_app(light_file)
    async with app.run_test(size=(120, 40)) as pilot:
        await at_home_lit(app, pilot)
        transcript = transcript_of(app)
        transcript.reveal(light_seq(app, question(0)))  # its widgets back
        await wait_for(pilot, lambda: any(c.block.arguments == {"customer": "Customer 0", "status": "open"}
                                          for c in app.screen.query(ToolCard)))
        first = next(c for c in app.screen.query(ToolCard) if c.block.arguments == {"customer": "Customer 0",
                                                                                     "status": "open"})
        first.query_one(Collapsible).collapsed = False  # the person opened its full result
        app.screen.tree_control.select(light_seq(app, question(1)))
        second = transcript.entries[app.screen.tree_control.selected]
        await quiet(pilot)
        await pilot.press("end")
        await wait_for(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "the view at the end")
        await quiet(pilot)
        await lit(app, pilot)
        assert light_holding(app, question(0)) is None and first.is_attached
        assert light_holding(app, question(1)) is None and second.is_attached
        assert light_holding(app, question(2)) is not None  # its neighbour, untouched, is light


def light_seq(app: CallstreamApp, text: str) -> int:
    """The entry number of the user message saying ``text``, in an exchange drawn light."""
    light = light_holding(app, text)
    assert light is not None, f"{text!r} is not drawn light"
    return next(entry.seq for entry in light.entries if getattr(entry, "text", None) == text)


async def test_the_copy_picker_lists_the_calls_of_a_light_exchange_and_reveals_one(
        light_file: tuple[Path, str]) -> None:
    app = opened_app(light_file)
    async with app.run_test(size=(120, 40)) as pilot:
        await opened_and_quiet(app, pilot)
        transcript = transcript_of(app)
        light = light_ones(app)[-1]
        calls = light.calls()
        assert calls and all(call in transcript.calls() for call in calls)
        transcript.reveal_arguments(calls[0])
        await wait_for(pilot, lambda: any(card.block is calls[0] and card._revealed is not None
                                          for card in app.screen.query(ToolCard)), "the card back, all its arguments")
        assert not light.is_attached
