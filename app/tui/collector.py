"""The garbage collector's pauses kept out of a streaming reply, and bounded.

A full collection walks every tracked object that is not frozen: with a long
conversation on screen that is every widget of every exchange (0.8 s at 300
exchanges when it ran after every turn), and in the middle of a stream it is
a key press that waits. So:

- ``hold`` (the command line, before it imports the app) and ``release`` (the
  first screen is drawn: the warm-up begins): no automatic collection in
  between. What start-up makes (modules, classes, the first screen's widgets)
  nearly all lives as long as the app; collecting it as it was made was 300
  young, 28 middle and 2 full collections before a reopened conversation's
  first screen (0.1–0.2 s). ``release`` collects once, after that screen
  (about 9,000 objects of 145,000 at a reopen of 10 exchanges are garbage,
  which ``settle`` must not freeze).
- ``settle`` (once the first screen is drawn, as the warm-up begins): everything loaded so
  far — modules, classes, the screen — lives as long as the app, so it is
  frozen out of every later collection, and automatic *full* collections are
  switched off; the young generations are collected as usual, which is where
  a stream's short-lived garbage dies.
- ``between_turns`` (an exchange has ended): a full collection of what is not
  frozen — what was made since the last one, about one exchange — while the
  person reads the reply; what survives it is frozen in turn. Its cost is
  what the exchange made, not what the conversation holds. Garbage cycles
  among frozen objects (a widget removed later) wait for the thorough pass:
  everything unfrozen and collected once the interpreter's heap (its
  allocated blocks, ``sys.getallocatedblocks``: read in microseconds) has
  grown by a quarter since the last one (CPython's own ratio for its
  automatic full collections), so that work stays proportional to what was
  made (amortized) and the memory it can hold back stays under a quarter.
  Not the frozen objects counted as they are frozen: a frozen object freed
  by its reference count leaves no trace in such a count (an exchange's
  survivors, 28,000 objects, included the compositor's map and lines that the
  next frame let go; counted, the quarter came every exchange or two, a
  100 ms pass each, in a sitting that had not grown); and not the
  interpreter's own count, which walks the whole frozen list (10–15 ms).
  Each turn's collection ends by handing the C allocator's free memory back
  to the system (``give_back``, 0.3 ms: 0.7 MB less RSS at 160 exchanges of
  a live sitting, measured); the thorough pass's too.
- ``pages_dropped`` (widgets went while the person reads, no turn running):
  the same collection, freezing nothing; or (``thorough``: the transcript
  was emptied, so widgets frozen after the turns they lived through went) the
  thorough pass, which alone frees those: a live sitting shows its last pages
  again from the store every few exchanges (``tree.LIVE_MOST``), and without
  it what each such reset removed would wait for the quarter's growth.
  Each collection first empties Textual's one cache that keeps removed
  widgets' drawings alive (``_forget_removed_drawings``).
- ``restore`` (the app closed): the interpreter's own thresholds again.
"""

from __future__ import annotations

import gc
import sys

from ..files.heap import give_back

__all__ = ["hold", "release", "settle", "between_turns", "pages_dropped", "restore", "NO_AUTOMATIC_FULL",
           "THOROUGH_GROWTH"]

#: A full collection is due after this many middle-generation ones: never, in practice.
NO_AUTOMATIC_FULL = 1_000_000

#: The thorough pass runs once the heap is this much larger than after the last one.
THOROUGH_GROWTH = 1.25

_saved: tuple[int, int, int] | None = None
#: ``hold`` switched automatic collections off (and they were on).
_held = False
#: The heap's size (``_heap``) after the last thorough pass (or the settle); 0 when not settled.
_thorough_at = 0


def _heap() -> int:
    """The interpreter's allocated blocks: every object and small buffer it holds, frozen or not, and
    dead as soon as freed. Under another allocator (``PYTHONMALLOC=malloc``, which counts none), the
    frozen objects, counted by walking them."""
    return sys.getallocatedblocks() or gc.get_freeze_count()


