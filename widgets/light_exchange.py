"""A finished exchange drawn from the lines its widgets drew: one widget in place of forty.

A stored exchange is a user message, a reply's Markdown (a widget per list
item and code block), two or three cards (a Collapsible and six lines each)
and a usage line: about forty widgets, each laid out, mapped and styled
again whenever the transcript is, and each holding its styles and caches.
Once an exchange is finished and the view has left it, the transcript
(``app/tui/lights.py``) takes the lines those widgets drew (``capture.py``:
exactly what the screen showed, cell for cell) and puts this in their place:
it only hands those lines back, so it costs what its lines cost.

It stands for its entries and does nothing with them: a click on it, focus
reaching it, or the transcript needing one of its widgets (a jump to an
entry, a card's arguments, a new width or theme) asks for it to be expanded
(``Wanted``), and the transcript builds the full widgets again from the
entries it keeps. Links and actions in the lines are dropped (``meta``):
nothing in it is clickable but the whole, which expands.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["LightExchange"]


class LightExchange(Widget):
    DEFAULT_CSS = """
    LightExchange {
        height: auto;
        width: 1fr;
    }
    """

    #: A click expands it (``on_click``) and is not a focus: focus here would leave with the widget,
    #: and Textual would give it to the next focusable widget anywhere, scrolling there.
    FOCUS_ON_CLICK = False

    class Wanted(Message):
        """The full widgets are wanted again (``focus``: and the first that takes focus is focused;
        ``toggle``: and the ``toggle``-th folded title in them is opened, the one clicked)."""

        def __init__(self, light: LightExchange, focus: bool, toggle: int | None) -> None:
            super().__init__()
            self.light = light
            self.focus = focus
            self.toggle = toggle

    def __init__(self, lines: list[Strip], width: int, entries: list[Any], seqs: list[int],
                 margin: tuple[int, int], focusable: bool, titles: list[Region]) -> None:
        super().__init__()
        #: The lines, as drawn at ``width`` (links and actions dropped).
        self.lines = [line.discard_meta() for line in lines]
        self.width = width
        #: The stored entries it stands for, to build its widgets again, and their numbers.
        self.entries = entries
        self.seqs = seqs
        # the margins of its first and last widget, so what stands around it is where it was
        self.styles.margin = (margin[0], 0, margin[1], 0)
        #: Its widgets took focus (a card's title): Tab stops here and expands it.
        self.can_focus = focusable
        #: Where the titles of its folded parts (a card's "Full result") are drawn, in order.
        self.titles = titles
        self._asked = False

    def calls(self) -> list[Any]:
        """The tool calls of its entries, in order (the copy picker lists them as it lists cards)."""
        return [block for entry in self.entries for block in getattr(entry, "blocks", ())
                if block.type == "tool_call"]

    def want(self, focus: bool = False, toggle: int | None = None) -> None:
        """Ask for the full widgets (once)."""
        if not self._asked:
            self._asked = True
            self.post_message(self.Wanted(self, focus, toggle))

    # -- what Textual asks -------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if not 0 <= y < len(self.lines):
            return Strip.blank(width)
        line = self.lines[y]
        return line if width == self.width else line.crop_extend(0, width, None)

    def on_click(self, event: events.Click) -> None:
        """Expanded; a click on a folded title opens it too (one click, as on the widgets). On the
        click, the last event of the press: one after the expansion would land on its widgets."""
        event.stop()
        at = event.get_content_offset(self)
        hit = None if at is None else next((n for n, region in enumerate(self.titles) if region.contains_point(at)),
                                           None)
        self.want(toggle=hit)

    def on_focus(self) -> None:
        """Tab reached it: expanded, and the focus goes on to its first widget that takes it."""
        self.want(focus=True)
