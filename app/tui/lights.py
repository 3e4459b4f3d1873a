"""Which finished exchanges of a long conversation are drawn light, and when they come back.

The window (``window.py``) bounds how many pages are mounted; this bounds
what each costs. Once the view has been still ``LIGHT_AFTER`` seconds, an
exchange of a mounted page a screen or more away from it, finished and
showing only what its stored entries show, is drawn by one
``LightExchange`` from the lines its forty-odd widgets drew (``capture.py``)
and those widgets go: each layout, map and style pass then has a few
hundred widgets fewer, and memory holds lines instead of widgets. What is on
screen comes back as full widgets when the view is still near it (so
selecting text, hovering, links and the copy picker see widgets), at once
when a light one is clicked, focused or needed (a jump to one of its entries,
a card's arguments asked for), and all of them when the width or the theme
changes (the lines were drawn for the old ones).

Not drawn light: the path's last exchange (a stored call awaiting approval
is answered on it, and an exchange that goes on moves its usage line), the
selected entry, one holding focus, anything the person opened (a card's
details, its whole arguments, a resource), anything still running or
waiting, and pictures (drawn by the terminal, not in cells).
"""

from __future__ import annotations

import asyncio
import time
from functools import cache, partial
from typing import TYPE_CHECKING, Any, Protocol

from textual.widget import Widget
from textual.widgets import Collapsible
from textual.widgets.collapsible import CollapsibleTitle

from widgets.light_exchange import LightExchange

from .capture import lines_of
from .paging import Pane, Run
from .stillness import IDLE_TIMER

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from textual.app import App
    from textual.geometry import Region, Size
    from textual.timer import Timer
    from textual.widget import AwaitMount

    from ..stream import ToolCallBlock
    from .window import Window

__all__ = ["Lights", "LIGHT_AFTER", "LIGHT_EACH", "LIGHT_NEXT"]

#: Seconds the person must have left the view and the input box alone before exchanges are drawn
#: light: reading, not paging or typing. Drawing one costs a first render of its widgets (its code
#: highlighted, ~10 ms) and a layout, which a key arriving then waits for; measured with
#: ``make bench-long``, at 1 s those waits landed on PageUp (p95 35 ms against 18 ms without).
LIGHT_AFTER = 3.0
#: Exchanges drawn light at a time, and the seconds before the next while the person stays idle: a
#: key never waits behind more than one.
LIGHT_EACH = 1
LIGHT_NEXT = 0.05


class Transcript(Pane, Protocol):
    """What the lights need of the transcript (``Transcript``, which owns them)."""

    @property
    def app(self) -> App[Any]: ...

    @property
    def scrollable_content_region(self) -> Region: ...

    @property
    def virtual_size(self) -> Size: ...

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any: ...

    def mount(self, *widgets: Widget, before: Widget | None = None) -> AwaitMount: ...


