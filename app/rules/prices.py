"""What a conversation costs in money and how many tokens a model's context window holds: the one
definition of each. The usage line, the status line, ``ask --json`` and ``--verbose``, the exports,
the context meter and ``ask --max-cost`` all ask a ``PriceBook``.

The table is genai-prices' bundled snapshot (pydantic's maintained list of providers' prices and
context windows, updated with each release as providers change prices). Its download of a newer
table is never used: a price is computed offline, from what this install carries, so the same
conversation costs the same on every screen. A model the table does not know has no price (``None``,
shown as nothing at all — never 0), unless a profile gives its own prices (``[providers.NAME.prices]``,
dollars per million tokens), which win for that profile's model.

The counts go to the table's units as providers bill them: ``input`` (cached included) is its
``input_tokens`` and ``cached`` its ``cache_read_tokens`` (billed at the model's cache rate where it
has one); ``output`` (reasoning included) is ``output_tokens``: every provider in the table bills
thinking as output. Cache writes are not told apart by our usage (Anthropic's are added to input),
so they are priced as input.

The table is loaded when something asks of it (about 11 MB in the app: pydantic builds its schemas,
and 30,000 lines of data), never merely because a screen opened: a conversation of the embedded demo
model (whose own name no provider prices) or one whose turns carry no usage is read without it. A
screen asks without waiting (``PriceBook.ready_for``, ``window(wait=False)``): the load starts in a
thread of its own, unless the app holds loads while it draws its first screen (``hold``/``release``),
and ``when_loaded`` tells the screen to show what it could not.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..stream.usage import Usage

__all__ = ["OwnPrices", "Spend", "PriceBook", "money_words", "NO_PRICE", "preload", "loaded", "hold", "release",
           "when_loaded"]

#: A million: the table's prices and a profile's are per million tokens.
_MTOK = Decimal(1_000_000)

#: What a display says where some request had no price (its usage is shown, its money is not).
NO_PRICE = "no price for this model"

#: The table is loaded (about 30,000 lines of data: a second or so on a busy machine).
_LOADED = threading.Event()
_LOADING = threading.Lock()
#: Guards ``_held``, ``_wanted`` and ``_listeners`` (the loading thread reads them as it ends).
_STATE = threading.Lock()
#: An app is drawing its first screen: a load asked for now starts at ``release``.
_held = False
_wanted = False
#: Who to tell once the table is in: (the loop to tell it on, the bound method), weakly.
_listeners: list[tuple[asyncio.AbstractEventLoop, weakref.WeakMethod[Callable[[], object]]]] = []


def _load() -> None:
    from genai_prices.data_snapshot import get_snapshot

    get_snapshot()
    _mark_loaded()


def _mark_loaded() -> None:
    """The table is in: each listener is called on its own loop (this may be the loading thread)."""
    with _STATE:
        if _LOADED.is_set():
            return
        _LOADED.set()
        listeners = list(_listeners)
        _listeners.clear()
    for loop, ref in listeners:
        method = ref()
        if method is not None:
            try:
                loop.call_soon_threadsafe(method)
            except RuntimeError:
                pass  # that loop is closed: its app has ended


def preload() -> None:
    """Load the table in a thread of its own, once, so no screen waits for it."""
    if _LOADED.is_set() or not _LOADING.acquire(blocking=False):
        return
    threading.Thread(target=_load, name="genai-prices", daemon=True).start()


def _want() -> None:
    """A lookup that must not wait met the table not loaded: load it now, or at ``release``."""
    global _wanted
    with _STATE:
        if _held:
            _wanted = True
            return
    preload()


def hold() -> None:
    """Loads asked for from now wait for ``release`` (an app draws its first screen: the loading thread
    would take the interpreter from it)."""
    global _held
    with _STATE:
        _held = True


def release(load: bool = True) -> None:
    """The first screen is drawn: a load asked for meanwhile starts now (unless not ``load``: the app
    ended), and later ones at once."""
    global _held, _wanted
    with _STATE:
        _held, wanted, _wanted = False, _wanted, False
    if wanted and load:
        preload()


def when_loaded(method: Callable[[], object]) -> None:
    """Call ``method`` (a bound method, held weakly) on the running loop once the table is in: at once
    if it is."""
    loop = asyncio.get_running_loop()
    with _STATE:
        if not _LOADED.is_set():
            _listeners.append((loop, weakref.WeakMethod(method)))
            return
    loop.call_soon(method)


def loaded() -> bool:
    return _LOADED.is_set()


@dataclass(frozen=True, slots=True)
class OwnPrices:
    """A profile's own prices, dollars per million tokens (``cached``: the cache-read rate, the input
    rate where not given)."""

    input: Decimal
    output: Decimal
    cached: Decimal | None = None

    def cost(self, usage: Usage) -> Decimal:
        cached = usage.cached or 0
        fresh = max((usage.input or 0) - cached, 0)
        rate = self.input if self.cached is None else self.cached
        return (fresh * self.input + cached * rate + (usage.output or 0) * self.output) / _MTOK


def money_words(amount: Decimal) -> str:
    """``$0.0123`` (four places below a dollar, two above; ``<$0.0001`` for less)."""
    if 0 < amount < Decimal("0.0001"):
        return "<$0.0001"
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}"


@dataclass(frozen=True, slots=True)
class Spend:
    """Money over several requests: the sum of the priced ones, and how many had usage but no price
    (then the sum is a floor, and says so)."""

    amount: Decimal = Decimal(0)
    priced: int = 0
    unpriced: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.amount + other.amount, self.priced + other.priced, self.unpriced + other.unpriced)

    @property
    def known(self) -> bool:
        return self.priced > 0

    def words(self) -> str:
        """``$0.0123``; ``≥ $0.0123`` when some request had no price; "" when none had one."""
        if not self.priced:
            return ""
        return ("≥ " if self.unpriced else "") + money_words(self.amount)

    def to_json(self) -> dict[str, Any]:
        """For ``ask --json`` and the exports: dollars as a string (no float rounding); ``complete``
        false when some request had no price."""
        return {"usd": f"{self.amount:f}", "complete": not self.unpriced}


class PriceBook:
    """Prices and context windows for the models a conversation meets: a profile's own first, then the
    table (by the provider the base URL names, else by the model's name alone). ``untabled``: models
    never looked up (the embedded demo model's own name: no price and no window, without the table)."""

    def __init__(self, own: Mapping[str, OwnPrices] | None = None, windows: Mapping[str, int] | None = None,
                 base_url: str | None = None, untabled: Iterable[str] = ()) -> None:
        self.own = dict(own or {})
        self.windows = dict(windows or {})
        self.base_url = base_url
        self.untabled = frozenset(untabled)

    def _own(self, table: Mapping[str, Any], model: str) -> Any:
        """A profile's entry for ``model``: by its name, or the name the provider answered with
        (``gpt-4o`` asked, ``gpt-4o-2024-08-06`` answered)."""
        if model in table:
            return table[model]
        return next((v for k, v in table.items() if model.startswith(f"{k}-")), None)

    def cost(self, usage: Usage | None, model: str | None) -> Decimal | None:
        """What one request (or a turn's attempts) cost; ``None``: no counts, or no price for the model."""
        if usage is None or not usage.known or not model:
            return None
        own = self._own(self.own, model)
        if own is not None:
            return own.cost(usage)  # type: ignore[no-any-return]
        return None if model in self.untabled else _table_cost(usage, model, self.base_url)

    def ready_for(self, models: Iterable[str | None]) -> bool:
        """Whether turns of these models are priced at once: the table is loaded, or none needs it (each
        has the profile's own prices, no name, or is untabled). When not, the table is asked for
        (``when_loaded`` says when it is in): a screen asks before it prices."""
        if loaded() or not any(m and m not in self.untabled and self._own(self.own, m) is None for m in models):
            return True
        _want()
        return False

    def key(self) -> tuple[Any, ...]:
        """What its prices depend on (the runtime builds a book per question): two books with one key
        price a turn the same, so a sum priced with one holds for the other."""
        return tuple(sorted(self.own.items())), self.base_url, self.untabled

    def spend(self, turns: Iterable[Any]) -> Spend:
        """The money of turns (anything with ``usage`` and ``model``): a turn without usage adds nothing."""
        out = Spend()
        for turn in turns:
            out += self.spend_of(getattr(turn, "usage", None), getattr(turn, "model", None))
        return out

    def spend_of(self, usage: Usage | None, model: str | None) -> Spend:
        """One turn's money: priced, unpriced (it has usage, the model has no price), or nothing."""
        if usage is None or not usage.known:
            return Spend()
        cost = self.cost(usage, model)
        return Spend(cost, 1, 0) if cost is not None else Spend(Decimal(0), 0, 1)

    def window(self, model: str | None, wait: bool = True) -> int | None:
        """The model's input limit in tokens: the profile's ``context_window``, else the table's (``None``
        until it is loaded when not ``wait``: then it is asked for, as by ``ready_for``)."""
        if not model:
            return None
        own = self._own(self.windows, model)
        if own is not None:
            return int(own)
        if model in self.untabled:
            return None
        if wait or loaded():
            return _table_window(model, self.base_url)
        _want()
        return None

    def window_at_hand(self, model: str | None) -> bool:
        """Whether ``window(model, wait=False)`` is the answer now, not a ``None`` that waits for the
        table (a check that must not block the screen asks its thread for it otherwise)."""
        return (not model or self._own(self.windows, model) is not None or model in self.untabled
                or loaded())

    def input_rate(self, model: str | None) -> Decimal | None:
        """Dollars per input token (uncached): what an estimated request costs before it is sent."""
        return self.cost(Usage(input=1_000_000), model)


@functools.lru_cache(maxsize=256)
def _table_model(model: str, base_url: str | None) -> Any:
    """The table's (provider, model) for a name: under the provider the base URL names if the table
    knows that URL (OpenRouter, Groq, …), else by the name alone; ``None`` where it knows neither."""
    from genai_prices.data_snapshot import get_snapshot

    snapshot = get_snapshot()
    _mark_loaded()
    for url in (base_url, None) if base_url else (None,):
        try:
            return snapshot.find_provider_model(model, None, None, url)
        except LookupError:
            continue
    return None


def _table_cost(usage: Usage, model: str, base_url: str | None) -> Decimal | None:
    found = _table_model(model, base_url)
    if found is None:
        return None
    from genai_prices import Usage as TableUsage

    counts = {"input_tokens": usage.input, "cache_read_tokens": usage.cached, "output_tokens": usage.output}
    provider, info = found
    try:
        price = info.calc_price(TableUsage(**{k: v for k, v in counts.items() if v is not None}), provider)
    except (LookupError, ValueError, ArithmeticError):
        return None  # a unit this model is not priced in: no price rather than a wrong one
    return Decimal(price.total_price)


def _table_window(model: str, base_url: str | None) -> int | None:
    found = _table_model(model, base_url)
    window = found[1].context_window if found is not None else None
    return window if isinstance(window, int) and window > 0 else None
