"""The window of a long conversation the transcript keeps mounted.

The store, not the widget tree, is the conversation: the transcript mounts a
window of pages of its path (a page: a few whole exchanges, so an exchange's
usage line and error note are built with it), read with the store's paged
reads (``outline`` once, ``page`` per page). Opening mounts the last page
(``FIRST_PAGES``), the ones above it once its screen is drawn; scrolling near the top mounts the page before (the scroll
position held on what was on screen), near the bottom of a window that no
longer reaches the end the page after; more than ``MOST_PAGES`` mounted, the
page farthest from the viewport goes (the store brings it back). A jump (a
search hit, a selected entry, a branch switch, Home, End) mounts the page of
its entry instead, and the pages around it the same way.

While a turn runs nothing below the viewport is dropped (the live widgets
are there). Once a window no longer reaches the end, the widgets added live
after the stored pages are gone too; the outline is read again (the store
has every entry the session wrote), and the end comes back from the store
as a reopen would show it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.geometry import Size
from textual.widget import AwaitMount, Widget

if TYPE_CHECKING:
    from ..store.pages import OutlineEntry
    from ..store.transcripts import Store

__all__ = ["Window", "paginate", "EXCHANGES_PER_PAGE", "FIRST_PAGES", "MOST_PAGES"]

#: Exchanges in a page (a few screens of a tall terminal each, for a turn with calls and a reply).
EXCHANGES_PER_PAGE = 4
#: Pages mounted in one batch when a conversation opens or the view jumps (the page of the entry
#: shown, and the ones before it): what the first screen waits for. The rest come after it, a page a
#: frame, while they do not fill two screens above and below the viewport.
FIRST_PAGES = 1
#: More pages mounted than this: the one farthest from the viewport goes, once it is two screens away.
MOST_PAGES = 6


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


class Pane(Protocol):
    """What the window needs of the transcript (``Transcript``)."""

    @property
    def size(self) -> Size: ...

    @property
    def scroll_y(self) -> float: ...

    @property
    def max_scroll_y(self) -> int: ...

    @property
    def children(self) -> Any: ...

    def mount_all(self, widgets: list[Widget], *, before: Widget | None = None,
                  after: Widget | None = None) -> AwaitMount: ...

    def call_after_refresh(self, callback: Callable[[], object]) -> bool: ...

    def build_items(self, items: list[Any], last: bool) -> tuple[list[Widget], list[int]]: ...

    def remove_widgets(self, widgets: list[Widget]) -> None: ...

    def after_welcome(self) -> list[Widget]: ...

    def forget(self, seqs: list[int]) -> None: ...

    def reorder(self, seqs: list[int], kinds: dict[int, str]) -> None: ...

    def busy(self) -> bool: ...

    def head(self) -> int | None: ...

    def hold(self, y: int) -> None: ...

    def held_at_end(self) -> bool: ...


class Window:
    def __init__(self, transcript: Pane) -> None:
        self.transcript = transcript
        self.store: Store | None = None
        self.conversation = ""
        self.outline: list[OutlineEntry] = []
        self.pages: list[tuple[int, int]] = []
        #: entry number → its index in the outline; each page's first index
        self._index: dict[int, int] = {}
        self._starts: list[int] = []
        #: page number → its widgets, for the pages mounted (a contiguous run, in order)
        self.mounted: dict[int, list[Widget]] = {}
        #: page number → the entries it registered in the transcript
        self._seqs: dict[int, list[int]] = {}
        #: The widgets added after the last stored page (live output, notes).
        self.detached = False
        #: The session's own copy of the path's last entry (see ``open``).
        self._live: Any = None
        #: The widget whose place on screen must not move, and where it was (rows below the top).
        self._pin: tuple[Widget, int] | None = None
        self._paging = False

    # -- what is mounted ------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.store is not None and bool(self.pages)

    @property
    def first(self) -> int:
        return min(self.mounted) if self.mounted else 0

    @property
    def end(self) -> int:
        return max(self.mounted) + 1 if self.mounted else len(self.pages)

    def page_of(self, seq: int) -> int | None:
        index = self._index.get(seq)
        if index is None:
            return None
        return bisect.bisect_right(self._starts, index) - 1

    def siblings(self, seq: int) -> tuple[int, int]:
        index = self._index.get(seq)
        return self.outline[index].siblings if index is not None else (1, 1)

    def _set_outline(self, outline: list[OutlineEntry]) -> None:
        self.outline = outline
        self.pages = paginate(outline)
        self._index = {entry.seq: index for index, entry in enumerate(outline)}
        self._starts = [start for start, _ in self.pages]

    # -- opening -------------------------------------------------------------------------

    def open(self, store: Store, conversation: str, head: int | None, around: int | None,
             live: Any = None, outline: list[OutlineEntry] | None = None) -> None:
        """The path to ``head`` read as an outline (or ``outline``, already read); the pages around entry
        ``around`` (else the last) mounted. ``live``: the session's own copy of the last entry, shown
        instead of the store's (a stored call awaiting approval is answered on that copy, and its card
        must see it change)."""
        self.store, self.conversation = store, conversation
        self._live = live
        self._set_outline(outline if outline is not None else store.outline(conversation, head))
        self.mounted.clear()
        self._seqs.clear()
        self.detached = False
        self._mount_around(around)

    def reset(self) -> None:
        """The transcript's widgets all went (``Transcript.reset``): nothing is mounted, nothing paged."""
        self.store = None
        self._live = None
        self._set_outline([])
        self.mounted.clear()
        self._seqs.clear()
        self.detached = False
        self._pin = None

    def _mount_around(self, around: int | None) -> None:
        """The page of entry ``around`` (else the last) and the ``FIRST_PAGES - 1`` before it, in one
        batch: what a jump waits for before its screen is drawn. The pages around come after that screen
        (``laid_out`` → ``scrolled``), each in a later frame."""
        target = self.page_of(around) if around is not None else None
        last = len(self.pages) - 1 if target is None else target
        numbers = list(range(max(0, last + 1 - FIRST_PAGES), last + 1))
        if not numbers:
            return
        widgets: list[Widget] = []
        for number in numbers:
            widgets += self._build(number)
        self.transcript.mount_all(widgets)
        self.detached = numbers[-1] < len(self.pages) - 1
        self._paging = True

    def _build(self, number: int) -> list[Widget]:
        assert self.store is not None
        start, end = self.pages[number]
        items = self.store.page(self.conversation, [entry.seq for entry in self.outline[start:end]])
        live = self._live
        if live is not None:
            items = [live if item.seq == live.seq else item for item in items]
        siblings = {entry.seq: entry.siblings for entry in self.outline[start:end]}
        for item in items:
            item.siblings = siblings.get(item.seq, (1, 1))
        last = number == len(self.pages) - 1
        widgets, seqs = self.transcript.build_items(items, last=last)
        self.mounted[number] = widgets
        self._seqs[number] = seqs
        return widgets

    # -- jumps -------------------------------------------------------------------------

    def reveal(self, seq: int) -> bool:
        """Entry ``seq``'s page mounted (the window moved there when it was far); False: not on this path."""
        number = self.page_of(seq)
        if number is None or number in self.mounted:
            return number is not None
        if self.transcript.busy():
            # the live widgets stay: the pages between it and the window are mounted too
            while number not in self.mounted:
                if number < self.first:
                    self.load(self.first - 1, trim=False)
                else:
                    self.load(self.end, trim=False)
            return True
        self._replace(seq)
        return True

    def to_top(self) -> None:
        """Home: the first page (while a turn runs, the top of the window: pages keep coming as it is read).
        Mounted already, the caller only scrolls; the page just above the window is mounted alone (a
        remount of the whole window costs hundreds of milliseconds a key)."""
        if not self.active or 0 in self.mounted or self.transcript.busy():
            return
        if self.first == 1:
            self._extend(0)
        else:
            self._replace(self.outline[0].seq)

    def to_end(self) -> bool:
        """The end of the path mounted; True when the window moved (the caller scrolls). The last page
        just below the window is mounted alone, keeping the window (see ``to_top``)."""
        if not self.active or not self.detached:
            return False
        self._refresh_outline()
        last = len(self.pages) - 1
        if self.mounted and self.end == last:
            self._extend(last)
        else:
            self._replace(None)
        return True

    def _extend(self, number: int) -> None:
        """A jump to page ``number``, next to the window: that page mounted beside it, nothing held
        (the caller scrolls to the top or the end, which stays put as the page is laid out)."""
        above = number < self.first
        self.load(number, trim=False)
        transcript = self.transcript
        # trimmed as seen from where the view goes (the old regions: the new page only pushes the rest further off)
        self._trim(dropping_below=above, at=0 if above else transcript.max_scroll_y)
        self._pin = None

    def _replace(self, around: int | None) -> None:
        """Every page and the live tail go; the pages around ``around`` come."""
        transcript = self.transcript
        for number in list(self.mounted):
            self._forget(number)
        transcript.remove_widgets(transcript.after_welcome())
        self._pin = None
        self._mount_around(around)

    def _refresh_outline(self) -> None:
        """The path read again (entries the session added live are in the store): only the rows after
        the outline's last entry when the path continues it (``Pages.outline_after``: an End at ten
        thousand exchanges does not read them all again), else the whole path."""
        assert self.store is not None
        head = self.transcript.head()
        outline = self.store.outline_after(self.conversation, head, self.outline)
        if outline is None:
            outline = self.store.outline(self.conversation, head)
            if [e.seq for e in outline[:len(self.outline)]] != [e.seq for e in self.outline]:
                return  # another path: the caller's rerender reads it
        elif len(outline) == len(self.outline):
            return  # nothing stored since
        self._set_outline(outline)
        self.transcript.reorder([entry.seq for entry in outline], {entry.seq: entry.kind for entry in outline})

    # -- scrolling -------------------------------------------------------------------

    def scrolled(self) -> None:
        """Near the top of the window, the page before comes; near the bottom of a detached window, the page after."""
        if not self.active or self._paging:
            return
        transcript = self.transcript
        margin = max(transcript.size.height, 1) * 2
        if self.first > 0 and transcript.scroll_y < margin:
            self.load(self.first - 1)
        elif self.detached and self.end < len(self.pages) and transcript.scroll_y > transcript.max_scroll_y - margin:
            self.load(self.end)

    def load(self, number: int, trim: bool = True) -> None:
        """Page ``number`` (next to the window) mounted, the view held where it was."""
        transcript = self.transcript
        above = number < self.first
        if above:
            anchor = self.mounted[self.first][0]
            if self._pin is None:  # a pin already set (a jump, the page before) still says what is on screen
                self._hold(anchor)
            widgets = self._build(number)
            transcript.mount_all(widgets, before=anchor)
        else:
            after = self.mounted[self.end - 1][-1]
            widgets = self._build(number)
            transcript.mount_all(widgets, after=after)
            if number == len(self.pages) - 1:
                self.detached = False
        self._paging = True
        if trim:
            self._trim(dropping_below=above)

    def laid_out(self) -> None:
        """The transcript was laid out again (its virtual size changed): the view held still;
        after a page came, another while the window does not reach far enough."""
        self.hold_still()
        if self._paging:
            self._paging = False
            self.transcript.call_after_refresh(self.scrolled)

    def _trim(self, dropping_below: bool, at: float | None = None) -> None:
        """Pages far from the view (at ``at``, else where it is) go while more than ``MOST_PAGES`` are mounted."""
        transcript = self.transcript
        height = max(transcript.size.height, 1)
        y = transcript.scroll_y if at is None else at
        top, bottom = y - 2 * height, y + 3 * height
        while len(self.mounted) > MOST_PAGES:
            if dropping_below:
                number = self.end - 1
                if transcript.busy() or self.mounted[number][0].virtual_region.y < bottom:
                    return  # the live widgets are below, or the page is close to the view
                if number == len(self.pages) - 1:
                    self._drop_tail()
                self._forget(number)
                self.detached = True
            else:
                number = self.first
                if self.mounted[number][-1].virtual_region.bottom > top:
                    return
                if self._pin is None:
                    self._hold(self.mounted[number + 1][0])
                self._forget(number)

    def _drop_tail(self) -> None:
        """The widgets added after the last page (live ones): gone, read back from the store at the end."""
        transcript = self.transcript
        last = self.mounted[self.end - 1][-1]
        children = list(transcript.children)
        if last in children:
            transcript.remove_widgets(children[children.index(last) + 1:])
        self._refresh_outline()

    def _forget(self, number: int) -> None:
        widgets = self.mounted.pop(number)
        self.transcript.forget(self._seqs.pop(number, []))
        self.transcript.remove_widgets(widgets)

    # -- holding the view still ------------------------------------------------------------

    def _hold(self, widget: Widget) -> None:
        """Keep ``widget`` where it is on screen while pages come and go above it. Not while the view
        follows the end: the anchor keeps the bottom where it is as pages come and go above and as what
        is below grows (a reply reopened writes its prose after its own mount), and holding a widget
        there would release it, leaving the view short of the end once what is below grew."""
        if self.transcript.held_at_end():
            return
        region = widget.virtual_region
        self._pin = (widget, region.y - round(self.transcript.scroll_y))

    def pin_top(self, widget: Widget) -> None:
        """A jump: ``widget`` at the top of the view, and kept there while pages come in around it."""
        self._pin = (widget, 0)
        self.hold_still()

    def release(self) -> None:
        """The user moved the view: nothing is held any more."""
        self._pin = None

    def hold_still(self) -> None:
        pin = self._pin
        if pin is None:
            return
        widget, offset = pin
        if not widget.is_attached:
            self._pin = None
            return
        y = widget.virtual_region.y - offset
        if y != round(self.transcript.scroll_y):
            self.transcript.hold(y)

