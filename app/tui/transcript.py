"""The transcript view: the scroll container of the conversation's entries.

It mounts what is shown, in order: a window of the stored entries when a
conversation is (re)opened (``show_stored``: pages read from the store, see
``window.py``; ``render_items`` where there is no store), and the blocks of a
live turn as they open and grow (``open_block``, ``grow``). It keeps which
entries the path shown holds (``order``, ``kinds``) and which widgets show
the mounted ones (``entries``: the store's entry number → its user message
widget or its turn index) so the tree controller can select them
(``reveal`` mounts an entry's page first). Widgets only render; this decides
which widget shows what.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from widgets.branch_marker import BranchMarker
from widgets.error_details import ErrorDetails
from widgets.light_exchange import LightExchange
from widgets.note import NoteBlock
from widgets.usage_line import UsageLine
from widgets.user_message import UserMessage

from .lights import Lights
from .pictures import attachment_widgets
from .stillness import Stillness
from .sweeper import Sweeper
from .tally import Tally
from .window import Window

if TYPE_CHECKING:

    from widgets.tool_card import ToolCard

    from ..chat.events import AttemptStarted, BlockGrew, BlockOpened, CallState, TurnSettled
    from ..chat.session import ChatSession
    from ..stream import ToolCallBlock
    from .host import ChatHost

# The widgets of a reply (Markdown and markdown-it, the forming preview) are
# imported where they are first used, not before the first frame.

__all__ = ["Transcript"]


class Transcript(VerticalScroll):
    #: Given by ``attach`` (a deferred start opens the session after the first frame).
    session: ChatSession

    def __init__(self, *children: Widget, host: ChatHost, tally: Tally, marker: Static) -> None:
        super().__init__(*children, id="transcript")
        self.host = host
        #: The bar below saying new output arrived while the user reads further up.
        self.marker = marker
        #: What the conversation cost (the exchange shown last is set from stored turns here).
        self.tally = tally
        #: turn index → the widgets of its current attempt, in block order
        self.turn_widgets: dict[int, dict[int, Widget]] = {}
        #: The entries shown, in order: the store's entry number → its user message widget or its turn index.
        self.entries: dict[int, Widget | int] = {}
        #: The line below the exchange shown last (model · tokens).
        self.usage_line: UsageLine | None = None
        #: Every entry of the path shown, in order (mounted or not), and its kind (user or turn).
        self.order: list[int] = []
        self.kinds: dict[int, str] = {}
        #: When the person last paged, scrolled or typed.
        self.still = Stillness()
        #: Which pages of a stored conversation are mounted.
        self.window = Window(self, self.still)
        self._holding = False
        #: Collects what removed widgets held, while the person reads.
        self.sweeper = Sweeper(self, self.busy)
        #: Which finished exchanges are drawn light (one widget of their lines).
        self.lights = Lights(self, self.window)

    def attach(self, session: ChatSession) -> None:
        self.session = session

    def add(self, widget: Widget) -> None:
        """A widget at the end (a window scrolled far back comes back to the end first)."""
        if self.window.detached and not self.busy():
            self.window.to_end()
        self.mount(widget)

    def note(self, text: str, kind: str = "quiet") -> None:
        self.add(NoteBlock(text, kind))

    def reset(self) -> None:
        """Every widget goes (the conversation itself is unchanged)."""
        self.sweeper.thorough = True
        self.remove_widgets(list(self.children))
        self.turn_widgets.clear()
        self.entries.clear()
        self.order.clear()
        self.kinds.clear()
        self.window.reset()

    def set_header(self, widget: Widget) -> None:
        """A widget above the conversation (the welcome): pages are mounted below it (never all
        dropped: the first and last stay, ``Window.pinned``), so it stays."""
        self.add(widget)

    def busy(self) -> bool:
        return hasattr(self, "session") and self.session.busy

    def head(self) -> int | None:
        """The entry the path shown ends at."""
        if self.session.position is not None:
            return self.session.position
        return self.session.stored.head if self.session.stored is not None else None

    def remove_widgets(self, widgets: list[Widget], frozen: bool = False) -> None:
        """``widgets`` go; what they held is collected once they are gone (``Sweeper``; ``frozen``: thoroughly)."""
        self.sweeper.thorough |= frozen
        self.sweeper.remove(widgets)

    def forget(self, seqs: list[int]) -> None:
        """These entries' widgets went (their page was dropped)."""
        for seq in seqs:
            entry = self.entries.pop(seq, None)
            if isinstance(entry, int):
                self.turn_widgets.pop(entry, None)

    def reorder(self, seqs: list[int], kinds: dict[int, str]) -> None:
        """The path shown is ``seqs`` (read again from the store)."""
        self.order = list(seqs)
        self.kinds = dict(kinds)

    def _enter(self, seq: int, kind: str) -> None:
        if seq not in self.kinds:
            self.order.append(seq)
        self.kinds[seq] = kind

    # -- scrolling ----------------------------------------------------------------------

    def on_mount(self) -> None:
        self.anchor()
        self.watch(self, "scroll_y", self._scrolled, init=False)
        self.watch(self, "virtual_size", self._resized, init=False)
        self.watch(self.app, "theme", lambda _: self.lights.expand_all(), init=False)

    def on_resize(self) -> None:
        self.lights.resized()

    def on_light_exchange_wanted(self, message: LightExchange.Wanted) -> None:
        self.lights.expand(message.light, message.focus, message.toggle)

    def page(self, direction: int) -> None:
        """A screen up or down, scrolled at once: Textual's ``scroll_page_up`` waits for the next refresh,
        so a key just after a frame (a blink) was drawn a frame later (36 ms to its screen, not 12)."""
        self._person_moved()
        if direction < 0:
            self.release_anchor()  # reading back: new output must not pull the view down
        self.scroll_to(y=self.scroll_y + direction * self.scrollable_content_region.height, animate=False,
                       immediate=True)

    def to_top(self) -> None:
        """Home: the first page of the conversation, at its top."""
        self._person_moved()
        self.release_anchor()
        self.window.to_top()
        self.scroll_home(animate=False, immediate=True)

    def to_latest(self) -> None:
        """End: the last page, at its bottom, following new output again."""
        self._person_moved()
        self.window.to_end()
        self.scroll_end(animate=False, immediate=True)
        self.anchor()
        self.marker.set_class(False, "-shown")

    def hold(self, y: int) -> None:
        """Scroll to ``y`` to keep what was on screen where it was (not the user's move)."""
        self._holding = True
        try:
            self.scroll_to(y=y, animate=False, immediate=True)
        finally:
            self._holding = False

    def held_at_end(self) -> bool:
        """The view follows the end (anchored, the anchor not released by the user's scrolling): Textual
        keeps it at the bottom as content grows anywhere. (Textual exposes only whether it is set.)"""
        return self.is_anchored and not self._anchor_released

    def _scrolled(self, _: float) -> None:
        self.sweeper.moved()
        self.lights.moved()
        if self.scroll_y >= self.max_scroll_y:
            self.marker.set_class(False, "-shown")
        if not self._holding:
            self.window.hold.release()
        self.window.scrolled(by_user=not self._holding)

    def _resized(self, _: object) -> None:
        self.window.laid_out()
        self.lights.moved()

    def _person_moved(self) -> None:
        """The person paged or scrolled: the view is let go; what it may need next waits (``Window.wanted``)."""
        self.still.moved()
        self.window.hold.release()

    on_mouse_scroll_up = on_mouse_scroll_down = _person_moved

    def following(self) -> bool:
        """The view follows new output (at the end, not read further up)."""
        return self.is_anchored and not self.marker.has_class("-shown") and not self.window.detached

    def grew(self) -> None:
        """New output: say so when the user is reading further up."""
        if self.max_scroll_y > 0 and self.scroll_y < self.max_scroll_y - 1:
            self.marker.set_class(True, "-shown")

    # -- which widgets show an entry ---------------------------------------------------

    def kind(self, seq: int) -> str:
        return self.kinds.get(seq) or ("turn" if isinstance(self.entries.get(seq), int) else "user")

    def reveal(self, seq: int) -> bool:
        """Entry ``seq``'s widgets mounted (its page read from the store when it was not); False: not shown."""
        if seq not in self.entries and self.window.active:
            self.window.reveal(seq)
            self.lights.expand_entry(seq)
        return seq in self.entries

    def scroll_to_entry(self, widget: Widget) -> None:
        """Show ``widget`` (an entry's first) at the top of the view (held there while pages load)."""
        self.release_anchor()
        if self.window.active:
            self.window.hold.pin_top(widget)
        else:
            widget.scroll_visible(animate=False, top=True)

    def versions_of(self, seq: int) -> tuple[int, int]:
        """Entry ``seq``'s place among its versions, as the outline read it ((1, 1): not known)."""
        return self.window.siblings(seq)

    def widgets_of(self, seq: int) -> list[Widget]:
        entry = self.entries.get(seq)
        if entry is None:
            return []
        if isinstance(entry, int):
            return list(self.turn_widgets.get(entry, {}).values())
        return [entry]

    def cards(self) -> list[ToolCard]:
        from widgets.tool_card import ToolCard

        return list(self.query(ToolCard))

    def calls(self) -> list[ToolCallBlock]:
        """The tool calls shown, oldest first, down to the bottom of the screen (in a long
        conversation scrolled back, "the last cards" are the last ones the user sees); an
        exchange drawn light shows its calls too."""
        from widgets.tool_card import ToolCard

        bottom = round(self.scroll_y) + self.size.height
        shown = [child for child in self.children if isinstance(child, ToolCard | LightExchange)]
        return [call for child in shown if child.virtual_region.y < bottom
                for call in (child.calls() if isinstance(child, LightExchange) else [child.block])]

    def reveal_arguments(self, call: ToolCallBlock) -> None:
        """The explicit request to see a card's whole arguments (the default stays allow-listed)."""
        if self.lights.expand_call(call, self.reveal_arguments):
            return
        for card in self.cards():
            if card.block is call:
                card.reveal_arguments()
                card.scroll_visible(animate=False)
                return

    def show_resource(self, call: ToolCallBlock, uri: str, text: str) -> None:
        """A resource the card links to, shown on the card (``text`` already inert); again when it changed."""
        from widgets.resource_view import ResourceView

        if self.lights.expand_call(call, lambda call: self.show_resource(call, uri, text)):
            return
        for card in self.cards():
            if card.block is call:
                shown = [v for v in card.query(ResourceView) if v.uri == uri]
                if shown:
                    shown[0].show(text)
                else:
                    card.mount(ResourceView(uri, text))
                return

    # -- a live turn ------------------------------------------------------------------

    def user_sent(self, text: str) -> None:
        self.usage_line = None  # a new exchange
        message = UserMessage(text)
        self.add(message)
        if self.session.position is not None:  # the session placed it before telling anyone (event.entry)
            self.entries[self.session.position] = message
            self._enter(self.session.position, "user")

    def attempt_started(self, event: AttemptStarted) -> None:
        if self.session.position is not None:
            self.entries[self.session.position] = event.turn
            self._enter(self.session.position, "turn")
        for widget in self.turn_widgets.pop(event.turn, {}).values():
            widget.remove()  # a retried attempt's blocks replace the failed one's
        self.turn_widgets[event.turn] = {}

    def open_block(self, event: BlockOpened) -> None:
        # live widgets start empty: every character arrives as a BlockGrew after this
        widget = self.widget_for(event.block, finished=False)
        self.turn_widgets.setdefault(event.turn, {})[event.index] = widget
        self.add(widget)

    def grow(self, event: BlockGrew) -> None:
        from widgets.prose import ProseBlock
        from widgets.reasoning import ReasoningBlock
        from widgets.tool_card import ToolCard

        widget = self.turn_widgets.get(event.turn, {}).get(event.index)
        if isinstance(widget, ProseBlock | ReasoningBlock):
            widget.add(event.delta)
        elif isinstance(widget, ToolCard):
            widget.feed(event.delta)
            if not event.delta:  # a name (so the allow-list) or a provider result changed
                widget.display_spec, widget.result_spec = self.host.display_specs(widget.block.name)
                widget.refresh_card()

    def call_state(self, event: CallState) -> ToolCard | None:
        """A call's state changed: its card re-reads it; the card, when it now awaits approval."""
        from widgets.tool_card import ToolCard

        widget = self.turn_widgets.get(event.turn, {}).get(event.index)
        if isinstance(widget, ToolCard):
            widget.refresh_card()
            pictures = self.tool_images(widget)
            if pictures:
                self.mount(*pictures, after=widget)
            if event.state == "awaiting approval":
                return widget
        return None

    def tool_images(self, card: Widget) -> list[Widget]:
        """The images a finished call's result names, under its card, once (item 5 of issue 28)."""
        from widgets.tool_card import ToolCard

        from .pictures import tool_image_widgets

        if not isinstance(card, ToolCard) or card.pictured or card.block.state != "ran":
            return []
        card.pictured = True
        return tool_image_widgets(card.block.result, self.session.endpoint.dialect)

    def turn_settled(self, event: TurnSettled) -> None:
        from widgets.prose import ProseBlock
        from widgets.tool_card import ToolCard

        for widget in self.turn_widgets.get(event.turn, {}).values():
            if isinstance(widget, ProseBlock):
                self.run_worker(widget.finish(), group="prose-finish")
            elif isinstance(widget, ToolCard):
                widget.refresh_card()
        if event.note:
            self.add(NoteBlock(event.note, "error"))
        if event.result.detail:
            self.add(ErrorDetails(event.result.detail))  # the provider's whole text, folded

    def show_usage_line(self) -> None:
        """The exchange's line (model · tokens), below everything it showed; an
        exchange that goes on (Ctrl+R, an approval answered) moves it down, summed."""
        if self.usage_line is not None:
            self.usage_line.remove()
        self.usage_line = UsageLine(self.tally.exchange_model, self.tally.exchange_spent,
                                    self.tally.exchange_money.words())
        self.add(self.usage_line)

    def widget_for(self, block: Any, finished: bool) -> Widget:
        from widgets.prose import ProseBlock
        from widgets.reasoning import ReasoningBlock
        from widgets.tool_card import ToolCard

        from ..stream import ToolCallBlock
        from ..tools.approvals import Approvals

        if block.type == "text":
            return ProseBlock(block.text if finished else "")
        if block.type == "reasoning":
            return ReasoningBlock(block.text if finished else "")
        assert isinstance(block, ToolCallBlock)
        display, result_display = self.host.display_specs(block.name)
        card = ToolCard(block, display, result_display, finished=finished)
        tool = self.session.registry.get(block.name)
        # a session without a policy (a replay) asks nothing: the default policy's rule then
        approvals = self.session.approvals if self.session.approvals is not None else Approvals()
        card.offer_always = tool is None or approvals.offers_always(tool)
        return card

    # -- stored entries -----------------------------------------------------------------

    def show_stored(self, stored: Any, around: int | None = None, ends: bool = True) -> str | None:
        """A (re)opened conversation: the pages of its path around entry ``around`` (else the last),
        read from the store (``ends``: see ``Window.open``); the status the last exchange ended with,
        if it did not end well."""
        runtime = self.host.runtime
        if runtime is None or not stored.items:
            return self.render_items(stored.items)
        from ..store.pages import outline_of
        from ..store.tree import exchange_ended

        window = self.window
        window.open(runtime.store, stored.id, stored.head, around, live=stored.items[-1],
                    outline=outline_of(stored.items), ends=ends)
        self.reorder([entry.seq for entry in window.outline], {entry.seq: entry.kind for entry in window.outline})
        last_user = max((i for i, e in enumerate(window.outline) if e.kind == "user"), default=0)
        return exchange_ended(runtime.store.page(stored.id, [e.seq for e in window.outline[last_user:]]))

    def render_items(self, items: list[Any]) -> str | None:
        """Stored entries at the end, in the shape they were shown in live (with a ‹n/m›
        marker above an entry that has other versions); the status the last
        exchange ended with, if it did not end well."""
        from ..store.tree import exchange_ended

        widgets, seqs = self.build_items(items, last=True)
        for item, seq in zip(items, seqs, strict=True):
            self._enter(seq, "turn" if hasattr(item, "blocks") else "user")
        if widgets:
            if self.window.detached and not self.busy():
                self.window.to_end()
            self.mount_all(widgets)
        return exchange_ended(items)

    def build_items(self, items: list[Any], last: bool) -> tuple[list[Widget], list[int]]:
        """The widgets of stored entries (whole exchanges), registered as showing them; the
        entries' numbers. ``last``: they end the path (the last usage line is the exchange's)."""
        from ..store import StoredUser

        widgets: list[Widget] = []
        seqs: list[int] = []
        message: str | None = None
        exchange: list[Any] = []  # the turns since the last user message
        saved = self.tally.exchange_spent, self.tally.exchange_model, self.tally.exchange_paid
        line: UsageLine | None = None

        def close_exchange() -> None:
            nonlocal line
            # the line a live exchange ended with: only where requests were recorded as made
            if self.tally.stored_exchange(exchange):
                line = UsageLine(self.tally.exchange_model, self.tally.exchange_spent,
                                 self.tally.exchange_money.words())
                widgets.append(line)
            exchange.clear()

        for item in items:
            marked = item.siblings[1] > 1
            seqs.append(item.seq)
            if isinstance(item, StoredUser):
                if message:
                    widgets.append(NoteBlock(message, "error"))
                close_exchange()
                if marked:
                    widgets.append(BranchMarker(*item.siblings))
                widget = UserMessage(item.text) if item.kind == "user" else NoteBlock(item.text, "quiet")
                widget.set_class(marked, "-after-marker")
                widgets.append(widget)
                self.entries[item.seq] = widget
                if item.attachments:  # the chips under the message, as the live screen showed them
                    widgets += attachment_widgets(item.attachments)
                message = item.exchange_message
                continue
            if marked:
                widgets.append(BranchMarker(*item.siblings))
            for failure in item.failures:
                # a Ctrl+R retry keeps the note the earlier run ended with, as the live screen does
                note = NoteBlock(failure, "error" if failure.startswith("Interrupted:") else "warning")
                note.set_class(marked, "-after-marker")
                marked = False
                widgets.append(note)
            blocks = {i: self.widget_for(block, finished=True) for i, block in enumerate(item.blocks)}
            self.turn_widgets[item.turn] = blocks
            self.entries[item.seq] = item.turn
            for block_widget in blocks.values():
                block_widget.set_class(marked, "-after-marker")
                marked = False
                widgets.append(block_widget)
                widgets += self.tool_images(block_widget)
            if item.note:
                widgets.append(NoteBlock(item.note, "error"))
            if item.detail:
                widgets.append(ErrorDetails(item.detail))
            exchange.append(item)
        if message:
            widgets.append(NoteBlock(message, "error"))
        close_exchange()
        if not last:  # an earlier page: the exchange shown last is still the one it was
            self.tally.exchange_spent, self.tally.exchange_model, self.tally.exchange_paid = saved
        elif line is not None:
            self.usage_line = line
        return widgets, seqs

