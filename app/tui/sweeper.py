"""What a transcript's removed widgets held, collected while the person reads.

Removed widgets are cycles, and automatic full collections are off
(``collector``), so without a collection every page the window drops while
scrolling would stay in memory until the next turn ends. The sweeper runs
``collector.pages_dropped`` for them:

- once they are gone: Textual prunes removed widgets over a few frames, and a
  collection run before that frees nothing (and none would follow);
- once the view has been still ``COLLECT_AFTER`` seconds, so its tens of
  milliseconds do not land on a key; unless more than ``COLLECT_MOST`` widgets
  wait (a long read keeps its memory bounded);
- not while a turn runs: once it is over (its end's collection frees what
  the turn made, not widgets frozen after earlier turns and dropped since);
- thorough after a reset (those widgets lived through turns, so were frozen);
- soon (``SOON_AFTER``), once they are gone, when the owner is about to
  build more in their place (``collect_soon``: a live sitting shown
  again from the store, ``tree.LIVE_MOST``): built first, the new widgets
  would take fresh memory beside the old ones', and what Python freed stays
  with the process, so every later sitting would hold both;
- after emptying the owner's arrangement cache: Textual keeps a container's
  last four arrangements (``Widget._arrangement_cache``), each holding the
  placement of every child it had, so the pages dropped in the last few
  layouts would otherwise stay alive until four more layouts came. The next
  layout arranges the transcript once again (a few milliseconds); and its
  list of displayed children is read, which Textual caches until it is next
  asked for (the one before the last removal would keep its widgets).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import collector

if TYPE_CHECKING:
    from textual.await_remove import AwaitRemove
    from textual.timer import Timer
    from textual.widget import Widget

__all__ = ["Sweeper", "COLLECT_AFTER", "COLLECT_MOST", "SOON_AFTER"]

#: Seconds the view must have been still (and the removal done) before the collection runs.
COLLECT_AFTER = 0.5
#: Widgets dropped after which the collection no longer waits for the view to be still.
COLLECT_MOST = 2_000
#: Seconds after a removal before ``collect_soon`` collects: Textual lets go of removed widgets over
#: a few frames (measured in a live sitting shown again: one refresh after the removal, a collection
#: freed 21 of 305 widgets removed; 0.1 s after it, 273).
SOON_AFTER = 0.1


class Sweeper:
    def __init__(self, owner: Widget, busy: Callable[[], bool]) -> None:
        self.owner = owner
        self.busy = busy
        #: The collection due, once scheduled.
        self._due: Timer | None = None
        #: Widgets frozen by a turn's end went since the last collection (a reset).
        self.thorough = False
        self._dropped = 0
        self._removing: set[asyncio.Future[None]] = set()
        self._moved = 0.0
        #: What waits for the removals under way to be collected (``collect_soon``).
        self._then: list[Callable[[], None]] = []

    def moved(self) -> None:
        """The view moved: the collection waits until it is still."""
        self._moved = time.monotonic()

    def remove(self, widgets: list[Widget]) -> None:
        """``widgets`` go from the owner; what they held is collected once they are gone."""
        if widgets:
            self._dropped += len(widgets)
            task = asyncio.ensure_future(self._after(self.owner.remove_children(widgets)))
            self._removing.add(task)
            task.add_done_callback(self._removing.discard)

    def collect_soon(self, then: Callable[[], None]) -> None:
        """The removals under way are collected ``SOON_AFTER`` they are done (not once the view is
        still; even while a turn that began meanwhile runs: frozen, they would wait for a thorough
        pass), then ``then`` runs: what it builds takes the memory they held. At once when nothing
        is being removed."""
        self._then.append(then)
        if not self._removing:
            self._soon()

    async def _after(self, removal: AwaitRemove) -> None:
        await removal
        if not self.owner.is_attached:
            return
        if self._then:
            self.owner.set_timer(SOON_AFTER, self._soon)
        elif self._due is None:
            self._due = self.owner.set_timer(COLLECT_AFTER, self._collect)

    def _soon(self) -> None:
        if self._removing or not self._then:
            return  # another removal is under way: its own end comes here
        if self._due is not None:
            self._due.stop()
            self._due = None
        self._sweep()
        then, self._then = self._then, []
        for callback in then:
            callback()

    def _collect(self) -> None:
        self._due = None
        if self.busy():
            # again once the turn is over: its end's collection does not free widgets frozen after the
            # turns they lived through (a live sitting's dropped pages), only this one's thorough pass does
            self._due = self.owner.set_timer(COLLECT_AFTER, self._collect)
            return
        still = time.monotonic() - self._moved
        if still < COLLECT_AFTER and self._dropped < COLLECT_MOST:
            self._due = self.owner.set_timer(COLLECT_AFTER - still, self._collect)
            return
        self._sweep()

    def _sweep(self) -> None:
        self.owner._clear_arrangement_cache()
        _ = self.owner.displayed_children  # refreshes the cached list (see the module's docstring)
        collector.pages_dropped(thorough=self.thorough)
        self.thorough = False
        self._dropped = 0
