"""Where a request parser's last list of messages left it, taken up by a next list that begins with it.

A chat request carries the whole conversation, and the demo's parsers folded all of it into history
each request: 1.5 ms at 450 exchanges (1,800 messages), twice an exchange, inside every Enter → ready
of a live sitting at full speed, and growing with the conversation. ``bodies.Bodies`` hands out the
items a body shares with the last one as the very objects it read then; so a list that begins with all
of the last list's items (``is``, one pass in C) is folded on from the state the last fold ended in:
the same fold, from the same state, over the same items, gives the same history.

``take`` hands the kept state over and forgets it, and ``keep`` stores a copy of the state's containers
after a whole fold: a fold extends its last entry in place (a tool result given the images of the
user-side message after it), so the state a fold works on is never the one kept, and a fold that fails
half-way (a bad message: the client gets a 400) leaves nothing kept. The state is each parser's own
(its history and what it carries across messages: names of calls by id, the calls still open).
"""

from __future__ import annotations

import threading
from typing import Any, Generic, TypeVar

from ...stream.identical import same_start

__all__ = ["Resumed"]

State = TypeVar("State")


class Resumed(Generic[State]):
    """One parser's last fold (a server's requests come one at a time; the lock is for servers in threads
    of one process, as the tests start them)."""

    def __init__(self) -> None:
        self._last: tuple[list[Any], State] | None = None
        self._lock = threading.Lock()

    def take(self, items: list[Any]) -> tuple[int, State | None]:
        """How many of ``items`` the last fold read, and the state it ended in (0 and None: fold from
        the start). Forgotten until ``keep``."""
        with self._lock:
            last, self._last = self._last, None
        if last is None or same_start(last[0], items) < len(last[0]):
            return 0, None
        return len(last[0]), last[1]

    def keep(self, items: list[Any], state: State) -> None:
        """``state`` (its containers copied by the caller) is where a whole fold of ``items`` ended."""
        with self._lock:
            self._last = (list(items), state)
