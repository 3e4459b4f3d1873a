"""What the conversation cost, as the screen shows it: pure bookkeeping, no widgets.

Two sums: the whole conversation (the stored tree's turns when it was shown,
plus this screen's exchanges since) for the status line, and the exchange in
progress (a retry or an answered approval continues it) for the line below it.
Tokens are summed as the providers reported them; money is each turn priced by
its own model (``rules.prices``), so a ``/model`` switch mid-conversation adds
each model's price. The turns are kept and priced when the money is shown, and
only once the price table is loaded (asked for then, in a thread of its own):
until then the lines show tokens alone, and the screen shows them again when it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..rules.prices import PriceBook, Spend
from ..stream.usage import Costed, Usage, exchange_cost, total, usage_words

__all__ = ["Tally"]


class Tally:
    def __init__(self, book: Callable[[], PriceBook] = PriceBook) -> None:
        #: The prices in force (the runtime's: its profile may change with /model).
        self.book = book
        self.spent_stored: Usage | None = None
        self.spent_live: Usage | None = None
        self.exchange_spent: Usage | None = None
        self.exchange_model: str | None = None
        #: The turns paid for (anything with ``usage`` and ``model``): the whole tree's, and the exchange's.
        self.paid: list[Any] = []
        self.exchange_paid: list[Any] = []
        #: ``paid``'s money so far (``_conversation_money``): the book's key, the list, how many are in it.
        self._summed: tuple[Any, list[Any], int, Spend] = (None, [], 0, Spend())

    def new_exchange(self) -> None:
        self.exchange_spent = self.exchange_model = None
        self.exchange_paid = []

    def stored(self, stored: Any) -> None:
        """A (re)shown stored conversation: every turn of every branch was paid for."""
        items = stored.tree or stored.items
        self.spent_stored = total(getattr(item, "usage", None) for item in items)
        self.spent_live = None
        self.paid = [item for item in items if getattr(item, "usage", None) is not None]

    def added(self, items: Iterable[Any]) -> None:
        """Entries another process added (the conversation moved on elsewhere)."""
        items = list(items)
        self.spent_live = total([self.spent_live, *(getattr(i, "usage", None) for i in items)])
        self.paid += [item for item in items if getattr(item, "usage", None) is not None]

    def turn_settled(self, usage: Usage | None, model: str | None) -> None:
        """A live turn ended: paid for by its own model."""
        if usage is not None:
            turn = _Paid(usage, model)
            self.paid.append(turn)
            self.exchange_paid.append(turn)

    def _money(self, turns: list[Any]) -> Spend:
        book = self.book()
        return book.spend(turns) if _priceable(book, turns) else Spend()

    @property
    def exchange_money(self) -> Spend:
        return self._money(self.exchange_paid)

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
        self.exchange_paid = [t for t in turns if t.usage is not None]
        return True

    def _conversation_money(self) -> Spend:
        """``_money(self.paid)``, each turn priced once: the status line asks after every turn, and
        pricing a thousand turns of a model the table knows takes ~90 ms (a genai-prices lookup each),
        so a long live sitting or a long reopened conversation paid that again and again."""
        book = self.book()
        key, paid, upto, spend = self._summed
        if key != (now := book.key()) or paid is not self.paid:
            key, paid, upto, spend = now, self.paid, 0, Spend()
        fresh = paid[upto:]
        if not _priceable(book, fresh):
            return Spend()
        self._summed = (key, paid, len(paid), spend + book.spend(fresh))
        return self._summed[3]

    def words(self) -> str:
        """The status line's part: ``conversation tokens … · $0.0123``, or "" when no provider said."""
        spent = usage_words(total([self.spent_stored, self.spent_live]), brief=True)
        money = self._conversation_money().words()
        return f"conversation {spent}" + (f" · {money}" if money else "") if spent else ""


def _priceable(book: PriceBook, turns: list[Any]) -> bool:
    """The turns can be priced now (``PriceBook.ready_for``: until the table loads, the lines show
    tokens alone)."""
    return book.ready_for(getattr(t, "model", None) for t in turns)


class _Paid:
    """A live turn as far as its money goes."""

    __slots__ = ("usage", "model")

    def __init__(self, usage: Usage, model: str | None) -> None:
        self.usage, self.model = usage, model
