"""The chat screen: the conversation as block widgets, the input, the keys.

The screen is the one controller between the conversation loop and the
widgets: it turns each ``ChatEvent`` into a widget operation (mount a block,
grow it, re-read a card's state), keeping blocks in event order. Widgets
only render; the session talks to the network and the dispatcher.
"""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from widgets.note import NoteBlock
from widgets.prompt_input import PromptInput
from widgets.prose import ProseBlock
from widgets.reasoning import ReasoningBlock
from widgets.status_line import StatusLine
from widgets.tool_card import ToolCard
from widgets.user_message import UserMessage

from ..chat.events import (
    AttemptFailed,
    AttemptStarted,
    BlockGrew,
    BlockOpened,
    CallState,
    ChatEvent,
    ConversationMoved,
    ExchangeDone,
    TurnDone,
    UserSent,
)
from ..chat.session import ChatSession
from ..stream import ToolCallBlock

__all__ = ["ChatScreen"]

#: What the status line says once an exchange ended.
_STATUS = {"done": "ready", "failed": "failed — Ctrl+R retries", "cancelled": "cancelled — Ctrl+R retries",
           "round_limit": "stopped (round limit)"}


class ChatScreen(Screen[None]):
    DEFAULT_CSS = """
    ChatScreen { layout: vertical; }
    ChatScreen #conversation { height: 1fr; padding: 0 1 1 1; }
    ChatScreen PromptInput { dock: bottom; margin: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel turn", show=True),
        Binding("ctrl+o", "open_transcripts", "Transcripts", show=True),
        Binding("ctrl+r", "retry", "Retry failed turn", show=True),
        Binding("end", "jump_to_latest", "Latest", show=True),
        Binding("ctrl+q", "app.quit", "Quit", show=True, priority=True),
    ]

    def __init__(self, session: ChatSession, welcome: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.welcome = welcome
        #: turn index → the widgets of its current attempt, in block order
        self._turn_widgets: dict[int, dict[int, Widget]] = {}
        self._last_failed = False
        session.listeners.append(self._on_chat_event)

    def compose(self) -> ComposeResult:
        yield StatusLine()
        yield VerticalScroll(id="conversation")
        yield PromptInput()
        yield Footer()

    def on_mount(self) -> None:
        status = self.query_one(StatusLine)
        status.provider = self.session.endpoint.label
        conversation = self.query_one("#conversation", VerticalScroll)
        conversation.anchor()
        if self.welcome:
            conversation.mount(NoteBlock(self.welcome, "quiet"))
        if self.session.stored is not None:
            self._render_stored(self.session.stored)
        prompt = self.query_one(PromptInput)
        prompt.cursor_blink = getattr(self.app, "cursor_blink", True)
        prompt.focus()

    # -- keys ------------------------------------------------------------------

    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        if self.session.busy:
            self.notify("A turn is still running: press Esc to cancel it first.", markup=False, severity="warning")
            return
        self._run(message.text)

    @work(group="chat", exclusive=True, exit_on_error=False)
    async def _run(self, text: str, retry: bool = False) -> None:
        self._set_state("streaming…")
        if retry:
            await self.session.retry_last()
        else:
            await self.session.send(text)

    def action_cancel_turn(self) -> None:
        if self.session.busy:
            self.session.cancel()
            self._set_state("cancelling…")

    def action_retry(self) -> None:
        if self.session.busy:
            self.notify("A turn is still running.", markup=False, severity="warning")
        elif not self.session.can_retry():
            self.notify("Nothing to retry: the last turn did not fail.", markup=False)
        else:
            self._run("", retry=True)

    def action_open_transcripts(self) -> None:
        if self.session.busy:
            self.notify("A turn is still running: press Esc to cancel it first.", markup=False, severity="warning")
            return
        self.app.action_open_transcripts()  # type: ignore[attr-defined]

    def action_jump_to_latest(self) -> None:
        conversation = self.query_one("#conversation", VerticalScroll)
        conversation.scroll_end(animate=False)
        conversation.anchor()

    # -- events from the conversation loop ---------------------------------------

    def _set_state(self, state: str) -> None:
        self.query_one(StatusLine).state = state

    def _mount(self, widget: Widget) -> None:
        self.query_one("#conversation", VerticalScroll).mount(widget)

    def _on_chat_event(self, event: ChatEvent) -> None:
        if isinstance(event, BlockGrew):
            widget = self._turn_widgets.get(event.turn, {}).get(event.index)
            if isinstance(widget, ProseBlock | ReasoningBlock):
                widget.add(event.delta)
            elif isinstance(widget, ToolCard):
                widget.feed(event.delta)
                if not event.delta:  # a name (so the allow-list) or a provider result changed
                    widget.display_spec, widget.result_spec = self.app.display_specs(  # type: ignore[attr-defined]
                        widget.block.name)
                    widget.refresh_card()
        elif isinstance(event, BlockOpened):
            self._open_block(event)
        elif isinstance(event, CallState):
            widget = self._turn_widgets.get(event.turn, {}).get(event.index)
            if isinstance(widget, ToolCard):
                widget.refresh_card()
            if event.state == "running":
                self._set_state("running tools…")
        elif isinstance(event, UserSent):
            self._mount(UserMessage(event.text))
        elif isinstance(event, ConversationMoved):
            self._mount(NoteBlock(event.message, "quiet"))
            self._render_items(event.added)
        elif isinstance(event, AttemptStarted):
            for widget in self._turn_widgets.pop(event.turn, {}).values():
                widget.remove()  # a retried attempt's blocks replace the failed one's
            self._turn_widgets[event.turn] = {}
            self._set_state("streaming…" if event.attempt == 1 else f"streaming (attempt {event.attempt})…")
        elif isinstance(event, AttemptFailed):
            self._mount(NoteBlock(event.message))
        elif isinstance(event, TurnDone):
            for widget in self._turn_widgets.get(event.turn, {}).values():
                if isinstance(widget, ProseBlock):
                    self.run_worker(widget.finish(), group="prose-finish")
                elif isinstance(widget, ToolCard):
                    widget.refresh_card()
            if event.note:
                self._mount(NoteBlock(event.note, "error"))
        elif isinstance(event, ExchangeDone):
            self._last_failed = event.status in ("failed", "cancelled")
            if event.message:
                self._mount(NoteBlock(event.message, "error"))
            self._set_state(_STATUS.get(event.status, event.status))

    def _open_block(self, event: BlockOpened) -> None:
        # live widgets start empty: every character arrives as a BlockGrew after this
        widget = self._widget_for(event.block, finished=False)
        self._turn_widgets.setdefault(event.turn, {})[event.index] = widget
        self._mount(widget)

    def _widget_for(self, block: Any, finished: bool) -> Widget:
        if block.type == "text":
            return ProseBlock(block.text if finished else "")
        if block.type == "reasoning":
            return ReasoningBlock(block.text if finished else "")
        assert isinstance(block, ToolCallBlock)
        display, result_display = self.app.display_specs(block.name)  # type: ignore[attr-defined]
        return ToolCard(block, display, result_display, finished=finished)

    def _render_stored(self, stored: Any) -> None:
        """A reopened conversation, in the shape it was shown in live."""
        self._render_items(stored.items)

    def _render_items(self, items: list[Any]) -> None:
        from ..store.transcripts import StoredUser

        message: str | None = None
        status: str | None = None
        for item in items:
            if isinstance(item, StoredUser):
                if message:
                    self._mount(NoteBlock(message, "error"))
                self._mount(UserMessage(item.text))
                message, status = item.exchange_message, item.exchange
                continue
            for failure in item.failures:
                # a Ctrl+R retry keeps the note the earlier run ended with, as the live screen does
                self._mount(NoteBlock(failure, "error" if failure.startswith("Interrupted:") else "warning"))
            widgets = {i: self._widget_for(block, finished=True) for i, block in enumerate(item.blocks)}
            self._turn_widgets[item.turn] = widgets
            for widget in widgets.values():
                self._mount(widget)
            if item.note:
                self._mount(NoteBlock(item.note, "error"))
            if item.killed:
                status = "failed"
        if message:
            self._mount(NoteBlock(message, "error"))
        if status:
            self._set_state(_STATUS.get(status, status))
