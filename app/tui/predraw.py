"""The lines of the widgets just out of view, drawn before a key scrolls them in.

Textual draws a widget's lines the first time it is on screen
(``Widget.render_lines``, through the widget's styles cache) and keeps them
until the widget changes. A PageUp onto a screen never shown drew its forty
widgets first: measured with ``make bench-long`` at 10 exchanges, 16 ms of
an 18 ms frame, where a screen shown before took 4–6 ms. So once the window
has mounted what it wants (``Window.scrolled`` finds nothing wanted) and the
person is still (``AHEAD_AFTER``; at once as a conversation opens, nobody
having moved), the widgets within ``AHEAD_SCREENS`` of the view draw their
lines, nearest first, then those of the first and the last screen (Home and
End scroll there: their pages stay mounted), ``STEP`` seconds of them per
turn of the event loop, so a key waits one step at most. Only lines are
drawn: nothing is mounted, laid out or moved, and a widget that changes
drops them, as it would have.

A widget must have a place in Textual's map to be drawn (its size is read
there); a scroll throws the map of what is off screen away and the first
question rebuilds it, which is why the drawing waits for a still moment.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from textual.geometry import Region, Size
from textual.widget import Widget

from .paging import AHEAD_AFTER, AHEAD_SCREENS, Pane
from .stillness import IDLE_TIMER

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from textual.timer import Timer

    from .stillness import Stillness

__all__ = ["Predraw", "STEP"]

#: Seconds of drawing per turn of the event loop (a widget's first lines cost 0.1–2 ms).
STEP = 0.004
#: Seconds between steps (what else waits on the event loop goes first; a Textual timer needs more than 0).
NEXT = 0.001


class Predraw:
    def __init__(self, transcript: Pane, still: Stillness, children: Callable[[], Iterable[Widget]],
                 where: Callable[[Widget], Region]) -> None:
        self.transcript = transcript
        self.still = still
        #: The transcript's widgets (its pages, a header above them, what a live sitting added), and where
        #: each is in the transcript.
        self._children = children
        self._where = where
        self._due: Timer | None = None
        #: What is left of this pass, nearest the view first; None: the next step looks anew.
        self._todo: list[Widget] | None = None
        #: The size each widget's lines were drawn at.
        self._drawn: WeakKeyDictionary[Widget, Size] = WeakKeyDictionary()

    @property
    def due(self) -> bool:
        return self._due is not None

    def begin(self) -> None:
        """The window has what it wants around the view: its lines are drawn once the person is still
        (what is near is looked for anew, the view or the pages having moved since the last pass)."""
        self._todo = None
        if self._due is None and self.transcript.is_attached:
            self._due = self.transcript.set_timer(max(AHEAD_AFTER - self.still.still_for(), NEXT), self._step,
                                                  name=IDLE_TIMER)

    def _step(self) -> None:
        self._due = None
        still = self.still.still_for()
        if still < AHEAD_AFTER:
            self._due = self.transcript.set_timer(AHEAD_AFTER - still, self._step, name=IDLE_TIMER)
            return
        if self.transcript.busy() or not self.transcript.is_attached:
            return  # a turn under way scrolls and grows the transcript; its end scrolls again (``begin``)
        if self._todo is None:
            self._todo = self._near()
        deadline = time.perf_counter() + STEP
        while self._todo and time.perf_counter() < deadline:
            self._draw(self._todo.pop())
        if self._todo:
            self._due = self.transcript.set_timer(NEXT, self._step, name=IDLE_TIMER)

    def _near(self) -> list[Widget]:
        """The transcript's widgets within ``AHEAD_SCREENS`` of the view, then those of the first and
        the last screen (Home and End scroll there: the first and last pages stay mounted), farthest
        first (the list is taken from its end)."""
        height = max(self.transcript.size.height, 1)
        y = self.transcript.scroll_y
        top, bottom = y - AHEAD_SCREENS * height, y + (AHEAD_SCREENS + 1) * height
        end = self.transcript.max_scroll_y
        beyond = (AHEAD_SCREENS + 1) * height  # the ends come after all that is near
        found: list[tuple[float, Widget]] = []
        for widget in self._children():
            region = self._where(widget)
            if not region.height:
                continue
            if region.bottom > top and region.y < bottom:
                distance = max(region.y - (y + height), y - region.bottom, 0)
            elif region.y < height or region.bottom > end:
                distance = beyond
            else:
                continue
            found.extend((distance, each) for each in widget.walk_children(Widget, with_self=True))
        found.sort(key=lambda pair: -pair[0])
        return [widget for _, widget in found]

    def _draw(self, widget: Widget) -> None:
        """``widget``'s lines, as the screen would draw them, unless drawn at this size already."""
        if not widget.is_attached or not widget.display:
            return
        size = widget.region.size
        if not size or self._drawn.get(widget) == size:
            return
        widget.render_lines(Region(0, 0, size.width, size.height))
        self._drawn[widget] = size
