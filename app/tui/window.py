"""The window of a long conversation the transcript keeps mounted.

The store, not the widget tree, is the conversation: the transcript mounts a
window of pages of its path (a page: a few whole exchanges, so an exchange's
usage line and error note are built with it), read with the store's paged
reads (``outline`` once, ``page`` per page); how a path is cut into pages is
``paging.py``. Opening mounts the last page (``FIRST_PAGES``), the ones above
it once its screen is painted (``hold_back``). The pages mounted need not be
contiguous: the first and the last page are mounted too and stay (``pinned``;
for a live sitting shown again, once the view leaves the end), so Home and
End only scroll, whatever lies between; a one-line ``PageGap`` stands between two
pages that are not neighbours. Within ``NEAR_SCREENS`` of the top of what is mounted or of a gap
(``AHEAD_SCREENS`` once the person pauses, ``wanted``), the page that fills it towards the view
comes (the view held on what was on screen), a page a frame; more than ``MOST_PAGES`` mounted beside the
pinned ones, the one farthest from the view goes once it is a few screens
away (the store brings it back). A jump (a search hit, a selected entry, a
branch switch) mounts the page of its entry where it belongs, and the pages
around it the same way; the ones far from it go after its screen is drawn.

The widgets a live session adds come after the last page, which is never
dropped, so they stay (``tree.LIVE_MOST`` re-shows the last page from the
store once they are many, and ``LIVE_NEAR_SCREENS`` above it).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from textual.geometry import Region
from textual.widget import Widget

from . import paging
from .gaps import Gaps
from .holding import Hold
from .paging import AHEAD_AFTER, AHEAD_SCREENS, FIRST_PAGES, MOST_PAGES, NEAR_SCREENS, Pane, Run, exchanges, paginate
from .placement import Places
from .predraw import Predraw
from .stillness import IDLE_TIMER, Stillness

if TYPE_CHECKING:
    from textual.timer import Timer

    from ..store.pages import OutlineEntry
    from ..store.transcripts import Store

__all__ = ["Window"]

class Window:
    def __init__(self, transcript: Pane, still: Stillness) -> None:
        self.transcript = transcript
        #: When the person last paged, scrolled or typed (what may be needed next waits for a pause).
        self.still = still
        self._ahead: Timer | None = None
        self.store: Store | None = None
        self.conversation = ""
        self.outline: list[OutlineEntry] = []
        self.pages: list[tuple[int, int]] = []
        #: entry number → its index in the outline; each page's first index
        self._index, self._starts = paging.SeqIndex([]), list[int]()
        #: page number → its widgets, for the pages mounted (in the transcript in page order)
        self.mounted: dict[int, list[Widget]] = {}
        #: page number → the entries it registered in the transcript, and its exchanges
        self._seqs: dict[int, list[int]] = {}
        self.runs: dict[int, list[Run]] = {}
        #: The session's own copy of the path's last entry (see ``open``).
        self._live: Any = None
        #: Where widgets were at the last layout.
        self.places = Places()
        #: The gaps between pages mounted that are not neighbours.
        self.gaps = Gaps(transcript, self.places)
        #: The widget whose place on screen must not move while pages come and go.
        self.hold = Hold(transcript, self.places.of)
        #: The lines of what is near the view (or at an end), drawn once the window has it mounted.
        self.predraw = Predraw(transcript, still, lambda: transcript.children, self.places.of)
        self._paging = False
        #: The first and last page come without waiting for the view to leave the end (``open``).
        self._ends = True
        #: Where the view was at the last scroll (``Gaps.stop_at``), and whether a jump is under way.
        self._last_y: float | None = None
        self._jumping = False
        #: Held back until a reopen's first screen is painted (``hold_back``).
        self._held = False

    # -- what is mounted ------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.store is not None and bool(self.pages)

    @property
    def detached(self) -> bool:
        """The last page is not mounted (the conversation was opened at an earlier entry)."""
        return self.active and len(self.pages) - 1 not in self.mounted

    @property
    def first(self) -> int:
        return min(self.mounted) if self.mounted else 0

    @property
    def end(self) -> int:
        return max(self.mounted) + 1 if self.mounted else len(self.pages)

    def pinned(self) -> set[int]:
        """The pages that stay once mounted: the first and the last (Home and End only scroll); at the
        end of a live sitting only the last (the first comes back when the view leaves the end)."""
        return {len(self.pages) - 1} if self.live_end() else {0, len(self.pages) - 1}

    def live_end(self) -> bool:
        """A live sitting goes on at its end, which the view follows (``open``'s ``ends``)."""
        return not self._ends and self.transcript.held_at_end()

    def page_of(self, seq: int) -> int | None:
        index = self._index.get(seq)
        if index is None:
            return None
        return bisect.bisect_right(self._starts, index) - 1

    def siblings(self, seq: int) -> tuple[int, int]:
        index = self._index.get(seq)
        return self.outline[index].siblings if index is not None else (1, 1)

    def _set_outline(self, outline: list[OutlineEntry], continues: bool = False) -> None:
        """``continues``: ``outline`` is the one held and what was stored since (cut and indexed on)."""
        self.outline, self.pages = outline, paging.paginate_on(outline, self.pages) if continues else paginate(outline)
        self._index = paging.SeqIndex(outline, self._index if continues else None)
        self._starts = [start for start, _ in self.pages]

    # -- opening -------------------------------------------------------------------------

    def open(self, store: Store, conversation: str, head: int | None, around: int | None,
             live: Any = None, outline: list[OutlineEntry] | None = None, ends: bool = True) -> None:
        """The path to ``head`` read as an outline (or ``outline``, already read); the page of entry
        ``around`` (else the last) mounted. ``live``: the session's own copy of the last entry, shown
        instead of the store's (a stored call awaiting approval is answered on that copy, and its card
        must see it change). ``ends``: the first and last page come as soon as the screen is drawn
        (Home and End are scrolls from the start); else once the view leaves the end (a live sitting
        shown again from the store, ``tree.LIVE_MOST``: it goes on at the end, and the page would be
        built for nothing after every few exchanges)."""
        self.store, self.conversation = store, conversation
        self._ends = ends
        self._live = live
        self._set_outline(outline if outline is not None else store.outline(conversation, head))
        self.mounted.clear()
        self._seqs.clear()
        self.runs.clear()
        self.gaps.clear()
        self._last_y, self._jumping = None, False
        self.places.forget()
        target = self.page_of(around) if around is not None else None
        last = len(self.pages) - 1 if target is None else target
        numbers = list(range(max(0, last + 1 - FIRST_PAGES), last + 1))
        if numbers:
            widgets: list[Widget] = []
            for number in numbers:
                widgets += self._build(number)
            self.transcript.mount_all(widgets)
            self._paging = True

    def reset(self) -> None:
        """The transcript's widgets all went (``Transcript.reset``): nothing is mounted, nothing paged."""
        self.store = None
        self._live = None
        self._set_outline([])
        self.mounted.clear()
        self._seqs.clear()
        self.runs.clear()
        self.gaps.clear()
        self.hold.release()
        self._last_y, self._jumping = None, False
        self.places.forget()

    def adopt(self, store: Store, conversation: str, outline: list[OutlineEntry], runs: list[Run]) -> None:
        """``runs``, the widgets a live sitting built for finished exchanges after the last page, are the
        exchanges of the path ``outline`` ends with (``adopting.py``): the window pages them from now on,
        as a sitting that goes on at its end (``open``'s ``ends``)."""
        continues = self.active
        if not continues:
            self.store, self.conversation, self._live = store, conversation, None
        self._ends = False
        self._set_outline(outline, continues)
        for run in runs:
            number = self.page_of(run.seqs[0])
            assert number is not None
            self.runs.setdefault(number, []).append(run)
            self.mounted.setdefault(number, []).extend(run.widgets)
            self._seqs.setdefault(number, []).extend(run.seqs)
        self.transcript.call_after_refresh(self._between_turns)

    def _between_turns(self) -> None:
        """What a sitting at its end no longer needs goes while no turn runs (``_trim_live``)."""
        if not self._paging and not self._held:
            self.scrolled()

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
        parts = exchanges(items)
        runs: list[Run] = []
        for n, part in enumerate(parts):  # an exchange at a time: one may be drawn light (``lights.py``)
            widgets, seqs = self.transcript.build_items(part, last=last and n == len(parts) - 1)
            runs.append(Run(widgets, part, seqs))
        self.runs[number] = runs
        self.mounted[number] = [widget for run in runs for widget in run.widgets]
        self._seqs[number] = [seq for run in runs for seq in run.seqs]
        return self.mounted[number]

    # -- jumps -------------------------------------------------------------------------

    def reveal(self, seq: int) -> bool:
        """Entry ``seq``'s page mounted (where it belongs among the pages mounted; the ones far from it
        go once its screen is drawn); False: not on this path."""
        number = self.page_of(seq)
        if number is None or number in self.mounted:
            return number is not None
        self.load(number)
        self._settle()
        return True

    def to_top(self) -> None:
        """Home: the first page mounted (already, once the view left the end: the caller only scrolls).
        Nothing else comes or goes until the screen at the top is drawn (``_settle``)."""
        if not self.active:
            return
        if 0 not in self.mounted:
            self.load(0)
            self.hold.release()
        self._settle()

    def to_end(self) -> bool:
        """End: the last page mounted; True when it had to come (read again from the store, with what
        was stored since). Mounted already, the caller only scrolls; nothing else comes or goes until
        the screen at the end is drawn (``_settle``)."""
        if not self.active:
            return False
        came = False
        if self.detached:
            self._refresh_outline()
            if self.detached:
                self.load(len(self.pages) - 1)
                self.hold.release()
                came = True
        self._settle()
        return came

    def _settle(self) -> None:
        """After a jump: nothing more is mounted or dropped until its screen is drawn (the pages around
        it, and dropping the far ones, come in the frames after); its scroll may cross gaps."""
        self._paging = self._jumping = True
        self.transcript.call_after_refresh(self._settled)

    def _settled(self) -> None:
        self._paging = self._jumping = False
        self._last_y = self.transcript.scroll_y
        self.scrolled()

    def hold_back(self) -> None:
        """Nothing more is mounted or dropped by scrolling until ``go_on`` (a reopen's first screen)."""
        self._held = True

    def go_on(self) -> None:
        if self._held:
            self._held = False
            self.scrolled()

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

    def scrolled(self, by_user: bool = False) -> None:
        """The page the view needs next comes (``wanted``); with none wanted, far pages go (``_trim``).
        ``by_user``: the person moved the view (a key, the wheel, the scrollbar), and it stops at a gap
        it would have crossed (``Gaps.stop_at``) until the pages behind the gap come."""
        last, self._last_y = self._last_y, self.transcript.scroll_y
        if by_user and last is not None and not self._jumping and self.gaps.stop_at(last):
            self._last_y = self.transcript.scroll_y
        if not self.active or self._paging or self._held:
            return
        if by_user:
            # what the move needs comes after its screen is drawn (the key waits for no page)
            self._paging = True
            self.transcript.call_after_refresh(self._after_layout)
            return
        if self._unplaced():
            self._paging = True  # a page is still being mounted: its layout (``laid_out``) calls again
            return
        number = self.wanted()
        if number is not None:
            self.load(number)
        else:
            self._trim()
            self.predraw.begin()

    def where(self, widget: Widget) -> Region:
        """Where ``widget`` is in the transcript, as of the last layout (``placement.py``)."""
        return self.places.of(widget)

    @property
    def paging(self) -> bool:
        """A page is coming or a jump settling (what is mounted is about to move)."""
        return self._paging

    # -- holding the view still (``holding.py``) --------------------------------------------

    def hold_view(self) -> None:
        """Keep what is on screen where it is while widgets come, go or are swapped (unless held already)."""
        if self.hold.pin is None:
            self.hold.view(self.mounted)

    def replace(self, old: list[Widget], new: list[Widget]) -> None:
        """The run ``old`` of a mounted page's widgets is shown by ``new`` now (``lights.py``)."""
        for widgets in self.mounted.values():
            if old and old[0] in widgets:
                at = widgets.index(old[0])
                widgets[at:at + len(old)] = new
                break
        self.hold.swapped(old, new[0])
        self.places.forget()

    def _unplaced(self) -> bool:
        """A page or gap mounted has not been laid out yet (where it is is not known)."""
        for widgets in self.mounted.values():
            if not (self.places.of(widgets[0]).height or self.places.of(widgets[-1]).height):
                return True
        return self.gaps.unplaced()

    def wanted(self) -> int | None:
        """The page to mount next: what fills ``NEAR_SCREENS`` around the view (``_reach``); then
        the first and the last page (pinned: Home and End are scrolls from then on), once the window
        opened or the view left the end (``open``'s ``ends``); then, once the person has been still
        ``AHEAD_AFTER`` seconds, what fills ``AHEAD_SCREENS`` around the view, while fewer than
        ``MOST_PAGES`` are mounted beside the pinned ones (more would only be dropped again,
        ``_trim``). A live sitting at its end goes on there: ``LIVE_NEAR_SCREENS`` above it, nothing more."""
        height = max(self.transcript.size.height, 1)
        live_end = self.live_end()
        number = self._reach((paging.LIVE_NEAR_SCREENS if live_end else NEAR_SCREENS) * height)
        if number is not None or live_end:
            return number
        last = len(self.pages) - 1
        for number in (0, last):
            if number not in self.mounted:
                return number
        pinned = self.pinned()
        if sum(number not in pinned for number in self.mounted) >= MOST_PAGES:
            return None
        number = self._reach(AHEAD_SCREENS * height)
        if number is None:
            return None
        still = self.still.still_for()
        if still < AHEAD_AFTER:
            if self._ahead is None:
                self._ahead = self.transcript.set_timer(AHEAD_AFTER - still, self._still, name=IDLE_TIMER)
            return None
        return number

    def _still(self) -> None:
        """The pause ``wanted`` waited for (or the person moved again: it waits again)."""
        self._ahead = None
        if not self._paging and not self._held:
            self.scrolled()

    def _reach(self, margin: float) -> int | None:
        """The page that brings what is mounted to ``margin`` rows above and below the view: the one
        before what is mounted when its top is nearer than that, the one after it when its bottom is
        (the last page not mounted), the one that fills a gap that near from the side the view is on."""
        transcript = self.transcript
        numbers = sorted(self.mounted)
        if not numbers:
            return None
        y = transcript.scroll_y
        last = len(self.pages) - 1
        if numbers[0] > 0 and y < margin:
            return numbers[0] - 1
        if numbers[-1] < last and y > transcript.max_scroll_y - margin:
            return numbers[-1] + 1
        return self.gaps.fill(numbers, margin)

    def load(self, number: int) -> None:
        """Page ``number`` mounted where it belongs among the pages mounted: after its neighbour above,
        else before the next page mounted (after the gap between them); the view held where it was.
        (Mounting a page in pieces over several frames was tried: each piece costs a layout and a
        rebuild of Textual's map of every widget, so a key waited longer, not shorter.)"""
        numbers = sorted(self.mounted)
        at = bisect.bisect_left(numbers, number)
        above = numbers[at - 1] if at > 0 else None
        below = numbers[at] if at < len(numbers) else None
        widgets = self._build(number)
        if above is not None and (above == number - 1 or below is None):
            self.hold_view()
            if above == number - 1:
                self.gaps.came_below(number)
            self.transcript.mount_all(widgets, after=self.mounted[above][-1])
        elif below is not None:
            if self.hold.pin is None:
                # what is below stays where it is: the page grows upwards (filling a gap above the
                # view from below pushes the gap further up, never into the view)
                self.hold.widget(self.mounted[below][0])
            self.transcript.mount_all(widgets, before=self.mounted[below][0])
        else:
            self.transcript.mount_all(widgets)
        self.gaps.fix(self.mounted)
        self._paging = True

    def laid_out(self) -> None:
        """The transcript was laid out again (its virtual size changed): the view held still;
        after a page came, another while the window does not reach far enough."""
        self.places.forget()
        self.hold.still()
        self.transcript.call_after_refresh(self._after_layout)

    def _after_layout(self) -> None:
        """Where the pages and gaps are, learnt once the frame is drawn (Textual's map of every widget
        is usually still whole then; the next scroll throws it away, and a key would wait for its
        rebuild, ``placement.py``); then what the view needs next, after a page came or the person scrolled
        (the key's own frame waited for no page)."""
        if not self.active:
            return
        for widgets in self.mounted.values():
            self.places.of(widgets[0])
            self.places.of(widgets[-1])
        self.gaps.learn()
        if self._paging:
            self._paging = False
            self.scrolled()

    def _trim(self) -> None:
        """While more than ``MOST_PAGES`` are mounted beside the pinned ones, the one farthest from the
        view goes, once it is three screens away (loads come within two: no page comes and goes)."""
        transcript = self.transcript
        height = max(transcript.size.height, 1)
        y = transcript.scroll_y
        if self.live_end():
            self._trim_live(y - paging.LIVE_NEAR_SCREENS * height)
            return
        top, bottom = y - 3 * height, y + 4 * height
        pinned = self.pinned()

        def distance(number: int) -> float:
            widgets = self.mounted[number]
            start, end = self.places.of(widgets[0]).y, self.places.of(widgets[-1]).bottom
            return start - bottom if start >= bottom else top - end if end <= top else -1

        while True:
            loose = [number for number in self.mounted if number not in pinned]
            if len(loose) <= MOST_PAGES:
                return
            number = max(loose, key=distance)
            if distance(number) < 0:
                return
            self.hold_view()
            self._forget(number)
            self.gaps.fix(self.mounted)

    def _trim_live(self, top: float) -> None:
        """A live sitting at its end: the pages wholly above ``top`` go (the view follows the end, which
        holds it), between turns; the widgets lived through turns, so were frozen (``collector``)."""
        if self.transcript.busy():
            return
        last = len(self.pages) - 1
        for number in sorted(self.mounted):
            if number == last or self.places.of(self.mounted[number][-1]).bottom > top:
                break
            self._forget(number, frozen=True)
        self.gaps.fix(self.mounted)

    def _forget(self, number: int, frozen: bool = False) -> None:
        widgets = self.mounted.pop(number)
        widgets = [*widgets, *self.gaps.went(number, [n for n in self.mounted if n < number])]
        self.runs.pop(number, None)
        self.transcript.forget(self._seqs.pop(number, []))
        self.transcript.remove_widgets(widgets, frozen=frozen)
