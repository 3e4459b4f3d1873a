"""The chat screen: it composes the parts and wires them to the session.

The parts, each in its own module: the transcript view (``transcript``: the
scroll container of entries), the composer (``composer``: the input box, the
queue, the prompt history, Ctrl+E), the tree controller (``tree``: selection,
versions, edit, regenerate, fork), the status line's driver and the cost
(``status``, ``tally``), the exchanges run (``exchange``), approvals on screen
(``approval_desk``), the live view of the loop's events (``live``), the keys
(``keys``) and the slash commands (``commands``, run with a narrow
``SlashContext``). The screen builds them and wires them to its app (a
``ChatHost``) and the session. Widgets only render; the session talks to the
network and the dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import ComposeResult
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.widgets import Footer, Static, TextArea

from widgets.approval_prompt import ApprovalPrompt
from widgets.elicitation_form import ElicitationForm
from widgets.note import NoteBlock
from widgets.prompt_input import PromptInput
from widgets.sampling_card import SamplingCard
from widgets.sign_in_card import SignInCard
from widgets.status_line import StatusLine

from ..chat.place import history_read
from ..chat.window import Room, room_of
from ..rules import prices
from ..rules.prices import PriceBook
from . import slash
from .approval_desk import ApprovalDesk
from .commands import builtin_commands
from .compacting import Compacting
from .composer import Composer
from .context import SlashContext
from .exchange import Exchanges
from .frames import SteadyFrames
from .keys import APPROVAL_KEYS, APPROVAL_LETTERS, CHAT_KEYS
from .live import LiveView
from .sign_in import SignInDesk
from .status import Status
from .tally import Tally
from .transcript import Transcript
from .tree import TreeController

if TYPE_CHECKING:
    from ..chat.session import ChatSession
    from .host import ChatHost
    from .mcp_commands import McpCommands
    from .slash import CommandTable

# The widgets of a reply (Markdown and markdown-it, the forming preview), the
# events and the session are imported where they are first used, not before
# the first frame: a new conversation shows none of them.

#: How often a reopen asks whether its first screen is written (``after_first_screen``).
STARTED_POLL = 0.05

__all__ = ["ChatScreen"]


class ChatScreen(SteadyFrames[None]):
    DEFAULT_CSS = """
    ChatScreen { layout: vertical; }
    ChatScreen #transcript { height: 1fr; padding: 0 1 0 1; }
    ChatScreen #transcript:focus { background: $boost; }
    ChatScreen #transcript > * { max-width: 140; }
    ChatScreen PromptInput { margin: 0 1; }
    ChatScreen .bar { height: 1; padding: 0 2; color: $text-muted; display: none; }
    ChatScreen .bar.-shown { display: block; }
    ChatScreen #hint { width: 1fr; }
    ChatScreen #new-output { color: $accent; text-style: bold; }
    ChatScreen .-selected { background: $primary 15%; }
    ChatScreen .-after-marker { margin-top: 0; }
    """

    BINDINGS = CHAT_KEYS + APPROVAL_KEYS

    #: The box has the keys from the start: not the transcript (Textual's first focusable), which losing them
    #: to the box had every widget in it styled again (a reopen's first page, before its first screen).
    AUTO_FOCUS = "PromptInput"

    #: Given at construction, or by ``attach`` once the app has opened it (a deferred start).
    session: ChatSession

    def __init__(self, host: ChatHost, session: ChatSession | None, welcome: str | None = None,
                 focus: int | None = None, label: str = "", commands: CommandTable | None = None) -> None:
        super().__init__()
        #: The app this screen runs in (the live chat, a replay), as the screen may use it.
        self.host = host
        #: The slash commands this screen runs (built here, explicitly: nothing registers itself).
        self.commands = commands if commands is not None else builtin_commands()
        #: The provider's name for the status line until the session is attached.
        self._label = label
        self._attached = False
        self._pending_session = session
        self.welcome = welcome
        self._focus = focus
        #: Tools the user switched off with /tools off (this conversation only).
        self.disabled_tools: set[str] = set()
        #: The MCP servers' prompts, resources and ``@`` completion (made when a session with servers attaches).
        self.mcp: McpCommands | None = None
        #: What the conversation cost (the status line), and the exchange in progress (its line).
        self.tally = Tally(self._prices)
        self.status = Status(self, lambda: self.host.clock(), lambda: self.session.busy)
        self.status.room = self._room
        marker = Static(Content("↓ new output below — End jumps to it"), id="new-output", classes="bar")
        # the welcome is composed, not mounted later, so it is in the first frame
        self.transcript = Transcript(*([NoteBlock(welcome, "quiet")] if welcome else []), host=host, tally=self.tally,
                                     marker=marker)
        self.composer = Composer(self, host, self.commands)
        self.tree_control = TreeController(host, self.transcript, self.status, self.tally,
                                           lambda: self.composer.prompt, self._say, welcome)
        self.approvals = ApprovalDesk(lambda: self.app, self.transcript, self.status, lambda: self.composer.prompt,
                                      self._run_exchange, self.set_timer)
        self.exchanges = Exchanges(self.transcript, self.status, self.composer, self.note, self._run_exchange)
        self.compacting = Compacting(lambda: self.host.runtime, lambda: self.session, self.exchanges,
                                     self.tree_control, self.status, self.note, self._run_exchange)
        self.signing = SignInDesk(lambda: getattr(getattr(self.host, "runtime", None), "mcp", None), self._card,
                                  self.call_later, self._run_sign_in)
        self.live = LiveView(self.transcript, self.status, self.tally, self.tree_control, self.approvals.awaiting,
                             self.call_later, self.call_after_refresh)

    @property
    def prompt(self) -> PromptInput | None:
        return self.composer.prompt

    @property
    def queued(self) -> list[str]:
        """Messages typed while a turn ran, sent in order once it is done."""
        return self.composer.queued

    @property
    def busy(self) -> bool:
        """A turn runs (or the session is still opening: what is sent now is queued)."""
        return not self._attached or self.exchanges.active or self.session.busy

    def compose(self) -> ComposeResult:
        yield StatusLine()
        yield self.transcript
        yield self.transcript.marker
        yield from self.composer.widgets()
        yield Footer()

    def on_mount(self) -> None:
        self.status.set_provider(self._label)
        prompt = self.prompt
        if prompt is not None:
            prompt.cursor_blink = self.host.cursor_blink
            prompt.lends = self._approval_key
            prompt.focus()
        if self._pending_session is not None:
            self.attach(self._pending_session)

    def attach(self, session: ChatSession) -> None:
        """The conversation to show and drive (a deferred start calls this
        after the first frame); what was typed meanwhile is sent now."""
        self._pending_session = None
        self.session = session
        self.transcript.attach(session)
        self.tree_control.attach(session)
        self.approvals.attach(session)
        self.exchanges.attach(session)
        self._attached = True
        self._mcp_commands()
        session.listeners.append(self.live.on_chat_event)
        self.signing.attach()  # the app's MCP servers exist once a session does (a deferred start opens both)
        self._price_table()
        self.status.set_provider(session.endpoint.label)
        if session.stored is not None:
            self.transcript.window.hold_back()
            self.tree_control.show_stored(session.stored, around=self._focus)
            self.after_first_screen(self.transcript.window.go_on)
        if self._focus is not None and self._focus in self.transcript.entries:
            self.tree_control.select(self._focus)
        if session.pending_approvals():
            # a call stored awaiting approval (a crash, or ask): answer it here
            self.call_after_refresh(self.approvals.focus_pending)
        if self.queued:
            self.send(self.composer.next_queued())

    def on_unmount(self) -> None:
        self.signing.detach()
        if self.mcp is not None:  # a /new screen has its own
            self.mcp.close()

    def _say(self, text: str, severity: SeverityLevel = "information") -> None:
        self.notify(text, markup=False, severity=severity)

    # -- what was typed ----------------------------------------------------------------

    @on(PromptInput.Submitted)
    async def _submitted(self, message: PromptInput.Submitted) -> None:
        prompt = self.prompt
        assert prompt is not None
        parsed = slash.parse(message.text)
        if parsed is not None:
            await self._command(prompt, *parsed)
            return
        prompt.accept()
        self.composer.save_history()
        if self.busy:
            self.composer.queue(message.text)
            return
        if self.tree_control.editing is not None:
            edited, self.tree_control.editing = self.tree_control.editing, None
            self.tree_control.branch_before(edited)
        self.send(message.text)

    async def _command(self, prompt: PromptInput, name: str, argument: str) -> None:
        found = self.commands.get(name)
        if found is None:
            # kept in the box, so a typo can be fixed rather than retyped
            self.note(f"Unknown command /{name} — /help lists the commands.", "warning")
            return
        if not self._attached:
            self._say(f"/{name} waits until callstream has started; your text is kept.", "warning")
            return
        if found.idle_only and self.busy:
            self._say(f"/{name} waits until the turn is over (Esc cancels it); your text is kept.", "warning")
            return
        prompt.accept()
        self.composer.hint("")
        context = self._slash_context()
        if context is None:
            self.note(f"/{name} is not available here.", "warning")
            return
        outcome = found.handler(context, argument)
        if outcome is not None:
            await outcome

    def _slash_context(self) -> SlashContext | None:
        """What a slash command may touch (None in a replay: there is no runtime to talk to)."""
        runtime = self.host.runtime
        if runtime is None:
            return None
        host = self.host
        return SlashContext(
            session=self.session, runtime=runtime, help_text=self.commands.help_text,
            disabled_tools=self.disabled_tools, note=self.note, copy=self.copy, display_specs=host.display_specs,
            calls=self.transcript.calls, reveal_arguments=self.transcript.reveal_arguments,
            refresh_provider=self.refresh_provider, retry=self.action_retry, fork=self.action_fork,
            compact=self.compacting.start,
            clear=self.clear_screen,
            new_conversation=host.new_conversation, show_mcp_servers=host.action_mcp_servers,
            attach=self.exchanges.pending.append, propose=self.composer.propose,
            show_resource=self.transcript.show_resource)

    def _mcp_commands(self) -> None:
        """The MCP servers' prompts as commands, ``@server:uri`` and ``/resource`` (with a server configured)."""
        runtime = self.host.runtime
        if runtime is None or runtime.mcp is None or self.mcp is not None:
            return
        from .mcp_commands import McpCommands

        self.mcp = McpCommands(self.commands, runtime.mcp)
        self.mcp.set_text = self.composer.completed_later
        self.composer.completers.append(self.mcp.complete)
        self.exchanges.prepare = self.mcp.prepare

    def send(self, text: str) -> None:
        """Send a prompt now (sending scrolls to the bottom); with ``compact = "auto"``, compact first
        when the window is nearly full."""
        due = self.compacting.due()
        if due is not False:  # None: the window is not at hand yet, the worker reads it
            self.compacting.then_send(text, check=due is None)
            return
        self.exchanges.send(text)

    @on(TextArea.Changed)
    def _typed(self, event: TextArea.Changed) -> None:
        self.composer.typed(event)
        self.transcript.still.moved()  # typing: no page comes ahead of the view meanwhile
        self.transcript.lights.moved()  # nor is an exchange drawn light

    def on_key(self, event: events.Key) -> None:
        """Typing never goes nowhere: a printable key while the focus is elsewhere
        (after Tab, or a click on the transcript) goes to the input box."""
        self.transcript.still.moved()  # any key: the person is not still (the arrows scroll a focused transcript)
        self.composer.take_stray_key(event, self.focused)

    # -- keys ------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "approval":  # the approval keys: only while a call awaits an answer
            return self._attached and self.approvals.takes_keys(self.focused)
        return True

    def _approval_key(self, key: str) -> bool:
        """An approval key that answers a waiting call now, even from the input box."""
        return key in APPROVAL_LETTERS and self._attached and self.approvals.takes_keys(self.focused)

    def action_approval(self, choice: str) -> None:
        self.approvals.key(choice, self.focused)

    def action_cancel_turn(self) -> None:
        if not self._attached:
            return
        if self.session.busy:
            self.session.cancel()
            self.status.set_state("cancelling…")
        else:
            self.tree_control.cancel()

    def action_retry(self) -> None:
        if not self._attached:
            return
        if self.busy:
            self._say("A turn is still running.", "warning")
        elif not self.session.can_retry():
            self._say("Nothing to retry: the last turn did not fail.")
        else:
            self.exchanges.retry()

    def action_open_transcripts(self) -> None:
        if self.busy:
            self._say("A turn is still running: press Esc to cancel it first.", "warning")
            return
        self.host.action_open_transcripts()

    def action_select(self, step: int) -> None:
        self.tree_control.step(step)

    def action_sibling(self, step: int) -> None:
        if self._attached:
            self.tree_control.sibling(step)

    def action_edit(self) -> None:
        if self._attached:
            self.tree_control.edit()

    def action_regenerate(self) -> None:
        if self._attached and self.tree_control.regenerate_target() is not None:
            self.exchanges.regenerate()

    def action_fork(self) -> None:
        if self._attached:
            self.tree_control.fork()

    def action_edit_in_editor(self) -> None:
        self.composer.edit_in_editor()

    def action_page(self, direction: int) -> None:
        self.transcript.page(direction)

    def action_home(self) -> None:
        """Home: the start of the line being typed, else the top of the transcript."""
        if not self.composer.to_line_edge(self.focused, end=False):
            self.transcript.to_top()

    def action_end(self) -> None:
        """End: the end of the line being typed, else the latest output."""
        if not self.composer.to_line_edge(self.focused, end=True):
            self.action_jump_to_latest()

    def action_jump_to_latest(self) -> None:
        self.transcript.to_latest()

    # -- what commands and the copy picker ask for -----------------------------------------

    def action_copy_picker(self) -> None:
        from .copying import CopyPicker, copyables

        context = self._slash_context() if self._attached else None
        items = copyables(context) if context is not None else []
        if not items:
            self._say("Nothing to copy yet.")
            return
        self.app.push_screen(CopyPicker(items, self.copy))

    def copy(self, text: str, what: str) -> None:
        """To the clipboard (OSC 52: works over SSH and inside tmux)."""
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        self._say(f"Copied {what} ({lines} line{'s' if lines != 1 else ''}, {len(text)} characters).")

    def _prices(self) -> PriceBook:
        """The prices in force: the runtime's (its profile follows /model), the table's alone in a replay."""
        runtime = self.host.runtime
        return runtime.prices if runtime is not None else PriceBook()

    def after_first_screen(self, callback: Callable[[], object]) -> None:
        """``callback`` once the first screen is written (polled: a state, not a time) and painted; at
        once after the next frame when a reply is streaming already (that screen was drawn long ago).
        What waits for it: the window's pages above and its first and last page (they took a reopen's
        first screen a fifth of a second when they came in the idle moments between its mount waves),
        the MCP servers' start, the warm-up and the price table (``App._started``)."""
        if not self.written() and not (self._attached and self.session.busy):
            self.set_timer(STARTED_POLL, partial(self.after_first_screen, callback))
            return
        self.call_after_refresh(callback)

    def written(self) -> bool:
        """No reply in the transcript waits to write what it was given (its entries only: cheap to ask)."""
        from widgets.prose import ProseBlock

        return all(block.settled for block in self.transcript.children if isinstance(block, ProseBlock))

    def _price_table(self) -> None:
        """Once the price table is in (asked for by the status line's money or meter, loaded in a thread of
        its own), the status line shows what it could not show without it."""
        prices.when_loaded(self._table_in)

    def _table_in(self) -> None:
        self.status.show_spent(self.tally)

    def _room(self) -> Room | None:
        """The context meter's reading (none before the session is attached, nor while a long reopened
        path's history waits for its first use: the meter is not worth reading all of it; nor for a model
        whose window is unknown, which the meter does not show: the estimate reads the whole history, a
        turn's end each time, 2 ms at 440 exchanges)."""
        if not self._attached or not history_read(self.session):
            return None
        window = self._prices().window(self.session.endpoint.model, wait=False)
        return room_of(self.session, window) if window else None

    def refresh_provider(self) -> None:
        self.status.set_provider(self.session.endpoint.label)

    def clear_screen(self) -> None:
        """/clear: the widgets go; the conversation (and what the model is sent) stays."""
        self.transcript.reset()
        self.tree_control.selected = None
        self.transcript.usage_line = None
        self.note("Screen cleared. The conversation itself is unchanged (the model still sees all of it); "
                  "/new starts a fresh one.")

    def note(self, text: str, kind: str = "quiet") -> None:
        """A line from the client itself (command output), never from the model."""
        self.transcript.note(text, kind)
        self.action_jump_to_latest()

    @on(ApprovalPrompt.Answered)
    def _answered(self, message: ApprovalPrompt.Answered) -> None:
        self.approvals.answered(message)

    @on(ElicitationForm.Answered)
    def _elicitation_answered(self, message: ElicitationForm.Answered) -> None:
        """The person's answer to a server's request: the session checks it (a refusal stays on the form)."""
        problems = self.session.asking.answer(message.key, message.action, message.entered)
        message.form.show_problems(problems)
        if not problems and self.prompt is not None:  # answered: the box has the keys again, as after an approval
            self.prompt.focus()

    def _card(self, card: SignInCard) -> None:
        """A sign-in card at the end; it takes the keys unless the person is typing."""
        self.transcript.add(card)
        self.action_jump_to_latest()
        prompt = self.prompt
        if prompt is None or not prompt.text:
            self.call_after_refresh(card.focus)

    @on(SignInCard.Chosen)
    def _sign_in_chosen(self, message: SignInCard.Chosen) -> None:
        self.signing.chosen(message.card, message.browser)

    def _run_sign_in(self, work: Coroutine[Any, Any, None]) -> None:
        """A sign-in runs on the app (a /new screen does not cut it off)."""
        self.app.run_worker(work, group="sign-in", exit_on_error=False)

    @on(SamplingCard.Answered)
    def _sampling_answered(self, message: SamplingCard.Answered) -> None:
        """The person's answer to a server's request to the model: the session owns what follows; the focus goes
        back to the box, as after an approval (a reply to review takes it again)."""
        if self.session.sampling.answer(message.key, message.action, message.text) and self.prompt is not None:
            self.prompt.focus()

    def _run_exchange(self, work: Coroutine[Any, Any, None]) -> None:
        """``work`` as the one exchange running (a send, a retry, an answered stored approval)."""
        self.run_worker(work, group="chat", exclusive=True, exit_on_error=False)
