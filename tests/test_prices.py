"""What a conversation costs in money (issue 29 item 1): every price is checked against genai-prices'
table itself (``calc_price``, the oracle), for each provider family, in the demo over real HTTP and
against a fault server on 127.0.0.1 speaking each wire format; a model the table does not know shows
no price anywhere (never $0); a profile's own prices win for its model."""

from __future__ import annotations

import asyncio
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import genai_prices
import pytest

from app.cli.ask import run_ask
from app.net.endpoint import Endpoint
from app.rules import prices
from app.rules.prices import OwnPrices, PriceBook, Spend, money_words
from app.runtime.wiring import open_runtime
from app.settings.checks import ConfigError
from app.settings.config import Config, load_config
from app.settings.profiles import price_book
from app.store import export_document, markdown_of
from app.stream.usage import Usage
from tests import streamgen
from tests.faultserver import FaultServer, Reply

#: A model of each provider family the demo and the fault server stand in for, by wire format.
FAMILIES = {"openai-chat": "gpt-4o", "openai-responses": "gpt-5", "anthropic": "claude-sonnet-4-5",
            "gemini": "gemini-2.5-flash"}

PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."


def table(usage: Usage, model: str, base_url: str | None = None) -> Decimal:
    """The oracle: genai-prices' own calculation (input with cached, as the table counts input)."""
    counts = {"input_tokens": usage.input, "cache_read_tokens": usage.cached, "output_tokens": usage.output}
    table_usage = genai_prices.Usage(**{k: v for k, v in counts.items() if v is not None})
    if base_url:
        return genai_prices.calc_price(table_usage, model, provider_api_url=base_url).total_price
    return genai_prices.calc_price(table_usage, model).total_price


# -- the table, family by family --------------------------------------------------------------------

@pytest.mark.parametrize(("model", "base_url"), [
    ("gpt-4o", None), ("gpt-4o-2024-08-06", None), ("gpt-5-2025-08-07", "https://api.openai.com/v1"),
    ("claude-sonnet-4-20250514", None), ("claude-haiku-4-5-20251001", "https://api.anthropic.com"),
    ("gemini-2.5-flash", None), ("gemini-2.5-pro", "https://generativelanguage.googleapis.com"),
    ("openai/gpt-oss-20b", "https://api.groq.com/openai/v1"), ("deepseek-v4-flash", None),
])
def test_each_family_is_priced_as_the_table_prices_it(model: str, base_url: str | None) -> None:
    book = PriceBook(base_url=base_url)
    for usage in (Usage(1000, 200), Usage(12_345, 678, 10_000, 300), Usage(50, None)):
        assert book.cost(usage, model) == table(usage, model, base_url) > 0


def test_cached_input_costs_the_cache_rate() -> None:
    book = PriceBook()
    whole, cached = book.cost(Usage(1000, 0), "gpt-4o"), book.cost(Usage(1000, 0, 800), "gpt-4o")
    assert whole is not None and cached is not None and cached < whole
    # gpt-4o: $2.50 in, $1.25 cached, per million
    assert cached == (200 * Decimal("2.5") + 800 * Decimal("1.25")) / 1_000_000


def test_reasoning_is_priced_as_output() -> None:
    """Our output counts reasoning in; every provider in the table bills thinking as output."""
    book = PriceBook()
    assert book.cost(Usage(100, 500, None, 400), "gemini-2.5-flash") == book.cost(Usage(100, 500), "gemini-2.5-flash")


@pytest.mark.parametrize("model", ["demo", "smollm2-135m", "no-such-model-anywhere", ""])
def test_a_model_the_table_does_not_know_has_no_price(model: str) -> None:
    book = PriceBook()
    assert book.cost(Usage(1000, 100), model) is None
    spend = book.spend([_Turn(Usage(1000, 100), model)])
    assert spend == Spend(Decimal(0), 0, 1) and spend.words() == "" and not spend.known


