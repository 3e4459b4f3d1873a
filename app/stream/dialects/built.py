"""The request item built for each entry of the last history, given again while the entry is unchanged.

Each request carries the whole history, built anew: at 450 exchanges the OpenAI chat builder made
some 1,800 message dicts a request, and the body's writer (``jsonreuse.same``) and the recording
(``recorded_requests.shorten``) then compared each with the last request's, value by value, twice an
exchange. An entry unchanged since the last request gets the very item it got then, which both find by
identity (``is``) at once: building and writing such a request took 4.7 ms, and takes 2.4 ms (the
memo's own lookups included; measured alone, 450 exchanges).

"Unchanged": the same entry object, its fields the same values and its lists as long. A history's
entries are changed in place only by ``chat.attaching.with_tool_images``, which appends to a result's
images; that length is in the mark (``_MARKS``, which a test holds to every field of every entry
type), and nothing replaces an item of an entry's list. Only the entries of the last history built are
kept (the items that request held anyway). A history built in between (a compaction's request,
another session's) costs a rebuild, never a wrong item; so does a thread building at the same time
(each build reads the last memo once and replaces it once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..history import Assistant, Entry, ToolResult, User

__all__ = ["BuiltItems"]

#: What each entry type's item is built from, as far as it can change: its fields, a list's length.
_MARKS: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    User: lambda e: (e.text, len(e.attachments)),
    Assistant: lambda e: (e.text, len(e.calls), e.note),
    ToolResult: lambda e: (e.content, len(e.images), e.is_error, e.call_id, e.name),
}


class BuiltItems:
    """One builder's memo: ``item(entry, make)`` within ``build()``."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[Entry, tuple[Any, ...], Any]] = {}

    def build(self) -> Building:
        return Building(self)


class Building:
    """The items of one history being built; ``done`` keeps them for the next."""

    def __init__(self, items: BuiltItems) -> None:
        self._items = items
        self._last = items._last
        self._now: dict[int, tuple[Entry, tuple[Any, ...], Any]] = {}

    def item(self, entry: Entry, make: Callable[[Any], Any]) -> Any:
        # a hit keeps the very record it had, so the mark made to check it dies at once: a request of an
        # unchanged history leaves nothing new for the collector (a new record for each entry, kept till
        # the next request, was 1,800 objects for each young and each between-turns collection to walk)
        mark = _MARKS[type(entry)](entry)
        hit = self._last.get(id(entry))
        if hit is None or hit[0] is not entry or hit[1] != mark:
            hit = (entry, mark, make(entry))
        self._now[id(entry)] = hit
        return hit[2]

    def done(self) -> None:
        self._items._last = self._now