class Lights:
    def __init__(self, transcript: Transcript, window: Window) -> None:
        self.transcript = transcript
        self.window = window
        self._due: Timer | None = None
        self._moved = 0.0
        self._mounting: set[asyncio.Future[None]] = set()

    # -- when -----------------------------------------------------------------------

    @property
    def due(self) -> bool:
        """A still moment is awaited (more may be drawn light)."""
        return self._due is not None

    def moved(self) -> None:
        """The view moved, what is mounted changed or the person typed: the next still moment
        decides again."""
        self._moved = time.monotonic()
        transcript = self.transcript
        if self._due is None and transcript.is_attached and self.window.active \
                and transcript.virtual_size.height > 3 * transcript.size.height:  # else nothing is ever far
            self._due = transcript.set_timer(LIGHT_AFTER, self._still, name=IDLE_TIMER)

    def _still(self) -> None:
        self._due = None
        window, transcript = self.window, self.transcript
        if not window.active or transcript.busy():
            return  # the turn's end moves the view or grows the transcript: ``moved`` comes again
        still = time.monotonic() - self._moved
        if still < LIGHT_AFTER or window.paging:
            self._due = transcript.set_timer(max(LIGHT_AFTER - still, 0.05), self._still, name=IDLE_TIMER)
            return
        height = max(transcript.size.height, 1)
        y = round(transcript.scroll_y)
        if self._light_far(y - height, y + 2 * height):  # more to draw: a few at a time, while still
            self._due = transcript.set_timer(LIGHT_NEXT, self._still, name=IDLE_TIMER)

    # -- drawing light -------------------------------------------------------------------

    def _light_far(self, top: int, bottom: int) -> bool:
        """The first ``LIGHT_EACH`` exchanges wholly outside ``top``–``bottom`` that may be, drawn
        light; True: more may be."""
        window, transcript = self.window, self.transcript
        width = transcript.scrollable_content_region.width
        last_page = len(window.pages) - 1
        lit: list[tuple[Run, LightExchange]] = []
        for number, runs in sorted(window.runs.items()):
            for index, run in enumerate(runs):
                if run.light is not None or run.plain or (number == last_page and index == len(runs) - 1):
                    continue
                if self._overlaps_run(run, top, bottom) or not self._may(run):
                    continue
                parent = run.widgets[0].parent  # the transcript, as a widget
                drawn = lines_of(parent, run.widgets, CollapsibleTitle) if isinstance(parent, Widget) else None
                if drawn is None or drawn[1] != width:
                    run.plain = True  # drawn otherwise than the screen would show it: it stays widgets
                    continue
                lines, _, titles = drawn
                focusable = any(w.focusable for widget in run.widgets for w in _inside(widget))
                light = LightExchange(lines, width, run.entries, run.seqs,
                                      (run.widgets[0].styles.margin.top, run.widgets[-1].styles.margin.bottom),
                                      focusable, titles)
                lit.append((run, light))
                if len(lit) == LIGHT_EACH:
                    break
            if len(lit) == LIGHT_EACH:
                break
        if not lit:
            return False
        window.hold_view()
        mounting = []
        for run, light in lit:
            mounting.append(transcript.mount(light, before=run.widgets[0]))
            transcript.forget(run.seqs)
            old, run.widgets, run.light = run.widgets, [light], light
            window.replace(old, [light])
            _drop(transcript, old)
        self._laid_out_after(mounting)
        return len(lit) == LIGHT_EACH

    def _may(self, run: Run) -> bool:
        """The run shows only what its stored entries show again, and nothing of it is in use."""
        from widgets.prose import ProseBlock
        from widgets.tool_card import ToolCard

        focused = self.transcript.app.focused
        for widget in run.widgets:
            if not isinstance(widget, _lightable()) or widget.has_class("-selected"):
                return False
            for inner in _inside(widget):
                if inner is focused or isinstance(inner, _kept()):
                    return False
                if isinstance(inner, Collapsible) and not inner.collapsed:
                    return False  # opened by the person: a rebuild would fold it again
                if isinstance(inner, ToolCard) and not inner.at_rest:
                    return False
                if isinstance(inner, ProseBlock) and not inner.settled:
                    return False
        return True

    # -- coming back -------------------------------------------------------------------

    def expand(self, light: LightExchange, focus: bool = False, toggle: int | None = None) -> list[Widget]:
        """``light``'s full widgets built again from its entries, in its place (registered as showing
        them: a caller can use them at once, mounted by the next frame)."""
        window, transcript = self.window, self.transcript
        run = next((run for runs in window.runs.values() for run in runs if run.light is light), None)
        if run is None or not light.is_attached:
            return []
        if light.has_focus:  # it goes: the focus must not go on to a widget anywhere (Textual scrolls to it)
            transcript.app.screen.set_focus(None)
        widgets, _ = transcript.build_items(run.entries, last=False)
        window.hold_view()
        mounting = transcript.mount_all(widgets, before=light)
        run.widgets, run.light = widgets, None
        window.replace([light], widgets)
        _drop(transcript, [light])
        then = [partial(_focus_first, widgets)] if focus else []
        if toggle is not None:
            then.append(partial(_open_title, widgets, toggle))
        self._laid_out_after([mounting], then)
        return widgets

    def _laid_out_after(self, mounting: list[AwaitMount], then: Sequence[Callable[[], object]] = ()) -> None:
        """Once what came is mounted and laid out, the window learns where it is and holds the view
        (the same height as what went: the transcript's size does not change, so nothing else says
        so); then ``then``, in order (what the person asked of the widgets that came)."""
        def laid_out() -> None:
            self.window.laid_out()
            for call in then:
                call()

        async def after() -> None:
            for mount in mounting:
                await mount
            # laid out in full: a layout that keeps the transcript's size may leave Textual's map of
            # every widget without the ones that came, and a widget asking where it is (a card opened
            # scrolls itself into view) would be told nowhere
            self.transcript.refresh(layout=True)
            self.transcript.call_after_refresh(laid_out)

        task = asyncio.ensure_future(after())
        self._mounting.add(task)
        task.add_done_callback(self._mounting.discard)

    def expand_entry(self, seq: int) -> None:
        """Entry ``seq``'s widgets wanted (a jump, a selection): its exchange expanded when light."""
        light = next((light for light in self.lights() if seq in light.seqs), None)
        if light is not None:
            self.expand(light)

    def expand_call(self, call: ToolCallBlock, then: Callable[[ToolCallBlock], object]) -> bool:
        """The card of ``call`` wanted: its exchange expanded, and ``then(call)`` once its card is
        mounted; False: no light exchange holds it."""
        for light in self.lights():
            if any(block is call for block in light.calls()):
                self.expand(light)
                self.transcript.call_after_refresh(partial(then, call))
                return True
        return False

    def expand_all(self) -> None:
        """The width or the theme changed: the lines are not what the widgets would draw now."""
        for light in self.lights():
            self.expand(light)

    def resized(self) -> None:
        width = self.transcript.scrollable_content_region.width
        if any(light.width != width for light in self.lights()):
            self.expand_all()

    def lights(self) -> list[LightExchange]:
        """The light exchanges of the pages mounted (a page dropped or a reset takes its own with it)."""
        return [run.light for runs in self.window.runs.values() for run in runs if run.light is not None]

    def _overlaps_run(self, run: Run, top: int, bottom: int) -> bool:
        first, last = self.window.where(run.widgets[0]), self.window.where(run.widgets[-1])
        return not (first.height and last.height) or (last.bottom > top and first.y < bottom)


