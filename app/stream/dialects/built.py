"""The request items of the last history built, given again for the entries a new history begins with.

Each request carries the whole history, built anew. A memo by entry (each entry's item given again
while its fields were unchanged) still looked at every entry twice an exchange: at 450 exchanges,
1,800 entries, 2.7–3.0 ms a request in a live sitting (0.7 ms alone; the rest is memory traffic
among a heap the frames keep walking), and Enter → ready grew with the conversation. Now a history
that begins with the very entries of the last one built (one pass of identity, ``is``, in C) gets
that build's items for them as one list copy, and only the entries after them are built. Those items
are the same objects as the last request's, which the body's writer (``jsonreuse.same``) and the
recording (``recorded_requests.shorten``) then also find by identity.

Where reuse may begin: a builder calls ``cut`` before an entry when the items so far are exactly those
of the entries so far: not while it carries something from one entry to the next (OpenAI chat's tool
images wait for the user-side message after the results), and a merging builder (Anthropic's and
Gemini's send consecutive entries of a role as one message) only as it starts a new message; when it
merges an entry into the last message it puts a new message in its place (``merged``: an item a
request holds is never changed, and a cut within it is dropped). Reuse begins at the
last cut within the shared entries; a history that shares nothing, or another built in between (a
compaction's request, another session's), is built whole: a rebuild, never a wrong item.

An entry is not compared field by field, so an entry changed in place after it was built must say so
with ``history.changed()``. Only ``chat.attaching.with_tool_images`` changes one (a result given its
images); a change since the last build means a whole build. The test suite sets ``CHECK_ENV``
(``tests/conftest.py``): every reuse then also compares each reused entry's mark (``_MARKS``: its
fields and its lists' lengths, taken when it was built) and raises on a difference, so a change in
place that does not say so fails the suite instead of sending a stale request.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Callable
from typing import Any, NamedTuple

from ..history import Assistant, Entry, ToolResult, User, edits
from ..identical import same_start

__all__ = ["BuiltItems", "Building", "CHECK_ENV"]

#: Set (to anything): each reuse checks that the entries it reuses are unchanged (the test suite).
CHECK_ENV = "CALLSTREAM_CHECK_BUILT"

#: What each entry type's item is built from, as far as it can change: its fields, a list's length.
_MARKS: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    User: lambda e: (e.text, len(e.attachments)),
    Assistant: lambda e: (e.text, len(e.calls), e.note),
    ToolResult: lambda e: (e.content, len(e.images), e.is_error, e.call_id, e.name),
}


class _Last(NamedTuple):
    """One build: its entries, its items, where reuse may begin (entry index, items before it, ascending),
    the edits count it was made at, and (checking only) each entry's mark."""

    entries: list[Entry]
    items: list[Any]
    cuts: list[int]
    counts: list[int]
    edits: int
    marks: list[tuple[Any, ...]] | None


class BuiltItems:
    """One builder's last build: ``build(history)``, then ``cut`` and ``done`` on what it gives."""

    def __init__(self) -> None:
        self._last: _Last | None = None

    def build(self, history: list[Entry]) -> Building:
        return Building(self, history)


class Building:
    """The items of one history being built: ``items`` holds those reused (the entries before ``start``);
    the builder appends the rest."""

    def __init__(self, owner: BuiltItems, history: list[Entry]) -> None:
        self._owner = owner
        self._history = history
        self._edits = edits()
        self._checking = bool(os.environ.get(CHECK_ENV))
        last = owner._last  # (read once: a build in another thread replaces it whole)
        self.start = 0
        self.items: list[Any] = []
        self._cuts: list[int] = []
        self._counts: list[int] = []
        if last is None or last.edits != self._edits or not last.cuts:
            return
        shared = same_start(history, last.entries)
        at = bisect_right(last.cuts, shared) - 1
        if at < 0:
            return
        self.start = last.cuts[at]
        if self._checking and last.marks is not None:
            _check(history[:self.start], last.marks)
        self.items = last.items[:last.counts[at]]
        self._cuts = last.cuts[:at + 1]
        self._counts = last.counts[:at + 1]

    def cut(self, index: int) -> None:
        """The builder carries nothing into entry ``index``: ``items`` are those of the entries before it
        (said again for the same entry, the later word holds: it has seen more of what came before)."""
        if self._cuts and self._cuts[-1] == index:
            self._counts[-1] = len(self.items)
            return
        self._cuts.append(index)
        self._counts.append(len(self.items))

    def merged(self) -> None:
        """The builder replaced the last item with one that also holds the entry it is building (a merging
        builder, Anthropic's and Gemini's: one message for consecutive entries of a role): a build may no
        longer begin where that item was whole."""
        while self._counts and self._counts[-1] >= len(self.items):
            self._cuts.pop()
            self._counts.pop()

    def done(self) -> None:
        """Kept for the next build (the entries as a copy: the history list goes on changing)."""
        marks = [_MARKS[type(entry)](entry) for entry in self._history] if self._checking else None
        self._owner._last = _Last(list(self._history), self.items, self._cuts, self._counts, self._edits, marks)


def _check(reused: list[Entry], marks: list[tuple[Any, ...]]) -> None:
    for index, (entry, mark) in enumerate(zip(reused, marks, strict=False)):
        if _MARKS[type(entry)](entry) != mark:
            raise AssertionError(f"entry {index} ({type(entry).__name__}) changed in place after its request "
                                 "item was built, and history.changed() was not called: its item would be stale")
