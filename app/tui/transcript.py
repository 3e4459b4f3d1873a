"""The transcript view: the scroll container of the conversation's entries.

It mounts what is shown, in order: stored entries when a conversation is
(re)opened (``render_items``), and the blocks of a live turn as they open and
grow (``open_block``, ``grow``). It keeps which widgets show which entry
(``entries``: the store's entry number → its user message widget or its turn
index) so the tree controller can select them. Widgets only render; this
decides which widget shows what.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from widgets.branch_marker import BranchMarker
from widgets.error_details import ErrorDetails
from widgets.note import NoteBlock
from widgets.usage_line import UsageLine
from widgets.user_message import UserMessage

from .tally import Tally

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

    def attach(self, session: ChatSession) -> None:
        self.session = session

    def add(self, widget: Widget) -> None:
        self.mount(widget)

    def note(self, text: str, kind: str = "quiet") -> None:
        self.add(NoteBlock(text, kind))

    def reset(self) -> None:
        """Every widget goes (the conversation itself is unchanged)."""
        self.remove_children()
        self.turn_widgets.clear()
        self.entries.clear()

    # -- scrolling ----------------------------------------------------------------------

    def on_mount(self) -> None:
        self.anchor()
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def page(self, direction: int) -> None:
        if direction < 0:
            self.release_anchor()  # reading back: new output must not pull the view down
            self.scroll_page_up(animate=False)
        else:
            self.scroll_page_down(animate=False)

    def to_top(self) -> None:
        self.release_anchor()
        self.scroll_home(animate=False)

    def to_latest(self) -> None:
        self.scroll_end(animate=False, immediate=True)
        self.anchor()
        self.marker.set_class(False, "-shown")

    def _scrolled(self, _: float) -> None:
        if self.scroll_y >= self.max_scroll_y:
            self.marker.set_class(False, "-shown")

    def grew(self) -> None:
        """New output: say so when the user is reading further up."""
        if self.max_scroll_y > 0 and self.scroll_y < self.max_scroll_y - 1:
            self.marker.set_class(True, "-shown")

    # -- which widgets show an entry ---------------------------------------------------

    def kind(self, seq: int) -> str:
        return "turn" if isinstance(self.entries[seq], int) else "user"

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
        """The tool calls shown, oldest first."""
        return [card.block for card in self.cards()]

    def reveal_arguments(self, call: ToolCallBlock) -> None:
        """The explicit request to see a card's whole arguments (the default stays allow-listed)."""
        for card in self.cards():
            if card.block is call:
                card.reveal_arguments()
                card.scroll_visible(animate=False)
                return

    # -- a live turn ------------------------------------------------------------------

    def user_sent(self, text: str) -> None:
        self.usage_line = None  # a new exchange
        message = UserMessage(text)
        self.add(message)
        if self.session.position is not None:  # the session placed it before telling anyone (event.entry)
            self.entries[self.session.position] = message

    def attempt_started(self, event: AttemptStarted) -> None:
        if self.session.position is not None:
            self.entries[self.session.position] = event.turn
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
            if event.state == "awaiting approval":
                return widget
        return None

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

    def render_items(self, items: list[Any]) -> str | None:
        """Stored entries, in the shape they were shown in live (with a ‹n/m›
        marker above an entry that has other versions); the status the last
        exchange ended with, if it did not end well."""
        from ..store import StoredUser

        message: str | None = None
        status: str | None = None
        exchange: list[Any] = []  # the turns since the last user message

        def close_exchange() -> None:
            # the line a live exchange ended with: only where requests were recorded as made
            if self.tally.stored_exchange(exchange):
                self.usage_line = None
                self.show_usage_line()
            exchange.clear()

        for item in items:
            marked = item.siblings[1] > 1
            if isinstance(item, StoredUser):
                if message:
                    self.add(NoteBlock(message, "error"))
                close_exchange()
                if marked:
                    self.add(BranchMarker(*item.siblings))
                widget = UserMessage(item.text) if item.kind == "user" else NoteBlock(item.text, "quiet")
                widget.set_class(marked, "-after-marker")
                self.add(widget)
                self.entries[item.seq] = widget
                message, status = item.exchange_message, item.exchange
                continue
            if marked:
                self.add(BranchMarker(*item.siblings))
            for failure in item.failures:
                # a Ctrl+R retry keeps the note the earlier run ended with, as the live screen does
                note = NoteBlock(failure, "error" if failure.startswith("Interrupted:") else "warning")
                note.set_class(marked, "-after-marker")
                marked = False
                self.add(note)
            blocks = {i: self.widget_for(block, finished=True) for i, block in enumerate(item.blocks)}
            self.turn_widgets[item.turn] = blocks
            self.entries[item.seq] = item.turn
            for block_widget in blocks.values():
                block_widget.set_class(marked, "-after-marker")
                marked = False
                self.add(block_widget)
            if item.note:
                self.add(NoteBlock(item.note, "error"))
            if item.detail:
                self.add(ErrorDetails(item.detail))
            if item.killed:
                status = "failed"
            exchange.append(item)
        if message:
            self.add(NoteBlock(message, "error"))
        close_exchange()
        return status
