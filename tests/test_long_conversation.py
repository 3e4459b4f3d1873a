"""A conversation of a thousand exchanges under Pilot (issue 31): it opens on
a window of its last pages, and scrolling to the top and back, a search hit
in the middle, a branch switch there, copying a card of the first exchange
and forking at the first entry all work across pages, with a bounded number
of widgets mounted. The conversation is written once per run through the
real store (``tests/long_transcript.py``) and each test opens its own copy
of that sqlite file."""

from __future__ import annotations

import shutil
import weakref
from pathlib import Path
from typing import Any

import pytest

from app.files.paths import data_dir
from app.tui.app import CallstreamApp, make_app
from app.tui.paging import EXCHANGES_PER_PAGE, MOST_MOUNTED
from app.tui.tree import LIVE_MOST
from tests.long_transcript import WORD, question, write_long
from tests.test_tui import SIZE, demo_config
from tests.test_tui_tree import markers
from tests.waiting import quiet, wait_for
from widgets.light_exchange import LightExchange
from widgets.prompt_input import PromptInput
from widgets.user_message import UserMessage

EXCHANGES = 1000
MIDDLE = EXCHANGES // 2
#: The most user messages a window holds (its pages, each of whole exchanges).
MOST_MESSAGES = MOST_MOUNTED * EXCHANGES_PER_PAGE + 1


@pytest.fixture(scope="module")
def long_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("long") / "callstream.db"
    return path, write_long(path, EXCHANGES, branch_at=MIDDLE, middle=MIDDLE)


@pytest.fixture
def long_app(long_file: tuple[Path, str]) -> CallstreamApp:
    return app_on(long_file)


def app_on(written: tuple[Path, str]) -> CallstreamApp:
    """An app opening the conversation of ``written`` (a sqlite file and its id), on a copy of that file."""
    source, conversation = written
    home = data_dir()
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, home / "callstream.db")
    app = make_app(config=demo_config(), conversation=conversation)
    app.cursor_blink = False
    return app


def messages(app: CallstreamApp) -> list[UserMessage]:
    return list(app.screen.query(UserMessage))


def mounted_questions(app: CallstreamApp) -> list[str]:
    """The user messages mounted, in order: as widgets, or in an exchange drawn light (``lights.py``)."""
    texts: list[str] = []
    for child in app.screen.query_one("#transcript").children:
        if isinstance(child, UserMessage):
            texts.append(child.message_text)
        elif isinstance(child, LightExchange):
            texts += [entry.text for entry in child.entries if getattr(entry, "kind", "") == "user"]
    return texts


def on_screen(app: CallstreamApp, text: str) -> bool:
    """A user message saying ``text`` is inside the transcript's viewport: its widget (any of them:
    while a page is re-shown from the store, the widget it replaces may still be mounted beside it),
    or the first row of an exchange drawn light that holds it (``lights.py``)."""
    return text in [shown for shown, _ in questions_in_view(app)]


def questions_in_view(app: CallstreamApp) -> list[tuple[str, Any]]:
    """The user messages inside the transcript's viewport, in order, and what shows each."""
    transcript = app.screen.query_one("#transcript")
    view = transcript.region
    found: list[tuple[str, Any]] = []
    for child in transcript.children:
        region = child.region
        if isinstance(child, UserMessage) and region.height > 0 and view.overlaps(region):
            found.append((child.message_text, child))
        elif isinstance(child, LightExchange) and region.height > 0 and view.y <= region.y < view.bottom:
            found += [(entry.text, child) for entry in child.entries if getattr(entry, "kind", "") == "user"]
    return found


async def opened(app: CallstreamApp, pilot: Any) -> None:
    await wait_for(pilot, lambda: on_screen(app, question(EXCHANGES - 1)), "the last question on screen")
    await quiet(pilot)


async def at_home(app: CallstreamApp, pilot: Any) -> None:
    """Opened, then Home: the first page on screen."""
    await opened(app, pilot)
    await pilot.press("home")
    await wait_for(pilot, lambda: on_screen(app, question(0)), "the first question on screen")
    await quiet(pilot)


def bounded(app: CallstreamApp) -> bool:
    return 0 < len(messages(app)) <= MOST_MESSAGES


