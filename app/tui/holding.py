"""Keeping what is on screen where it is while a window's pages come and go above it.

Widgets mounted or removed above the view move everything below them, and
a page's prose is written after its own mount, so it grows over a frame or
two. The window (``window.py``) pins one widget (the first reaching into
the view, a page's neighbour below it, or a jump's target at the top) and
scrolls back to it after each layout, until the person moves the view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.geometry import Region
    from textual.widget import Widget

    from .paging import Pane

__all__ = ["Hold"]


class Hold:
    def __init__(self, transcript: Pane, region: Callable[[Widget], Region]) -> None:
        self.transcript = transcript
        #: Where widgets are as of the last layout (``Window._region``).
        self._region = region
        #: The widget whose place on screen must not move, and where it was (rows below the top).
        self.pin: tuple[Widget, int] | None = None

    def widget(self, widget: Widget) -> None:
        """Keep ``widget`` where it is on screen (not while the view follows the end: see ``view``)."""
        if not self.transcript.held_at_end() and self._region(widget).height:
            self.pin = (widget, self._region(widget).y - round(self.transcript.scroll_y))

    def view(self, mounted: dict[int, list[Widget]]) -> None:
        """Keep what is on screen where it is while pages come and go (the first widget of ``mounted``
        reaching into the view). Not while the view follows the end: the anchor keeps the bottom where
        it is as pages come and go above and as what is below grows (a reply reopened writes its prose
        after its own mount), and holding a widget there would release it, leaving the view short of
        the end once what is below grew."""
        transcript = self.transcript
        if transcript.held_at_end():
            return
        y = round(transcript.scroll_y)
        for number in sorted(mounted):
            widgets = mounted[number]
            if self._region(widgets[-1]).bottom <= y:
                continue
            for widget in widgets:
                region = self._region(widget)
                if region.bottom > y:
                    self.pin = (widget, region.y - y)
                    return

    def swapped(self, old: list[Widget], new: Widget) -> None:
        """The widgets ``old`` are shown by ``new`` from its top now (an exchange drawn light, or
        back): one of them held, ``new`` is, where the first of them was."""
        if self.pin is not None and self.pin[0] in old:
            self.pin = (new, self.pin[1] - (self._region(self.pin[0]).y - self._region(old[0]).y))

    def pin_top(self, widget: Widget) -> None:
        """A jump: ``widget`` at the top of the view, and kept there while pages come in around it."""
        self.pin = (widget, 0)
        self.still()

    def release(self) -> None:
        """The user moved the view: nothing is held any more."""
        self.pin = None

    def still(self) -> None:
        """After a layout: the pinned widget back where it was."""
        pin = self.pin
        if pin is None:
            return
        widget, offset = pin
        if not widget.is_attached:
            self.pin = None
            return
        region = self._region(widget)
        if not region.height:
            return  # not laid out yet (just mounted): the layout that places it calls again
        y = region.y - offset
        if y != round(self.transcript.scroll_y):
            self.transcript.hold(y)
