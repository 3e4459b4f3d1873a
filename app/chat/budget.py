"""``ask --max-cost``: a ceiling on what one exchange may cost, checked before each request.

Before a request is sent, its cost is estimated from its input alone — the next request's size
(``window.room_of``: the provider's last count plus an estimate of what was added) at the model's
input rate (``rules.prices``) — and added to what the exchange's requests so far cost as the provider
reported them. The output is not known before it is written, so the estimate is a floor: a request
is refused only when even that floor would pass the ceiling. The first request refused is an
exchange refused; a later one stops the tool loop there. Either is a stated failure (``over_budget``):
what ran is saved, nothing more is sent.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from ..rules.prices import PriceBook, money_words
from .window import room_of

if TYPE_CHECKING:
    from .session import ChatSession
    from .turns import LiveTurn

__all__ = ["Budget", "unpriced"]

_MTOK = Decimal(1_000_000)


def unpriced(prices: PriceBook, model: str) -> str | None:
    """Why ``--max-cost`` cannot be kept for ``model`` (no price to estimate with), else None."""
    if prices.input_rate(model) is not None:
        return None
    return (f"--max-cost needs a price for the model {model!r}, and neither genai-prices' table nor its profile has "
            "one (give the profile prices = { input = …, output = … }, dollars per million tokens)")


class Budget:
    def __init__(self, limit: Decimal, prices: PriceBook, session: ChatSession) -> None:
        self.limit, self.prices, self.session = limit, prices, session

    def __call__(self, turns: list[LiveTurn]) -> str | None:
        session = self.session
        rate = self.prices.input_rate(session.endpoint.model)
        if rate is None:
            return unpriced(self.prices, session.endpoint.model)
        spent = self.prices.spend(turns).amount
        tokens = room_of(session, None).used
        estimate = rate * tokens / _MTOK
        if spent + estimate <= self.limit:
            return None
        ceiling = money_words(self.limit)
        if not turns:
            return (f"Not sent: the request is estimated at {money_words(estimate)} ({tokens:,} tokens in, before any "
                    f"output), over --max-cost {ceiling}.")
        return (f"Stopped before request {len(turns) + 1} of this exchange: with its input alone ({tokens:,} tokens, "
                f"about {money_words(estimate)}) the exchange would pass --max-cost {ceiling} (spent so far "
                f"{money_words(spent)}); what ran is saved.")