def test_no_usage_is_no_price() -> None:
    assert PriceBook().cost(None, "gpt-4o") is None and PriceBook().cost(Usage(), "gpt-4o") is None
    assert PriceBook().spend([_Turn(None, "gpt-4o")]) == Spend()


def test_a_conversation_with_an_unpriced_turn_says_its_sum_is_a_floor() -> None:
    spend = PriceBook().spend([_Turn(Usage(1000, 100), "gpt-4o"), _Turn(Usage(10, 10), "demo")])
    assert spend.priced == 1 and spend.unpriced == 1
    assert spend.words() == "≥ " + money_words(table(Usage(1000, 100), "gpt-4o"))
    assert spend.to_json()["complete"] is False


def test_money_words() -> None:
    assert money_words(Decimal("0.0035")) == "$0.0035"
    assert money_words(Decimal("12.346")) == "$12.35"
    assert money_words(Decimal("0.00001")) == "<$0.0001"
    assert money_words(Decimal(0)) == "$0.0000"  # a profile that says free is shown free


class _Turn:
    def __init__(self, usage: Usage | None, model: str | None) -> None:
        self.usage, self.model = usage, model


# -- a profile's own prices ---------------------------------------------------------------------------

def _config(home: Path, text: str) -> Config:
    path = home / "config.toml"
    path.write_text(text)
    return load_config(path)


def test_a_profile_prices_its_own_model(home: Path) -> None:
    config = _config(home, '[providers.local]\nprovider = "openai-chat"\nmodel = "qwen2.5:7b"\n'
                     'base_url = "http://127.0.0.1:9/v1"\nprices = { input = 0.5, output = 1.5, cached = 0.1 }\n'
                     'context_window = 32768\n')
    profile = config.providers["local"]
    assert profile.prices == OwnPrices(Decimal("0.5"), Decimal("1.5"), Decimal("0.1"))
    book = price_book(config.providers.values(), config.profile("local"))
    assert book.cost(Usage(1000, 100, 400), "qwen2.5:7b") == (600 * Decimal("0.5") + 400 * Decimal("0.1")
                                                            + 100 * Decimal("1.5")) / 1_000_000
    assert book.cost(Usage(1000, 100), "qwen2.5:7b-instruct") is not None  # the name the server answered with
    assert book.window("qwen2.5:7b") == 32768


def test_a_profile_price_wins_over_the_table(home: Path) -> None:
    config = _config(home, '[providers.mine]\nprovider = "openai-chat"\nmodel = "gpt-4o"\n'
                     'prices = { input = 1, output = 2 }\n')
    book = price_book(config.providers.values(), config.profile("mine"))
    assert book.cost(Usage(1_000_000, 1_000_000), "gpt-4o") == Decimal(3)
    assert book.cost(Usage(1000, 100), "claude-sonnet-4-5") == table(Usage(1000, 100), "claude-sonnet-4-5")