async def test_a_thousand_exchanges_open_on_their_last_pages_and_scroll_to_the_top_and_back(
        long_app: CallstreamApp) -> None:
    app = long_app
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        assert bounded(app)
        # the last pages, and the first (pinned at once: Home is a scroll), not the second
        shown = mounted_questions(app)
        assert question(0) in shown and question(EXCHANGES_PER_PAGE) not in shown
        # reading back: the page before comes in, and what was on screen stays where it was
        transcript: Any = app.screen.query_one("#transcript")
        window = transcript.window
        nearest = min(number for number in window.mounted if number)  # the top of the pages at the end
        top = next(w for w in window.mounted[nearest] if isinstance(w, UserMessage))
        transcript.release_anchor()
        transcript.scroll_to(y=top.virtual_region.y, animate=False, immediate=True)
        await quiet(pilot)
        assert nearest - 1 in window.mounted  # the page before was mounted above it
        assert top.region.y == transcript.region.y  # still at the top of the view
        for _ in range(25):  # pages come in above; the ones far below go (the store brings them back)
            await pilot.press("pageup")
        await quiet(pilot)
        assert bounded(app) and len(transcript.window.mounted) <= MOST_MOUNTED
        shown = mounted_questions(app)
        # the pages far below went, but not the last (pinned beside the first: End and Home only scroll)
        assert question(EXCHANGES - 1 - EXCHANGES_PER_PAGE) not in shown and question(EXCHANGES - 1) in shown
        await pilot.press("home")
        await wait_for(pilot, lambda: on_screen(app, question(0)), "the first question on screen")
        await quiet(pilot)
        assert bounded(app) and on_screen(app, question(0))
        await pilot.press("end")
        await wait_for(pilot, lambda: on_screen(app, question(EXCHANGES - 1)), "the last question again")
        await quiet(pilot)
        assert bounded(app) and on_screen(app, question(EXCHANGES - 1))


async def test_pages_dropped_while_reading_are_freed_without_a_turn_ending(long_app: CallstreamApp) -> None:
    """Automatic full collections are off (``collector``): the pages mounted while reading back and
    dropped again far below the view, and what they drew, are freed by the collection their removal
    schedules, not kept until the next turn ends (nor held by Textual's memo of
    ``StylesCache.get_inner_outer``). (The pages mounted when the conversation opened were frozen with
    the app's start-up, ``collector.settle``: the thorough pass frees those.)"""
    app = long_app
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        window = app.screen.query_one("#transcript").window  # type: ignore[attr-defined]
        opening = set(window.mounted)
        refs: dict[int, list[weakref.ref[Any]]] = {}
        for _ in range(40):
            await pilot.press("pageup")
            await quiet(pilot)
            for number, page in window.mounted.items():
                if number not in opening and number not in refs:
                    refs[number] = [weakref.ref(w) for w in page] + [weakref.ref(w._styles_cache) for w in page]
        gone = [ref for number, page_refs in refs.items() if number not in window.mounted for ref in page_refs]
        assert gone, "no page mounted while reading was dropped"
        await wait_for(pilot, lambda: all(ref() is None for ref in gone),
                       "the dropped pages' widgets and their drawings freed",
                       seen=lambda: f"{sum(ref() is not None for ref in gone)} of {len(gone)} still alive")


def questions_on_screen(app: CallstreamApp) -> list[int]:
    """The numbers of the questions whose messages are inside the transcript's viewport."""
    return [int(text.split(":")[0].split()[-1]) for text, _ in questions_in_view(app)]


