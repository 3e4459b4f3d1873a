"""How a long conversation's path is cut into pages, and what a window needs of its transcript.

A page is a few whole exchanges (so an exchange's usage line and error note
are built with it), cut deterministically from the path's first entry, so
entries added at the end never move an earlier page. The numbers here are
the window's (``window.py``) and the tests' and benchmarks' that check it.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from textual.geometry import Size
from textual.widget import AwaitMount, Widget

if TYPE_CHECKING:
    from textual.timer import Timer

    from widgets.light_exchange import LightExchange

    from ..store.pages import OutlineEntry

__all__ = ["Pane", "Run", "paginate", "paginate_on", "exchanges", "SeqIndex", "EXCHANGES_PER_PAGE", "FIRST_PAGES",
           "NEAR_SCREENS", "LIVE_NEAR_SCREENS", "AHEAD_SCREENS", "AHEAD_AFTER", "MOST_PAGES", "MOST_MOUNTED"]

#: Exchanges in a page (a few screens of a tall terminal each, for a turn with calls and a reply).
EXCHANGES_PER_PAGE = 4
#: Pages mounted in one batch when a conversation opens: what the first screen waits for. The rest
#: come after it, a page a frame, while they do not fill ``NEAR_SCREENS`` above and below the view.
FIRST_PAGES = 1
#: Screens of the conversation mounted above and below the view whatever the person does: the page
#: that fills them comes right after the frame of the key that needed it.
NEAR_SCREENS = 2
#: Screens mounted above the view of a live sitting shown again from the store while the view follows its
#: end (``tree.LIVE_MOST``): its screen stays full and a first PageUp a whole screen; the second screen comes
#: with that first move away from the end. With two, each reset built two or three pages again at once and the
#: next came three exchanges later (144 resets in 500 exchanges at full speed, each exchange after one
#: 0.5–0.8 s); with one, every eight (61 resets), and the mean Enter → ready at 450–500 fell from 250 to 206 ms.
LIVE_NEAR_SCREENS = 1
#: Screens mounted around the view once the person has been still ``AHEAD_AFTER`` seconds (and as a
#: conversation opens): so paging a few screens back never waits for a page. A page coming blocks
#: the app 80–200 ms (its widgets built, styled and laid out, measured at 1,000 exchanges with
#: ``make bench-long``), and a key that arrives meanwhile waits: right after a key, only what the
#: view needs comes; what it may need next waits until the person stops paging or typing.
AHEAD_SCREENS = 4
AHEAD_AFTER = 1.0
#: More pages mounted than this beside the pinned first and last: the one farthest from the viewport
#: goes, once it is three screens away.
MOST_PAGES = 6
#: The most pages ever mounted once a window settled: ``MOST_PAGES`` and the pinned first and last.
MOST_MOUNTED = MOST_PAGES + 2


def paginate(outline: list[OutlineEntry]) -> list[tuple[int, int]]:
    """The pages of ``outline``, as (first, end) indexes: a new page starts at
    every ``EXCHANGES_PER_PAGE``-th user message (deterministic from the first
    entry, so entries added at the end never move an earlier page)."""
    starts = [0]
    users = 0
    for index, entry in enumerate(outline):
        if entry.kind == "user":
            if users and users % EXCHANGES_PER_PAGE == 0:
                starts.append(index)
            users += 1
    ends = starts[1:] + [len(outline)]
    return [(start, end) for start, end in zip(starts, ends, strict=True) if end > start]


def paginate_on(outline: list[OutlineEntry], pages: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``paginate(outline)`` when ``outline`` continues the outline ``pages`` were cut from: only its
    last page on is cut again (a page starts where the count of user messages is a multiple of the
    page's, so counting from there cuts the same), not the whole path after every exchange."""
    if not pages:
        return paginate(outline)
    start = pages[-1][0]
    return pages[:-1] + [(first + start, end + start) for first, end in paginate(outline[start:])]


class SeqIndex:
    """An entry's number → its index in an outline. A path's numbers rise (an entry is written after
    the one it follows), so the index is a search of the outline itself: a dict of every entry held
    2 MB at ten thousand exchanges, for as long as the conversation was open. A damaged file's path
    that does not rise gets the dict."""

    _dict: dict[int, int] | None

    def __init__(self, outline: Sequence[OutlineEntry], known: SeqIndex | None = None) -> None:
        """``known``: the index of an outline this one continues (only what it adds is looked at)."""
        self.outline = outline
        start = 0
        if known is not None and known._dict is None and 0 < len(known.outline) <= len(outline):
            start = len(known.outline) - 1
        rising = all(a.seq < b.seq for a, b in itertools.pairwise(itertools.islice(outline, start, None)))
        self._dict = None if rising else {entry.seq: index for index, entry in enumerate(outline)}

    def get(self, seq: int) -> int | None:
        if self._dict is not None:
            return self._dict.get(seq)
        at = bisect.bisect_left(self.outline, seq, key=_SEQ)
        return at if at < len(self.outline) and self.outline[at].seq == seq else None


_SEQ = operator.itemgetter(0)  # an OutlineEntry's seq


def exchanges(items: list[Any]) -> list[list[Any]]:
    """A page's stored entries cut into exchanges: a new one at each user message (what the
    transcript builds for a run of entries is then what it builds for the whole page, in pieces:
    an exchange's usage line and error note close it before the next message)."""
    runs: list[list[Any]] = []
    for item in items:
        if not runs or not hasattr(item, "blocks"):
            runs.append([])
        runs[-1].append(item)
    return runs


@dataclass
class Run:
    """An exchange of a mounted page: the widgets showing it in the transcript (one
    ``LightExchange`` while it is drawn light, ``lights.py``), and the stored entries they show."""

    widgets: list[Widget]
    entries: list[Any]
    seqs: list[int]
    light: LightExchange | None = None
    #: Found not drawable light (``capture.lines_of`` refused it): it stays widgets while mounted.
    plain: bool = False


class Pane(Protocol):
    """What the window needs of the transcript (``Transcript``)."""

    @property
    def size(self) -> Size: ...

    @property
    def scroll_y(self) -> float: ...

    @property
    def max_scroll_y(self) -> int: ...

    @property
    def is_attached(self) -> bool: ...

    @property
    def children(self) -> Sequence[Widget]: ...

    def busy(self) -> bool: ...

    def mount_all(self, widgets: list[Widget], *, before: Widget | None = None,
                  after: Widget | None = None) -> AwaitMount: ...

    def call_after_refresh(self, callback: Callable[[], object]) -> bool: ...

    def set_timer(self, delay: float, callback: Callable[[], object], *, name: str | None = None) -> Timer: ...

    def build_items(self, items: list[Any], last: bool) -> tuple[list[Widget], list[int]]: ...

    def remove_widgets(self, widgets: list[Widget], frozen: bool = False) -> None: ...

    def forget(self, seqs: list[int]) -> None: ...

    def reorder(self, seqs: list[int], kinds: dict[int, str]) -> None: ...

    def head(self) -> int | None: ...

    def hold(self, y: int) -> None: ...

    def held_at_end(self) -> bool: ...
