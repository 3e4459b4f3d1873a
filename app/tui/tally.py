"""What the conversation cost, as the screen shows it: pure bookkeeping, no widgets.

Two sums: the whole conversation (the stored tree's turns when it was shown,
plus this screen's exchanges since) for the status line, and the exchange in
progress (a retry or an answered approval continues it) for the line below it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..stream.usage import Costed, Usage, exchange_cost, total, usage_words

__all__ = ["Tally"]


class Tally:
    def __init__(self) -> None:
        self.spent_stored: Usage | None = None
        self.spent_live: Usage | None = None
        self.exchange_spent: Usage | None = None
        self.exchange_model: str | None = None

    def new_exchange(self) -> None:
        self.exchange_spent = self.exchange_model = None

    def stored(self, stored: Any) -> None:
        """A (re)shown stored conversation: every turn of every branch was paid for."""
        self.spent_stored = total(getattr(item, "usage", None) for item in stored.tree or stored.items)
        self.spent_live = None

    def added(self, items: Iterable[Any]) -> None:
        """Entries another process added (the conversation moved on elsewhere)."""
        self.spent_live = total([self.spent_live, *(getattr(i, "usage", None) for i in items)])

    def exchange_done(self, usage: Usage | None, model: str | None) -> None:
        """A live exchange ended (its requests were made): it adds to the one in progress."""
        self.spent_live = total([self.spent_live, usage])
        self.exchange_spent = total([self.exchange_spent, usage])
        self.exchange_model = model or self.exchange_model

    def stored_exchange(self, turns: Sequence[Costed]) -> bool:
        """A stored exchange's turns: it becomes the exchange shown last; False when
        it made no recorded request (then no line is shown for it)."""
        if not any(t.usage is not None or t.model is not None for t in turns):
            return False
        self.exchange_spent, self.exchange_model = exchange_cost(turns)
        return True

    def words(self) -> str:
        """The status line's part: ``conversation tokens …``, or "" when no provider said."""
        spent = usage_words(total([self.spent_stored, self.spent_live]), brief=True)
        return f"conversation {spent}" if spent else ""