async def test_home_and_end_only_scroll_once_the_view_left_the_end(long_app: CallstreamApp) -> None:
    """Once the view left the end, the first and the last page are mounted and stay however far the view
    goes (pinned): Home and End scroll to the same widgets. Between them a gap stands for the pages not
    mounted, and it is filled before the view reaches it: reading down from Home shows every question in
    order, the gap never on screen once the view is still."""
    from widgets.page_gap import PageGap

    app = long_app
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        transcript: Any = app.screen.query_one("#transcript")
        window = transcript.window
        last = len(window.pages) - 1
        await pilot.press("pageup")
        await wait_for(pilot, lambda: 0 in window.mounted, "the first page mounted once the view left the end")
        await quiet(pilot)
        pinned = {number: list(window.runs[number]) for number in (0, last)}
        assert app.screen.query(PageGap)  # between the first page and the ones around the view

        def kept() -> bool:
            """The pinned pages stayed mounted, never read again from the store: the same exchanges
            (each shown by its widgets or drawn light, ``lights.py``, as the view went by)."""
            return all(len(window.runs.get(number, [])) == len(runs)
                       and all(a is b for a, b in zip(window.runs[number], runs, strict=True))
                       and all(w.is_attached for run in runs for w in run.widgets)
                       for number, runs in pinned.items())

        await pilot.press("home")
        await wait_for(pilot, lambda: on_screen(app, question(0)), "the first question on screen")
        await quiet(pilot)
        assert kept()
        seen = questions_on_screen(app)
        for _ in range(40):  # reading down, a screen at a time
            await pilot.press("pagedown")
            await quiet(pilot)
            shown = questions_on_screen(app)
            gaps = [gap for gap in app.screen.query(PageGap) if transcript.region.overlaps(gap.region)]
            assert not gaps, f"a gap on screen with questions {shown}"
            seen += [number for number in shown if number not in seen]
        assert seen == list(range(len(seen))) and len(seen) > 3 * EXCHANGES_PER_PAGE
        assert bounded(app) and kept()
        await pilot.press("end")
        await wait_for(pilot, lambda: on_screen(app, question(EXCHANGES - 1)), "the last question again")
        await quiet(pilot)
        assert bounded(app) and kept() and not window.detached
        for _ in range(30):  # reading back from the end: the pages between come and go, the pinned stay
            await pilot.press("pageup")
        await quiet(pilot)
        await pilot.press("home")
        await wait_for(pilot, lambda: on_screen(app, question(0)), "the first question, the same page")
        await quiet(pilot)
        assert bounded(app) and kept()


async def test_keys_faster_than_pages_stop_at_a_gap_never_past_it(long_app: CallstreamApp) -> None:
    """Reading faster than pages come (no wait between the keys): the view stops at the gap until the
    pages behind it come, so reading down from Home never shows the last exchanges, nor reading up from
    End the first ones."""
    app = long_app
    async with app.run_test(size=SIZE) as pilot:
        await at_home(app, pilot)
        transcript: Any = app.screen.query_one("#transcript")

        async def spin(screens: int) -> None:
            """A wheel spun hard: screens of scrolling with no frame between them."""
            for _ in range(abs(screens)):
                transcript.scroll_relative(y=transcript.size.height * (1 if screens > 0 else -1),
                                           animate=False, immediate=True)
            await pilot.pause()

        for _ in range(8):
            await spin(6)
            assert max(questions_on_screen(app), default=0) < MIDDLE, questions_on_screen(app)
        await quiet(pilot)
        assert 3 * EXCHANGES_PER_PAGE < max(questions_on_screen(app)) < MIDDLE
        await pilot.press("end")
        await wait_for(pilot, lambda: on_screen(app, question(EXCHANGES - 1)), "the last question again")
        await quiet(pilot)
        for _ in range(8):
            await spin(-6)
            assert min(questions_on_screen(app), default=EXCHANGES) > MIDDLE, questions_on_screen(app)
        await quiet(pilot)
        assert MIDDLE < min(questions_on_screen(app)) < EXCHANGES - 3 * EXCHANGES_PER_PAGE


async def test_a_page_mounted_above_a_view_at_the_end_leaves_it_following_the_end(long_app: CallstreamApp) -> None:
    """After End the pages mounted may not fill the screens above the view, so the page before comes in
    while what is below is still growing (a stored reply writes its prose after its own mount). The view
    follows the end, so nothing is held there: it stays at the end as what is below grows. (Holding the
    widget on screen released the anchor: End left the view short of the end, the last question below it,
    in loaded runs of the live sitting below.)"""
    from widgets.note import NoteBlock

    app = long_app
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        transcript: Any = app.screen.query_one("#transcript")
        window = transcript.window
        assert transcript.following() and transcript.scroll_y == transcript.max_scroll_y
        first = window.first
        window.load(first - 1)  # what ``scrolled`` does after End when the window is short above the view
        transcript.mount(NoteBlock("grown below\n" * 8, "quiet"))  # what is below grows meanwhile
        await quiet(pilot)
        assert window.first == first - 1
        assert transcript.following() and transcript.scroll_y == transcript.max_scroll_y


