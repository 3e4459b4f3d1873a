"""When the person last moved the view or typed.

Mounting the pages a little further from the view (``Window.wanted``'s
``AHEAD_SCREENS``) is worth doing only while the person is not paging or typing:
a key that arrives while a page is laid out waits for it (a page's first
layout, measured at 1,000 exchanges, blocks 80–200 ms in pieces). The
transcript's own moves (holding the view still while a page comes) are not
the person's and do not count.
"""

from __future__ import annotations

import time

__all__ = ["Stillness", "IDLE_TIMER"]

#: The name of the timers of work done only once the person is still (pages mounted ahead, exchanges
#: drawn light): tests waiting for a quiet screen do not wait for them (``tests/waiting.py``).
IDLE_TIMER = "idle"


class Stillness:
    def __init__(self) -> None:
        #: ``time.monotonic()`` at the last move; never moved counts as still since always.
        self._moved = float("-inf")

    def moved(self) -> None:
        """The person scrolled, paged or typed."""
        self._moved = time.monotonic()

    def still_for(self) -> float:
        """Seconds since the person last moved (infinite before the first move)."""
        return time.monotonic() - self._moved