def _inside(widget: Widget) -> list[Widget]:
    return widget.walk_children(Widget, with_self=True)


def _focus_first(widgets: list[Widget]) -> None:
    """Focus was going to the exchange drawn light: it goes to the first of its widgets that takes it."""
    first = next((w for widget in widgets for w in _inside(widget) if w.focusable), None)
    if first is not None:
        first.focus()


def _open_title(widgets: list[Widget], toggle: int) -> None:
    """The folded title clicked on the exchange drawn light, opened on its widgets."""
    titles = [w for widget in widgets for w in _inside(widget) if isinstance(w, CollapsibleTitle)]
    if toggle < len(titles):
        titles[toggle].action_toggle_collapsible()


def _drop(transcript: Transcript, widgets: list[Widget]) -> None:
    """``widgets`` go, taking no room from now on: what shows them instead was mounted in their place
    just before, and a layout between the two (their removal takes a few frames) would show both."""
    for widget in widgets:
        widget.display = False
    transcript.remove_widgets(widgets)


@cache
def _lightable() -> tuple[type, ...]:
    """The widgets an exchange drawn light may be made of (its top-level ones); pictures and the chips
    that carry them are not (drawn by the terminal, not in cells). Imported when first asked (the
    reply's widgets come after the first frame)."""
    from widgets.branch_marker import BranchMarker
    from widgets.error_details import ErrorDetails
    from widgets.note import NoteBlock
    from widgets.prose import ProseBlock
    from widgets.reasoning import ReasoningBlock
    from widgets.tool_card import ToolCard
    from widgets.usage_line import UsageLine
    from widgets.user_message import UserMessage

    return (UserMessage, NoteBlock, BranchMarker, UsageLine, ProseBlock, ReasoningBlock, ToolCard, ErrorDetails)


@cache
def _kept() -> tuple[type, ...]:
    """Widgets that keep their exchange as widgets wherever they are in it."""
    from widgets.approval_prompt import ApprovalPrompt
    from widgets.elicitation_form import ElicitationForm
    from widgets.inline_image import InlineImage
    from widgets.resource_view import ResourceView

    return (ApprovalPrompt, ElicitationForm, InlineImage, ResourceView)