async def test_a_search_hit_in_the_middle_opens_its_page_and_a_branch_switch_there_shows_the_other_version(
        long_app: CallstreamApp) -> None:
    from tests.test_tui import transcripts_listed

    app = long_app
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        await pilot.press("ctrl+o")
        await transcripts_listed(app, pilot, "")
        for key in WORD:
            await pilot.press(key)
        await transcripts_listed(app, pilot, WORD)
        await pilot.press("enter")
        await wait_for(pilot, lambda: on_screen(app, question(MIDDLE, MIDDLE)), "the middle question on screen")
        await quiet(pilot)
        assert bounded(app)
        selected = app.screen.query(".-selected")
        assert [w.message_text for w in selected if isinstance(w, UserMessage)] == [question(MIDDLE, MIDDLE)]
        assert (1, 2) in markers(app)
        await pilot.press("alt+right")  # the other version of the selected message
        edited = f"Edited question {MIDDLE}: only the open orders?"
        await wait_for(pilot, lambda: on_screen(app, edited), "the edited version on screen")
        await quiet(pilot)
        assert (2, 2) in markers(app) and bounded(app)
        assert question(MIDDLE, MIDDLE) not in mounted_questions(app)
        await pilot.press("alt+left")  # and back
        await wait_for(pilot, lambda: on_screen(app, question(MIDDLE, MIDDLE)), "the first version again")
        await quiet(pilot)
        assert (1, 2) in markers(app) and bounded(app)


async def test_a_card_of_the_first_exchange_is_copied_after_home(long_app: CallstreamApp) -> None:
    from app.tui.copying import CopyPicker

    app = long_app
    async with app.run_test(size=SIZE) as pilot:
        await at_home(app, pilot)
        transcript: Any = app.screen.query_one("#transcript")
        # its card, as widgets or in the exchange drawn light (``lights.py``): the picker lists either
        assert any(call.arguments == {"customer": "Customer 0", "status": "open"} for call in transcript.calls())
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: isinstance(app.screen, CopyPicker))
        picker = app.screen
        assert isinstance(picker, CopyPicker)
        wanted = next(i for i, item in enumerate(picker.items)
                      if item.text is not None and "Customer 0" in item.text and "open" in item.text)
        for _ in range(wanted):
            await pilot.press("down")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Customer 0" in app.clipboard)
        assert app.clipboard.startswith("search_orders") and "Customer 0" in app.clipboard


async def test_fork_at_the_first_exchange_of_a_thousand(long_app: CallstreamApp) -> None:
    app = long_app
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot)
        original = app.session.conversation
        await pilot.press("alt+down")  # nothing selected: the first entry
        await wait_for(pilot, lambda: on_screen(app, question(0)), "the first question selected and on screen")
        await quiet(pilot)
        assert bounded(app)
        app.screen.query_one(PromptInput).text = "/fork"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session.conversation != original)
        await quiet(pilot)
        assert mounted_questions(app) == [question(0)]
        stored = app.runtime.store.load(app.session.conversation)
        assert stored is not None and stored.forked_from == original and len(stored.tree) == 1


async def test_a_long_live_sitting_keeps_a_window_and_reads_the_older_exchanges_back() -> None:
    """Typed on live (the demo model): past a window's worth of exchanges, the screen shows the last
    pages from the store, as a reopen would; the first exchange comes back from the store at Home."""
    from tests.test_tui import send

    live = MOST_MESSAGES + 4
    app = make_app(config=demo_config())
    app.cursor_blink = False
    async with app.run_test(size=SIZE) as pilot:
        counts = []
        for i in range(live):
            await send(app, pilot, f"Live question {i}: show me order A-{1000 + i}")
            await quiet(pilot)
            counts.append(len(messages(app)))
        assert max(counts) <= LIVE_MOST + 1 and counts[-1] < live  # (+1: the message just sent)
        assert on_screen(app, f"Live question {live - 1}: show me order A-{1000 + live - 1}")
        await pilot.press("home")
        await wait_for(pilot, lambda: on_screen(app, "Live question 0: show me order A-1000"), "the first question")
        await quiet(pilot)
        await pilot.press("end")
        await wait_for(pilot, lambda: on_screen(app, f"Live question {live - 1}: show me order A-{1000 + live - 1}"),
                       "the last question again")
        assert bounded(app)
