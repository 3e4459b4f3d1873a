"""A set of a conversation's entry numbers, held as what it is almost always: a run from 0.

The store numbers a conversation's entries in the order they are written (``seq``), so the entries a
session knows of are 0, 1, 2, … with at most a few beyond a gap. A ``set`` of them held 2 MB at ten
thousand exchanges for as long as the conversation was open; this holds the run's end and the few
others.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["EntryNumbers"]


class EntryNumbers:
    """``add``, ``update``, ``in``, ``len`` and iteration (in order) as a ``set[int]`` answers them."""

    __slots__ = ("_run", "_rest")

    def __init__(self, numbers: Iterable[int] = ()) -> None:
        #: Every number from 0 below this is in.
        self._run = 0
        #: The numbers in that are not in the run.
        self._rest: set[int] = set()
        self.update(numbers)

    def add(self, number: int) -> None:
        if number == self._run:
            self._run += 1
            while self._run in self._rest:
                self._rest.remove(self._run)
                self._run += 1
        elif number > self._run or number < 0:
            self._rest.add(number)

    def update(self, numbers: Iterable[int]) -> None:
        for number in numbers:
            self.add(number)

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and (0 <= number < self._run or number in self._rest)

    def __len__(self) -> int:
        return self._run + len(self._rest)

    def __iter__(self) -> Iterator[int]:
        yield from sorted(n for n in self._rest if n < 0)
        yield from range(self._run)
        yield from sorted(n for n in self._rest if n > 0)
