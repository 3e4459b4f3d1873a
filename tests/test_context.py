"""How much room is left (issue 29 item 2): each model's window (the table's, or the profile's
``context_window``), the next request's size (the provider's last input count plus an estimate of
what was added since), and the status line's meter — quiet, then a warning from 80 %, then "full" —
in snapshots at 120×40 and 60×20."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.chat.window import CHARS_PER_TOKEN, WARN_AT, Room, estimate_tokens, next_request, room_words
from app.rules.prices import PriceBook
from app.settings.config import Config
from app.settings.profiles import ProviderProfile
from app.stream.history import Assistant, CallRecord, ToolResult, User
from app.stream.usage import Usage
from app.tui.app import CallstreamApp, make_app
from tests.snapshots import check_snapshot
from tests.test_tui import send, still
from widgets.status_line import StatusLine

# -- the windows ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "window"), [("gpt-4o", 128_000), ("claude-sonnet-4-20250514", 200_000),
                                               ("gemini-2.5-flash", 1_048_576), ("gpt-5-2025-08-07", 400_000)])
def test_each_family_s_window_is_the_table_s(model: str, window: int) -> None:
    import genai_prices

    assert PriceBook().window(model) == window
    assert genai_prices.calc_price(genai_prices.Usage(input_tokens=1), model).model.context_window == window


def test_a_model_the_table_does_not_know_has_no_window_unless_its_profile_says() -> None:
    assert PriceBook().window("demo") is None and PriceBook().window("qwen2.5:7b") is None
    assert PriceBook(windows={"qwen2.5:7b": 32768}).window("qwen2.5:7b") == 32768
    assert PriceBook(windows={"gpt-4o": 1000}).window("gpt-4o") == 1000  # the profile's over the table's


# -- the next request ---------------------------------------------------------------------------------

HISTORY = [User("What is 2+2?"), Assistant("Let me add.", [CallRecord("c1", "add", {"a": 2, "b": 2})]),
           ToolResult("c1", "add", '{"sum": 4}'), Assistant("It is 4."), User("And 3+3?")]


def test_the_next_request_is_the_provider_s_count_plus_what_was_added_since() -> None:
    """The last turn reported 500 in and 40 out (10 of them reasoning, which is not sent back); only the
    message typed since is estimated."""
    used, counted = next_request(HISTORY, [Usage(300, 20), Usage(500, 40, None, 10)])
    assert counted == 500 + 30
    assert used == counted + estimate_tokens([User("And 3+3?")]) == counted + -(-len("And 3+3?") // CHARS_PER_TOKEN)


def test_an_earlier_count_is_used_when_the_last_turn_reported_none() -> None:
    used, counted = next_request(HISTORY, [Usage(300, 20), None])
    assert counted == 320 and used == 320 + estimate_tokens(HISTORY[2:])


def test_with_no_count_at_all_the_whole_path_is_estimated() -> None:
    assert next_request(HISTORY, [None, None]) == (estimate_tokens(HISTORY), 0)
    assert next_request(HISTORY, [], "Answer briefly.") == (estimate_tokens(HISTORY, "Answer briefly."), 0)


def test_the_meter_words_and_thresholds() -> None:
    assert room_words(Room(12_800, 128_000)) == "context 10% of 128k"
    assert not Room(int(128_000 * WARN_AT) - 1, 128_000).warning
    assert Room(int(128_000 * WARN_AT), 128_000).warning
    assert room_words(Room(110_000, 128_000)) == "context 86% of 128k — /compact"
    assert room_words(Room(131_000, 128_000)) == "context full (131k of 128k) — /compact"
    assert room_words(Room(5_000, 1_048_576)) == "context 0% of 1M"
    assert room_words(Room(5_000, None)) == "" and room_words(None) == ""


# -- the meter on screen ------------------------------------------------------------------------------

def _app(window: int | None, model: str = "demo") -> CallstreamApp:
    profile = ProviderProfile(name="demo", provider="demo", model=model, demo_speed=0.0, context_window=window)
    return still(make_app(config=Config(providers={"demo": profile}, default="demo", allow=["create_ticket"])))


def _line(app: Any) -> StatusLine:
    return app.screen.query_one(StatusLine)  # type: ignore[no-any-return]


async def test_no_meter_where_the_window_is_unknown() -> None:
    app = _app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(app, pilot, "Show me order A-1042")
        assert _line(app).meter == "" and "context" not in str(_line(app).render())


async def test_the_meter_follows_the_provider_s_count() -> None:
    app = _app(100_000)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        before = _line(app).meter
        assert before.startswith("context ") and before.endswith(" of 100k")
        await send(app, pilot, "Show me order A-1042")
        last = app.session.turns[-1].usage
        assert last is not None and last.input is not None
        share = (last.input + (last.output or 0)) / 100_000
        assert _line(app).meter == f"context {share:.0%} of 100k" and not _line(app).meter_warning


async def test_the_meter_at_120x40(request: pytest.FixtureRequest) -> None:
    app = _app(100_000)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(app, pilot, "Show me order A-1042")
        assert "context 1% of 100k" in str(_line(app).render())
        check_snapshot(app, "context_meter_120x40", request.config)


async def test_the_meter_warns_near_the_limit_at_60x20(request: pytest.FixtureRequest) -> None:
    """At 60 columns the conversation's tokens no longer fit: the warning is kept, the tokens go."""
    app = _app(700)  # the demo's last request of this exchange counts about 580 in and 25 out
    async with app.run_test(size=(60, 20)) as pilot:
        await send(app, pilot, "Show me order A-1042")
        line = _line(app)
        assert line.meter_warning and line.meter.endswith("— /compact")
        assert line.meter in str(line.render()) and line.usage not in str(line.render())
        check_snapshot(app, "context_meter_60x20", request.config)


# -- any history ----------------------------------------------------------------------------------------


_entries = st.lists(st.one_of(
    st.builds(User, st.text(max_size=50)),
    st.builds(Assistant, st.text(max_size=50)),
    st.builds(ToolResult, st.text(max_size=5), st.text(max_size=10), st.text(max_size=80))), max_size=12)
_usage = st.one_of(st.none(), st.builds(Usage, st.integers(0, 10**6), st.integers(0, 10**5)))


@given(history=_entries, usages=st.lists(_usage, max_size=6))
def test_the_next_request_is_never_less_than_what_was_counted(history: list[Any], usages: list[Any]) -> None:
    used, counted = next_request(history, usages)
    assert used >= counted >= 0
    if counted == 0:
        assert used == estimate_tokens(history)
