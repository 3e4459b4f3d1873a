"""The garbage collector's pauses kept out of a streaming reply.

A full collection walks every tracked object the app holds: 30–50 ms with a
long conversation on screen, often in the middle of a stream, where it is a
key press that waits. So:

- ``settle`` (once the app has started and warmed up): everything loaded so
  far — modules, classes, the screen — lives as long as the app, so it is
  frozen out of every later collection, and automatic *full* collections are
  switched off; the young generations are collected as usual, which is where
  a stream's short-lived garbage dies.
- ``between_turns`` (an exchange has ended): the full collection, now, while
  the person reads the reply — garbage cycles that grew old during a turn
  (a removed widget) are freed once per exchange.
- ``restore`` (the app closed): the interpreter's own thresholds again.
"""

from __future__ import annotations

import gc

__all__ = ["settle", "between_turns", "restore"]

#: A full collection is due after this many middle-generation ones: never, in practice.
NO_AUTOMATIC_FULL = 1_000_000

_saved: tuple[int, int, int] | None = None


def settle() -> None:
    global _saved
    gc.freeze()
    young, middle, old = gc.get_threshold()
    if old != NO_AUTOMATIC_FULL:
        _saved = (young, middle, old)
    gc.set_threshold(young, middle, NO_AUTOMATIC_FULL)


def between_turns() -> None:
    gc.collect()


def restore() -> None:
    global _saved
    if _saved is not None:
        gc.set_threshold(*_saved)
        _saved = None
    gc.unfreeze()