@pytest.mark.parametrize(("prices", "words"), [
    ("{ input = 1 }", "must be a table with input and output"),
    ("{ input = -1, output = 2 }", "must be a number of dollars per million tokens"),
    ('{ input = "1", output = 2 }', "must be a number of dollars per million tokens"),
    ("{ input = 1, output = 2, reasoning = 3 }", "reasoning is not a price"),
    ('"cheap"', "must be a table with input and output"),
])
def test_a_bad_price_is_a_sentence(home: Path, prices: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        _config(home, f'[providers.p]\nprovider = "openai-chat"\nprices = {prices}\n')


@pytest.mark.parametrize("window", ["0", "-5", '"big"', "true", "1.5"])
def test_a_bad_context_window_is_a_sentence(home: Path, window: str) -> None:
    with pytest.raises(ConfigError, match="context_window must be a whole number of tokens"):
        _config(home, f'[providers.p]\nprovider = "openai-chat"\ncontext_window = {window}\n')


# -- the demo in each format, over real HTTP: ask --json, --verbose and the exports ---------------------

@pytest.fixture
def family_config(home: Path) -> Path:
    lines = []
    for dialect, model in FAMILIES.items():
        lines += [f"[providers.demo-{dialect}]", 'provider = "demo"', f'dialect = "{dialect}"', f'model = "{model}"',
                  "speed = 0", ""]
    lines += ["[providers.plain]", 'provider = "demo"', "speed = 0", ""]
    path = home / "config.toml"
    path.write_text("\n".join(lines))
    return path


def ask(*args: str, **kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_ask(*args, out=out, err=err, **kwargs)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("dialect", list(FAMILIES))
def test_ask_prices_each_family_in_the_demo(family_config: Path, dialect: str) -> None:
    model = FAMILIES[dialect]
    code, out, err = ask(PROMPT, f"demo-{dialect}", as_json=True, approve="create_ticket", verbose=True)
    assert code == 0, err
    document = json.loads(out)
    turns = document["turns"]
    assert len(turns) == 3 and all(t["model"] == model for t in turns)
    costs = [table(Usage.from_dict(t["usage"]), model) for t in turns]  # type: ignore[arg-type]
    assert [Decimal(t["cost_usd"]) for t in turns] == costs
    assert document["cost"] == {"usd": f"{sum(costs):f}", "complete": True}
    assert money_words(sum(costs, Decimal(0))) in err.splitlines()[-1]  # --verbose's line

    runtime = open_runtime(provider=f"demo-{dialect}")
    try:
        stored = runtime.store.load(document["conversation"])
        assert stored is not None
        exported = export_document(stored, runtime.prices)
        assert [Decimal(i["cost_usd"]) for i in exported["items"] if i["kind"] == "turn"] == costs
        assert exported["conversation"]["cost"]["usd"] == f"{sum(costs):f}"
        markdown = markdown_of(stored, runtime.registry.display_specs, runtime.prices)
        assert money_words(costs[0]) in markdown and money_words(sum(costs, Decimal(0))) in markdown
    finally:
        runtime.close()


def test_the_demo_model_shows_no_price_anywhere(family_config: Path) -> None:
    code, out, err = ask(PROMPT, "plain", as_json=True, approve="create_ticket", verbose=True)
    assert code == 0, err
    document = json.loads(out)
    assert "cost" not in document and all("cost_usd" not in t for t in document["turns"])
    assert all("usage" in t for t in document["turns"])  # its tokens are shown, its money is not
    assert "$" not in err
    runtime = open_runtime(provider="plain")
    try:
        stored = runtime.store.load(document["conversation"])
        assert stored is not None
        exported = export_document(stored, runtime.prices)
        assert "cost" not in exported["conversation"] and "$" not in json.dumps(exported)
        assert "$" not in markdown_of(stored, runtime.registry.display_specs, runtime.prices)
    finally:
        runtime.close()


# -- a fault server speaking each format --------------------------------------------------------------

def _reply(dialect: str, model: str) -> bytes:
    encoder = {"openai-chat": streamgen.ChatEncoder, "openai-responses": streamgen.ResponsesEncoder,
               "anthropic": streamgen.MessagesEncoder, "gemini": streamgen.GeminiEncoder}[dialect](model)
    encoder.usage = (1234, 56)
    if isinstance(encoder, streamgen.ChatEncoder):
        encoder.include_usage = True  # as OpenAI sends it when asked (callstream asks)
    frames = streamgen.render(encoder, [("text", "Hello there.")])
    frames += encoder.finish({"anthropic": "end_turn", "gemini": "STOP", "openai-chat": "stop",
                              "openai-responses": "completed"}[dialect])
    return b"".join(frames + encoder.terminal())


@pytest.mark.parametrize("dialect", list(FAMILIES))
def test_a_fault_server_in_each_format_is_priced_by_the_table(dialect: str) -> None:
    model = FAMILIES[dialect]
    with FaultServer() as server:
        server.replies.append(Reply(_reply(dialect, model)))
        runtime = open_runtime(config=Config(), endpoint=Endpoint(dialect, server.url, model, "test"))
        session = runtime.session()

        async def go() -> Any:
            try:
                return await session.send("hi")
            finally:
                await session.aclose()
                runtime.close()

        done = asyncio.run(go())
    assert done.status == "done", done.message
    (turn,) = session.turns
    assert turn.usage is not None and turn.usage.input is not None and turn.model == model
    assert runtime.prices.cost(turn.usage, turn.model) == table(turn.usage, model)


# -- the TUI: the usage line under each exchange, the status line for the conversation -------------------

async def test_the_tui_shows_each_exchange_s_price_and_the_conversation_s_and_a_reopen_the_same() -> None:
    from app.settings.profiles import ProviderProfile
    from app.tui.app import make_app
    from tests import test_tui as tui
    from tests.snapshots import screen_svg
    from tests.waiting import quiet
    from widgets.status_line import StatusLine
    from widgets.usage_line import UsageLine

    profile = ProviderProfile(name="demo", provider="demo", model="gpt-4o", demo_speed=0.0)
    config = Config(providers={"demo": profile}, default="demo", allow=["create_ticket"])
    app = tui.still(make_app(config=config))
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.wait_for(pilot, prices.loaded, "the price table (loaded in a thread of its own)")
        await tui.send(app, pilot, PROMPT)
        first = sum((table(t.usage, "gpt-4o") for t in app.session.turns), Decimal(0))  # type: ignore[arg-type]
        (line,) = [str(w.render()) for w in app.screen.query(UsageLine)]
        assert line.startswith("gpt-4o · tokens ") and line.endswith(f" · {money_words(first)}")
        seen = len(app.session.turns)
        await tui.send(app, pilot, "Show me order A-1042")
        second = sum((table(t.usage, "gpt-4o") for t in app.session.turns[seen:]), Decimal(0))  # type: ignore[arg-type]
        lines = [str(w.render()) for w in app.screen.query(UsageLine)]
        assert lines[-1].endswith(f" · {money_words(second)}")
        assert app.screen.query_one(StatusLine).usage.endswith(f" · {money_words(first + second)}")
        live = tui.shown_svg(app)
        conversation = app.session.conversation
    reopened = tui.still(make_app(config=config, conversation=conversation))
    async with reopened.run_test(size=tui.SIZE) as pilot:
        await quiet(pilot)
        assert [str(w.render()) for w in reopened.screen.query(UsageLine)] == lines
        assert reopened.screen.query_one(StatusLine).usage.endswith(f" · {money_words(first + second)}")
        assert screen_svg(reopened) == live


def test_the_conversations_money_prices_each_turn_once_and_again_for_other_prices(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The status line's money (``Tally.words``) after every turn of a long sitting: each turn is
    priced once (a thousand turns priced again took ~90 ms each time), the sum equals pricing them
    all, and another book (``/model``: other own prices) prices them all again."""
    from app.tui.tally import Tally

    cheap = PriceBook({"m": OwnPrices(input=Decimal(1), output=Decimal(2))})
    dear = PriceBook({"m": OwnPrices(input=Decimal(10), output=Decimal(20))})
    books = {"now": cheap}
    tally = Tally(lambda: books["now"])
    priced: list[int] = []
    spend = PriceBook.spend

    def counted(self: PriceBook, turns: Any) -> Spend:
        turns = list(turns)
        priced.append(len(turns))
        return spend(self, turns)

    monkeypatch.setattr(PriceBook, "spend", counted)
    for n in range(1, 31):
        tally.turn_settled(Usage(input=1_000_000 * n, output=1_000_000), "m")
        tally.exchange_done(Usage(input=1_000_000 * n, output=1_000_000), "m")
        assert tally.words().endswith(money_words(spend(cheap, tally.paid).amount))
    assert priced == [1] * 30  # each turn once
    books["now"] = dear
    assert tally.words().endswith(money_words(spend(dear, tally.paid).amount))
    assert priced[-1] == 30  # all again, at the other prices
