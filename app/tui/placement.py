"""Where the transcript's widgets were at its last layout.

Textual answers ``widget.virtual_region`` from its map of every widget,
which a scroll throws away (``Compositor.reflow_visible``) and the next
question rebuilds — tens of milliseconds with a window of pages mounted, on
every key that scrolls; scrolling moves no widget in the transcript. And the
last layout's answer is the one the scroll position agrees with: after pages
came or went and before the layout (and the hold that keeps the view still),
Textual's map would already place what is below them elsewhere, and a gap
could seem above a view it is below. So the window (``window.py``) asks here,
and forgets what it learnt when widgets come, go or are laid out again.
"""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget

from .capture import placed

__all__ = ["Places"]


class Places:
    def __init__(self) -> None:
        self._regions: dict[Widget, Region] = {}

    def of(self, widget: Widget) -> Region:
        """``widget.virtual_region`` as of the last layout, kept until ``forget``."""
        region = self._regions.get(widget)
        if region is None:
            region = widget.virtual_region
            if not region.height and widget.is_attached:  # mounted in a layout that kept the size (``placed``)
                region = placed(widget)
            self._regions[widget] = region
        return region

    def forget(self) -> None:
        """Widgets came, went or were laid out again: where they are is asked anew."""
        self._regions.clear()