def hold() -> None:
    global _held
    _held = gc.isenabled()
    gc.disable()


def release(collect: bool = True) -> None:
    """Automatic collections again, if ``hold`` stopped them (the first screen is drawn: what start-up left
    is ``collect``-ed at once; or the app ended)."""
    global _held
    if _held:
        _held = False
        gc.enable()
        if collect:
            gc.collect()


def settle() -> None:
    global _saved, _thorough_at
    gc.freeze()
    _thorough_at = _heap()
    young, middle, old = gc.get_threshold()
    if old != NO_AUTOMATIC_FULL:
        _saved = (young, middle, old)
    gc.set_threshold(young, middle, NO_AUTOMATIC_FULL)


def between_turns() -> None:
    _forget_removed_drawings()
    gc.collect()  # what is not frozen: what was made since the last call
    if not _thorough_at:  # not settled (a replay, or before the warm-up): nothing is frozen here
        return
    if _heap() >= _thorough_at * THOROUGH_GROWTH:
        _thorough()
    else:
        give_back()  # (before the freeze: what its first call loads, ctypes, is frozen too)
        gc.freeze()


def pages_dropped(thorough: bool = False) -> None:
    """Widgets were removed (pages of a long conversation dropped while scrolling, no turn running):
    what is not frozen is collected, as after a turn, but what survives is not frozen: the pages
    mounted while reading are then freed by the next such collection once they go too, and its cost
    stays that of the pages mounted (the window), not of the conversation."""
    _forget_removed_drawings()
    if thorough and _thorough_at:
        _thorough(baseline=False)
    else:
        gc.collect()


def _thorough(baseline: bool = True) -> None:
    """Everything unfrozen and collected (widgets frozen after the turns they lived through and removed
    since are cycles only this frees), what survives frozen again. ``baseline``: the growth that brings
    the next pass is counted from the heap now. Not after a reset's pass (``pages_dropped``): it runs
    with the transcript emptied, which its pages refill at once; counted from there, the refill looked
    like a quarter's growth a few exchanges later, and a long sitting paid a second pass for each reset."""
    global _thorough_at
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    if baseline:
        _thorough_at = _heap()
    _forget_placements()
    give_back()  # the holes the freed widgets left (2 to 4 MB a pass, measured with make bench-long)


def _forget_removed_drawings() -> None:
    """Textual (8.2) memoizes ``StylesCache.get_inner_outer`` with an ``lru_cache`` on the method, whose
    keys hold the instance: each removed widget's ``StylesCache`` (with every line it drew) stays alive
    until 1,024 newer ones push it out, about 30 MB when jumping around a conversation of thousands of
    exchanges (measured with ``make bench-long``). The memo only saves deriving two styles from two
    colours; it is emptied before each collection, so what removed widgets drew goes with them."""
    from textual._styles_cache import StylesCache

    StylesCache.get_inner_outer.cache_clear()


#: Textual's (8.2) memos of its region arithmetic (``textual.geometry.Region``), each an ``lru_cache``.
_PLACEMENT_MEMOS = ("overlaps", "contains_region", "translate", "__contains__", "grow", "shrink", "intersection",
                    "union", "split", "split_vertical", "split_horizontal")


def _forget_placements() -> None:
    """Textual memoizes its region arithmetic (up to 1,024 or 4,096 results a method): keyed by the
    places of widgets, which move as a live sitting grows and is shown again, they fill with the
    places of widgets long gone (a census of a live sitting: some 12 entries more an exchange, from
    20 to 120 exchanges, until each is full). Emptied at each thorough pass; the next frames fill them
    again with what is on screen."""
    from textual.geometry import Region

    for name in _PLACEMENT_MEMOS:
        getattr(getattr(Region, name), "cache_clear", lambda: None)()


def restore() -> None:
    global _saved, _thorough_at
    if _saved is not None:
        gc.set_threshold(*_saved)
        _saved = None
    gc.unfreeze()
    _thorough_at = 0
