"""The one-line ``PageGap`` between two mounted pages of a long conversation that are not neighbours.

The window (``window.py``) may mount pages that are not contiguous (the
pinned first and last, a jump's page): a gap stands for what is between, and
the person's scrolling stops short of it until the pages behind it come, so
what shows is never the far side of a gap. Kept apart from the window, which
decides which pages are mounted; this keeps the gaps in line with that.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import TYPE_CHECKING

from widgets.page_gap import PageGap

if TYPE_CHECKING:
    from textual.widget import Widget

    from .paging import Pane
    from .placement import Places

__all__ = ["Gaps"]


class Gaps:
    def __init__(self, transcript: Pane, places: Places) -> None:
        self.transcript = transcript
        self.places = places
        #: page number → the gap just below it (the next page mounted is not its neighbour)
        self.below: dict[int, Widget] = {}

    def clear(self) -> None:
        self.below.clear()

    def unplaced(self) -> bool:
        """A gap mounted has not been laid out yet (where it is is not known)."""
        return any(not self.places.of(gap).height for gap in self.below.values())

    def learn(self) -> None:
        """Where the gaps are, asked while Textual's map of every widget is whole (``Window._after_layout``)."""
        for gap in self.below.values():
            self.places.of(gap)

    def stop_at(self, last: float) -> bool:
        """The view moved from ``last`` onto or across a gap: held just short of it instead (the gap
        just below the view's last row going down, just above its top going up; the window then fills
        it from the view's side), so what shows is never the far side of a gap. A jump (Home, End, a
        search hit) crosses gaps: it is not the person's scrolling (the window does not ask)."""
        transcript = self.transcript
        y, height = transcript.scroll_y, max(transcript.size.height, 1)
        for gap in self.below.values():
            region = self.places.of(gap)
            if not region.height:
                continue
            if y > last and last <= region.y < y + height:  # going down, it came into the view or past it
                stop = max(0, region.y - height)
            elif y < last and y <= region.y < last + height:  # going up, the same
                stop = region.y + 1
            else:
                continue
            transcript.hold(round(stop))
            return True
        return False

    def fill(self, numbers: list[int], margin: float) -> int | None:
        """The page that fills a gap within ``margin`` rows of the view, from the side the view is on
        (``numbers``: the pages mounted, in order): the gap at or below the view's top (the view came
        from above) is filled at its place, the view held, so the view never passes it; above the
        view (it came from below), the page grows upwards from the one below it."""
        transcript = self.transcript
        y, height = transcript.scroll_y, max(transcript.size.height, 1)
        for above, gap in sorted(self.below.items()):
            gap_y = self.places.of(gap).y
            if y - margin < gap_y < y + height + margin:
                below = numbers[bisect.bisect_right(numbers, above)]
                return above + 1 if gap_y >= y else below - 1
        return None

    def came_below(self, number: int) -> None:
        """Page ``number`` was mounted just below its neighbour: the gap below that is now below it."""
        if number - 1 in self.below:
            self.below[number] = self.below.pop(number - 1)

    def went(self, number: int, above: list[int]) -> list[Widget]:
        """Page ``number`` goes (``above``: the pages still mounted above it): its gap stands below the
        nearest of them now, unless that has one; else the gap goes too (returned, to be removed)."""
        gap = self.below.pop(number, None)
        if gap is None:
            return []
        if above and max(above) not in self.below:
            self.below[max(above)] = gap
            return []
        return [gap]

    def fix(self, mounted: Mapping[int, list[Widget]]) -> None:
        """A gap between each two pages mounted that are not neighbours, and nowhere else."""
        numbers = sorted(mounted)
        wanted = {above for above, below in zip(numbers, numbers[1:], strict=False) if below > above + 1}
        gone = [self.below.pop(above) for above in list(self.below) if above not in wanted]
        if gone:
            self.transcript.remove_widgets(gone)
        for above in sorted(wanted - self.below.keys()):
            gap = self.below[above] = PageGap()
            below = numbers[bisect.bisect_right(numbers, above)]
            self.transcript.mount_all([gap], before=mounted[below][0])
