"""The chat screen: the conversation as block widgets, the input, the keys.

The screen is the one controller between the conversation loop and the
widgets: it turns each ``ChatEvent`` into a widget operation (mount a block,
grow it, re-read a card's state), keeping blocks in event order. Widgets
only render; the session talks to the network and the dispatcher.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Collapsible, Footer, Static, TextArea
from textual.widgets._collapsible import CollapsibleTitle

from widgets.approval_prompt import ApprovalPrompt
from widgets.branch_marker import BranchMarker
from widgets.error_details import ErrorDetails
from widgets.note import NoteBlock
from widgets.prompt_input import PromptInput
from widgets.status_line import StatusLine
from widgets.usage_line import UsageLine
from widgets.user_message import UserMessage

from ..stream.inert import inert
from ..stream.limits import one_line
from ..stream.usage import Usage, total, usage_words
from . import collector, slash
from .commands import builtin_commands
from .context import SlashContext

if TYPE_CHECKING:
    from widgets.tool_card import ToolCard

    from ..chat.events import ChatEvent
    from ..chat.session import ChatSession
    from ..runtime.wiring import Runtime
    from ..stream import ToolCallBlock
    from .host import ChatHost
    from .slash import CommandTable

# The widgets of a reply (Markdown and markdown-it, the forming preview), the
# events and the session are imported where they are first used, not before
# the first frame: a new conversation shows none of them.

__all__ = ["ChatScreen"]

#: What the status line says once an exchange ended.
def _describe(exc: BaseException) -> str:
    """A data file's failure says itself; anything else is named by its type."""
    from ..files.dbfile import DataFileError

    if isinstance(exc, DataFileError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


_STATUS = {"done": "ready", "failed": "failed — Ctrl+R retries", "cancelled": "cancelled — Ctrl+R retries",
           "round_limit": "stopped (round limit)", "needs_approval": "waiting for approval"}

#: Seconds without a byte from the provider before the status line says "waiting N s".
QUIET_AFTER = 3.0


class ChatScreen(Screen[None]):
    DEFAULT_CSS = """
    ChatScreen { layout: vertical; }
    ChatScreen #conversation { height: 1fr; padding: 0 1 0 1; }
    ChatScreen #conversation:focus { background: $boost; }
    ChatScreen #conversation > * { max-width: 140; }
    ChatScreen PromptInput { margin: 0 1; }
    ChatScreen .bar { height: 1; padding: 0 2; color: $text-muted; display: none; }
    ChatScreen .bar.-shown { display: block; }
    ChatScreen #new-output { color: $accent; text-style: bold; }
    ChatScreen .-selected { background: $primary 15%; }
    ChatScreen .-after-marker { margin-top: 0; }
    """

    #: Every binding has an id, so ``[keys]`` in the config can rebind it (Textual keymaps).
    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel", show=True, id="cancel"),
        Binding("ctrl+r", "retry", "Retry", show=True, id="retry"),
        Binding("ctrl+y", "copy_picker", "Copy", show=True, priority=True, id="copy"),
        Binding("ctrl+o", "open_transcripts", "Transcripts", show=True, id="transcripts"),
        Binding("ctrl+e", "edit_in_editor", "Editor", show=False, priority=True, id="editor"),
        Binding("pageup", "page(-1)", "Page up", show=False, priority=True, id="page-up"),
        Binding("pagedown", "page(1)", "Page down", show=False, priority=True, id="page-down"),
        Binding("home", "home", "Top", show=False, priority=True, id="top"),
        Binding("end", "end", "Latest", show=False, priority=True, id="latest"),
        Binding("alt+up", "select(-1)", "Select earlier", show=False, priority=True, id="select-earlier"),
        Binding("alt+down", "select(1)", "Select later", show=False, priority=True, id="select-later"),
        Binding("alt+left", "sibling(-1)", "Previous version", show=False, priority=True, id="previous-version"),
        Binding("alt+right", "sibling(1)", "Next version", show=False, priority=True, id="next-version"),
        Binding("alt+e", "edit", "Edit message", show=False, priority=True, id="edit"),
        Binding("ctrl+g", "regenerate", "Regenerate", show=False, priority=True, id="regenerate"),
        Binding("ctrl+q", "app.quit", "Quit", show=True, priority=True, id="quit"),
    ]

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
        #: turn index → the widgets of its current attempt, in block order
        self._turn_widgets: dict[int, dict[int, Widget]] = {}
        self._last_failed = False
        #: The entries shown, in order: the store's entry number → its user message widget or its turn index.
        self._entries: dict[int, Widget | int] = {}
        #: The entry picked with Alt+↑/↓ (None: none; the keys then act on the last one).
        self._selected: int | None = None
        #: The user message being edited in the composer (Enter sends it as a new branch).
        self._editing: int | None = None
        #: This exchange started a branch: show the tree again from the store when it ends.
        self._branched = False
        self._focus = focus
        self._display_failed = False
        #: Messages typed while a turn ran, sent in order once it is done.
        self.queued: list[str] = []
        #: Tools the user switched off with /tools off (this conversation only).
        self.disabled_tools: set[str] = set()
        self._turn_active = False
        self._started = 0.0
        self._last_byte = 0.0
        self._ticker: Timer | None = None
        #: What the conversation cost: the stored tree's turns when it was (re)shown, and this screen's
        #: exchanges since; the exchange in progress (a retry or an approval continues it) and its line.
        self._spent_stored: Usage | None = None
        self._spent_live: Usage | None = None
        self._exchange_spent: Usage | None = None
        self._exchange_model: str | None = None
        self._usage_line: UsageLine | None = None

    @property
    def clock(self) -> Callable[[], float]:
        return self.host.clock

    @property
    def prompt(self) -> PromptInput | None:
        return self.query_one_optional(PromptInput)

    @property
    def busy(self) -> bool:
        """A turn runs (or the session is still opening: what is sent now is queued)."""
        return not self._attached or self._turn_active or self.session.busy

    def compose(self) -> ComposeResult:
        yield StatusLine()
        # the welcome is composed, not mounted later, so it is in the first frame
        yield VerticalScroll(*([NoteBlock(self.welcome, "quiet")] if self.welcome else []), id="conversation")
        yield Static(Content("↓ new output below — End jumps to it"), id="new-output", classes="bar")
        yield Static(id="queued", classes="bar")
        yield PromptInput(self.host.prompt_history, self.commands.complete)
        yield Static(id="hint", classes="bar")
        yield Footer()

    def on_mount(self) -> None:
        status = self.query_one(StatusLine)
        status.provider = self._label
        conversation = self.query_one("#conversation", VerticalScroll)
        conversation.anchor()
        self.watch(conversation, "scroll_y", self._scrolled, init=False)
        prompt = self.prompt
        if prompt is not None:
            prompt.cursor_blink = self.host.cursor_blink
            prompt.focus()
        if self._pending_session is not None:
            self.attach(self._pending_session)

    def attach(self, session: ChatSession) -> None:
        """The conversation to show and drive (a deferred start calls this
        after the first frame); what was typed meanwhile is sent now."""
        self._pending_session = None
        self.session = session
        self._attached = True
        session.listeners.append(self._on_chat_event)
        self.query_one(StatusLine).provider = session.endpoint.label
        if session.stored is not None:
            self._render_stored(session.stored)
        if self._focus is not None and self._focus in self._entries:
            self._select(self._focus)
        if session.pending_approvals():
            # a call stored awaiting approval (a crash, or ask): answer it here
            self.call_after_refresh(self._focus_pending)
        if self.queued:
            self.send(self.queued.pop(0))
            self._show_queue()

    def _focus_pending(self, tries: int = 40) -> None:
        from widgets.tool_card import ToolCard

        for card in self.query(ToolCard):
            if card.approval is not None and card.approval.is_mounted:
                self._set_state("waiting for your approval")
                card.approval.focus()
                card.scroll_visible()
                return
        if tries:  # the stored cards mount their keys on their own mount
            self.set_timer(0.05, lambda: self._focus_pending(tries - 1))

    # -- the composer ------------------------------------------------------------

    @on(PromptInput.Submitted)
    async def _submitted(self, message: PromptInput.Submitted) -> None:
        prompt = self.prompt
        assert prompt is not None
        parsed = slash.parse(message.text)
        if parsed is not None:
            name, argument = parsed
            found = self.commands.get(name)
            if found is None:
                # kept in the box, so a typo can be fixed rather than retyped
                self.note(f"Unknown command /{name} — /help lists the commands.", "warning")
                return
            if not self._attached:
                self.notify(f"/{name} waits until callstream has started; your text is kept.",
                            markup=False, severity="warning")
                return
            if found.idle_only and self.busy:
                self.notify(f"/{name} waits until the turn is over (Esc cancels it); your text is kept.",
                            markup=False, severity="warning")
                return
            prompt.accept()
            self._hint("")
            context = self._slash_context()
            if context is None:
                self.note(f"/{name} is not available here.", "warning")
                return
            outcome = found.handler(context, argument)
            if outcome is not None:
                await outcome
            return
        prompt.accept()
        self._save_history()
        if self.busy:
            self.queued.append(message.text)
            self._show_queue()
            return
        if self._editing is not None:
            edited, self._editing = self._editing, None
            self._branch_before(edited)
        self.send(message.text)

    def send(self, text: str) -> None:
        """Send a prompt now (sending scrolls to the bottom)."""
        self.action_jump_to_latest()
        self._turn_active = True
        self._run(text)

    @work(group="chat", exclusive=True, exit_on_error=False)
    async def _run(self, text: str, retry: bool = False, regenerate: bool = False) -> None:
        """One exchange (and the messages queued behind it). Whatever goes wrong
        inside it ends it as a stated failure on screen, with the status back to
        ready: the app never wedges."""
        self._turn_active = True
        self._begin_timing()
        self._set_state("streaming…")
        try:
            if retry:
                done = await self.session.retry_last()
            elif regenerate:
                done = await self.session.regenerate()
            else:
                done = await self.session.send(text)
            while done.status == "done" and self.queued:
                text = self.queued.pop(0)
                self._show_queue()
                self.action_jump_to_latest()
                self._begin_timing()
                done = await self.session.send(text)
        except Exception as exc:  # a bug or a data file that failed: said, never a silent dead worker
            self._mount(NoteBlock(f"This turn stopped: callstream hit an error ({one_line(_describe(exc), 300)}). "
                                  "What was saved is kept; you can go on or press Ctrl+R to retry.", "error"))
            self._set_state(_STATUS["done"])
        finally:
            self._turn_active = False
            self._end_timing()
            if self.queued:
                self._return_queue()

    def _return_queue(self) -> None:
        """The turn did not finish: queued messages go back into the box, not to the model."""
        prompt = self.prompt
        text = "\n\n".join(self.queued)
        self.queued.clear()
        self._show_queue()
        if prompt is not None:
            prompt.text = text + ("\n\n" + prompt.text if prompt.text.strip() else "")
        self.note("The turn did not finish, so your queued message was not sent: it is back in the input box.",
                  "warning")

    def _show_queue(self) -> None:
        bar = self.query_one("#queued", Static)
        if self.queued:
            first = self.queued[0].strip().splitlines()[0] if self.queued[0].strip() else ""
            more = f" (+{len(self.queued) - 1} more)" if len(self.queued) > 1 else ""
            bar.update(Content(f"queued: {inert(first)[:200]}{more} — sent when this turn ends"))
        bar.set_class(bool(self.queued), "-shown")

    def _save_history(self) -> None:
        prompt = self.prompt
        if prompt is not None:
            self.host.save_prompt_history(prompt.prompt_history)

    @on(TextArea.Changed)
    def _typed(self, event: TextArea.Changed) -> None:
        text = event.text_area.text
        matches = self.commands.matching(text) if text.startswith("/") and " " not in text.strip() else []
        self._hint("   ".join(f"{self.commands.usage_of(c.name)} — {c.help}" for c in matches[:4]) if matches else "")

    def _hint(self, text: str) -> None:
        hint = self.query_one_optional("#hint", Static)
        if hint is not None:
            hint.update(Content(text))
            hint.set_class(bool(text), "-shown")

    def on_key(self, event: events.Key) -> None:
        """Typing never goes nowhere: a printable key while the focus is elsewhere
        (after Tab, or a click on the conversation) goes to the input box."""
        prompt = self.prompt
        if prompt is None or not event.is_printable or event.character is None:
            return
        focused = self.focused
        # only from what Tab or a click lands on (the conversation, a fold); an approval
        # prompt or a list keeps its own keys
        if focused is not None and not isinstance(focused, VerticalScroll | Collapsible | CollapsibleTitle):
            return
        prompt.focus()
        prompt.insert(event.character)
        event.stop()
        event.prevent_default()

    # -- keys ------------------------------------------------------------------

    def action_cancel_turn(self) -> None:
        if not self._attached:
            return
        if self.session.busy:
            self.session.cancel()
            self._set_state("cancelling…")
        elif self._editing is not None:
            self._editing = None
            self.query_one(PromptInput).clear()
            self._set_state("ready")
        elif self._selected is not None:
            self._select(None)
            self._set_state("ready")

    def action_retry(self) -> None:
        if not self._attached:
            return
        if self.busy:
            self.notify("A turn is still running.", markup=False, severity="warning")
        elif not self.session.can_retry():
            self.notify("Nothing to retry: the last turn did not fail.", markup=False)
        else:
            self.action_jump_to_latest()
            self._turn_active = True
            self._run("", retry=True)

    def action_open_transcripts(self) -> None:
        if self.busy:
            self.notify("A turn is still running: press Esc to cancel it first.", markup=False, severity="warning")
            return
        self.host.action_open_transcripts()

    # -- the conversation as a tree ---------------------------------------------

    def _runtime(self) -> Runtime | None:
        return self.host.runtime  # a replay has none: its conversation is not stored

    def _stored_runtime(self) -> Runtime:
        """The runtime of a stored conversation (the tree's keys run only where there is one: ``_idle``)."""
        runtime = self._runtime()
        assert runtime is not None
        return runtime

    def _slash_context(self) -> SlashContext | None:
        """What a slash command may touch (None in a replay: there is no runtime to talk to)."""
        runtime = self._runtime()
        if runtime is None:
            return None
        host = self.host
        return SlashContext(
            session=self.session, runtime=runtime, help_text=self.commands.help_text,
            disabled_tools=self.disabled_tools,
            note=self.note, copy=self.copy, display_specs=host.display_specs, calls=self._calls,
            reveal_arguments=self.reveal_arguments, refresh_provider=self.refresh_provider,
            retry=self.action_retry, fork=self.action_fork, clear=self.clear_screen,
            new_conversation=host.new_conversation, show_mcp_servers=host.action_mcp_servers)

    def _calls(self) -> list[ToolCallBlock]:
        from widgets.tool_card import ToolCard

        return [card.block for card in self.query(ToolCard)]

    def _idle(self) -> bool:
        if not self._attached:
            return False
        if self.session.busy:
            self.notify("A turn is still running: press Esc to cancel it first.", markup=False, severity="warning")
            return False
        return self._runtime() is not None and bool(self._entries)

    def _current(self, kind: str | None = None) -> int | None:
        """The selected entry, else the last shown (of ``kind``: user or turn)."""
        if self._selected is not None and self._selected in self._entries:
            if kind is None or self._kind(self._selected) == kind:
                return self._selected
            return None
        candidates = [seq for seq in self._entries if kind is None or self._kind(seq) == kind]
        return candidates[-1] if candidates else None

    def _kind(self, seq: int) -> str:
        return "turn" if isinstance(self._entries[seq], int) else "user"

    def _widgets_of(self, seq: int) -> list[Widget]:
        entry = self._entries.get(seq)
        if entry is None:
            return []
        if isinstance(entry, int):
            return list(self._turn_widgets.get(entry, {}).values())
        return [entry]

    def _select(self, seq: int | None) -> None:
        if self._selected is not None:
            for widget in self._widgets_of(self._selected):
                widget.remove_class("-selected")
        self._selected = seq
        if seq is None:
            self.query_one("#conversation", VerticalScroll).anchor()  # follow the latest output again
            return
        widgets = self._widgets_of(seq)
        for widget in widgets:
            widget.add_class("-selected")
        if widgets:
            self.query_one("#conversation", VerticalScroll).release_anchor()
            widgets[0].scroll_visible(animate=False, top=True)
        stored = self.session.stored
        entry = stored.entry(seq) if stored is not None else None
        versions = f" · version {entry.siblings[0]} of {entry.siblings[1]}" if entry and entry.siblings[1] > 1 else ""
        what = "your message" if self._kind(seq) == "user" else "reply"
        keys = "Alt+E edits" if self._kind(seq) == "user" else "Ctrl+G regenerates"
        self._set_state(f"selected {what} (entry {seq}){versions} — {keys} · /fork forks here")

    def action_select(self, step: int) -> None:
        seqs = list(self._entries)
        if not seqs:
            return
        if self._selected is None or self._selected not in self._entries:
            index = len(seqs) if step < 0 else -1
        else:
            index = seqs.index(self._selected)
        index = min(max(index + step, 0), len(seqs) - 1)
        self._select(seqs[index])

    def action_sibling(self, step: int) -> None:
        """Show the previous / next version of the selected entry (else of the
        last entry that has several)."""
        if not self._idle():
            return
        stored = self.session.stored
        if stored is None:
            return
        seq = self._selected if self._selected in self._entries else next(
            (s for s in reversed(self._entries) if (e := stored.entry(s)) is not None and e.siblings[1] > 1), None)
        entry = stored.entry(seq) if seq is not None else None
        if entry is None or entry.siblings[1] < 2:
            self.notify("This entry has no other versions.", markup=False)
            return
        family = stored.children(entry.parent)
        target = family[(family.index(entry) + step) % len(family)]
        self.session.stored = self._stored_runtime().show(self.session, target.seq)
        self._rerender(select=target.seq)

    def action_edit(self) -> None:
        """The selected message (else the last one) into the composer; Enter sends it as a new branch."""
        if not self._idle():
            return
        seq = self._current("user")
        widget = self._entries.get(seq) if seq is not None else None
        if seq is None or not isinstance(widget, UserMessage):
            self.notify("Select one of your messages first (Alt+↑).", markup=False)
            return
        self._editing = seq
        prompt = self.query_one(PromptInput)
        prompt.text = widget.message_text
        prompt.focus()
        self._set_state(f"editing entry {seq} — Enter sends it as a new version · Esc cancels")

    def action_regenerate(self) -> None:
        """A new version of the selected reply (else the last one), beside the old."""
        if not self._idle():
            return
        seq = self._current("turn")
        if seq is None:
            self.notify("Select a reply first (Alt+↑).", markup=False)
            return
        self._branch_before(seq)
        self._run("", regenerate=True)

    def action_fork(self) -> None:
        """A new conversation holding this one up to the selected entry (else all of it shown)."""
        if not self._idle():
            return
        seq = self._current()
        try:
            fork = self._stored_runtime().fork(self.session.conversation, seq)
        except Exception as exc:  # a stated failure, never a crash
            self.notify(f"Cannot fork: {exc}", markup=False, severity="error")
            return
        self.host.open_conversation(fork)
        self.app.notify(f"Forked into a new conversation ({fork[:12]}); the original is unchanged.", markup=False)

    def _branch_before(self, seq: int) -> None:
        """An edited message or a regenerated reply: a new version beside ``seq``."""
        self.session.stored = self._stored_runtime().branch_before(self.session, seq)
        self._branched = True
        self._rerender()

    def _rerender(self, select: int | None = None) -> None:
        """The path the session is on, from the store, as a reopen shows it."""
        conversation = self.query_one("#conversation", VerticalScroll)
        conversation.remove_children()
        self._turn_widgets.clear()
        self._entries.clear()
        self._selected = None
        if self.welcome:
            conversation.mount(NoteBlock(self.welcome, "quiet"))
        if self.session.stored is not None:
            self._render_stored(self.session.stored)
        if select is not None and select in self._entries:
            self._select(select)
        else:
            conversation.anchor()
            self._set_state("ready")

    @property
    def conversation(self) -> VerticalScroll:
        return self.query_one("#conversation", VerticalScroll)

    def action_page(self, direction: int) -> None:
        conversation = self.conversation
        if direction < 0:
            conversation.release_anchor()  # reading back: new output must not pull the view down
            conversation.scroll_page_up(animate=False)
        else:
            conversation.scroll_page_down(animate=False)

    def action_home(self) -> None:
        """Home: the start of the line being typed, else the top of the conversation."""
        prompt = self.prompt
        if prompt is not None and self.focused is prompt and prompt.text:
            prompt.action_cursor_line_start()
        else:
            self.conversation.release_anchor()
            self.conversation.scroll_home(animate=False)

    def action_end(self) -> None:
        """End: the end of the line being typed, else the latest output."""
        prompt = self.prompt
        if prompt is not None and self.focused is prompt and prompt.text:
            prompt.action_cursor_line_end()
        else:
            self.action_jump_to_latest()

    def action_jump_to_latest(self) -> None:
        conversation = self.conversation
        conversation.scroll_end(animate=False, immediate=True)
        conversation.anchor()
        self.query_one("#new-output", Static).set_class(False, "-shown")

    def _scrolled(self, _: float) -> None:
        conversation = self.conversation
        if conversation.scroll_y >= conversation.max_scroll_y:
            self.query_one("#new-output", Static).set_class(False, "-shown")

    def _grew(self) -> None:
        """New output: say so when the user is reading further up."""
        self._last_byte = self.clock()
        conversation = self.conversation
        if conversation.max_scroll_y > 0 and conversation.scroll_y < conversation.max_scroll_y - 1:
            self.query_one("#new-output", Static).set_class(True, "-shown")

    def action_edit_in_editor(self) -> None:
        """Ctrl+E: the prompt in $VISUAL / $EDITOR, for a long one."""
        prompt = self.prompt
        if prompt is None:
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        fd, name = tempfile.mkstemp(prefix="callstream-prompt-", suffix=".md")
        path = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(prompt.text)
            try:
                with self.app.suspend():
                    code = subprocess.call([*shlex.split(editor), str(path)])
            except SuspendNotSupported:
                code = subprocess.call([*shlex.split(editor), str(path)], stdin=subprocess.DEVNULL)
            if code != 0:
                self.notify(f"The editor exited with {code}; the prompt is unchanged.", markup=False,
                            severity="warning")
                return
            text = path.read_text(encoding="utf-8").rstrip("\n")
        except OSError as exc:
            self.notify(f"Cannot run the editor {editor!r}: {exc}", markup=False, severity="error")
            return
        finally:
            path.unlink(missing_ok=True)
        prompt.text = text
        last = prompt.document.line_count - 1
        prompt.cursor_location = (last, len(prompt.document.get_line(last)))
        prompt.focus()

    def action_copy_picker(self) -> None:
        from .copying import CopyPicker, copyables

        context = self._slash_context()
        items = copyables(context) if context is not None else []
        if not items:
            self.notify("Nothing to copy yet.", markup=False)
            return
        self.app.push_screen(CopyPicker(items, self.copy))

    def copy(self, text: str, what: str) -> None:
        """To the clipboard (OSC 52: works over SSH and inside tmux)."""
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        self.notify(f"Copied {what} ({lines} line{'s' if lines != 1 else ''}, {len(text)} characters).",
                    markup=False)

    def reveal_arguments(self, call: ToolCallBlock) -> None:
        """The explicit request to see a card's whole arguments (the default stays allow-listed)."""
        from widgets.tool_card import ToolCard

        for card in self.query(ToolCard):
            if card.block is call:
                card.reveal_arguments()
                card.scroll_visible(animate=False)
                return

    def refresh_provider(self) -> None:
        self.query_one(StatusLine).provider = self.session.endpoint.label

    def clear_screen(self) -> None:
        """/clear: the widgets go; the conversation (and what the model is sent) stays."""
        self.conversation.remove_children()
        self._turn_widgets.clear()
        self._entries.clear()
        self._selected = None
        self._usage_line = None
        self.note("Screen cleared. The conversation itself is unchanged (the model still sees all of it); "
                  "/new starts a fresh one.")

    def note(self, text: str, kind: str = "quiet") -> None:
        """A line from the client itself (command output), never from the model."""
        self._mount(NoteBlock(text, kind))
        self.action_jump_to_latest()

    # -- time and waiting ----------------------------------------------------------

    def _begin_timing(self) -> None:
        self._started = self._last_byte = self.clock()
        self.query_one(StatusLine).detail = ""
        if self._ticker is None:
            self._ticker = self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        if not self.session.busy:
            return
        now = self.clock()
        quiet = now - self._last_byte
        elapsed = now - self._started
        if elapsed < 1:  # nothing to say yet (and a frozen clock in a snapshot says nothing)
            return
        detail = f"{elapsed:.0f} s"
        if quiet >= QUIET_AFTER and self._awaiting_provider():
            detail += f" · waiting {quiet:.0f} s for the provider"
        self.query_one(StatusLine).detail = detail

    def _end_timing(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        elapsed = self.clock() - self._started
        self.query_one(StatusLine).detail = f"took {elapsed:.1f} s"

    # -- events from the conversation loop ---------------------------------------

    def _awaiting_provider(self) -> bool:
        """Only a request being streamed waits for the provider: while a call
        awaits the user's answer or tools run, the silence is not the provider's."""
        return self.query_one(StatusLine).state.startswith("streaming")

    def _set_state(self, state: str) -> None:
        if state.startswith("streaming") and not self._awaiting_provider():
            self._last_byte = self.clock()  # a new request: its silence counts from now
        self.query_one(StatusLine).state = state

    def _mount(self, widget: Widget) -> None:
        self.query_one("#conversation", VerticalScroll).mount(widget)

    def _on_chat_event(self, event: ChatEvent) -> None:
        """The screen's listener. A display error stays the screen's: it is
        said once, and the turn (and its transcript) goes on."""
        try:
            self._show(event)
        except Exception as exc:
            if not self._display_failed:
                self._display_failed = True
                self._mount(NoteBlock(f"Part of this turn could not be shown ({one_line(_describe(exc), 300)}); "
                                      "it goes on, and the transcript keeps all of it.", "error"))

    def _show(self, event: ChatEvent) -> None:
        from widgets.prose import ProseBlock
        from widgets.reasoning import ReasoningBlock
        from widgets.tool_card import ToolCard

        from ..chat.events import (
            AttemptFailed,
            AttemptStarted,
            BlockGrew,
            BlockOpened,
            CallState,
            ConversationMoved,
            ExchangeDone,
            TurnDone,
            UserSent,
        )

        if isinstance(event, BlockGrew | BlockOpened):
            self._grew()
        if isinstance(event, BlockGrew):
            widget = self._turn_widgets.get(event.turn, {}).get(event.index)
            if isinstance(widget, ProseBlock | ReasoningBlock):
                widget.add(event.delta)
            elif isinstance(widget, ToolCard):
                widget.feed(event.delta)
                if not event.delta:  # a name (so the allow-list) or a provider result changed
                    widget.display_spec, widget.result_spec = self.host.display_specs(widget.block.name)
                    widget.refresh_card()
        elif isinstance(event, BlockOpened):
            self._open_block(event)
        elif isinstance(event, CallState):
            widget = self._turn_widgets.get(event.turn, {}).get(event.index)
            if isinstance(widget, ToolCard):
                widget.refresh_card()
                if event.state == "awaiting approval":
                    self._awaiting(widget)
            if event.state == "running":
                self._set_state("running tools…")
        elif isinstance(event, UserSent):
            self._exchange_spent = self._exchange_model = self._usage_line = None  # a new exchange
            message = UserMessage(event.text)
            self._mount(message)
            if self.session.position is not None:  # the transcript writer has stored it (it listens first)
                self._entries[self.session.position] = message
        elif isinstance(event, ConversationMoved):
            self._mount(NoteBlock(event.message, "quiet"))
            self._render_items(event.added)
            self._spent_live = total([self._spent_live, *(getattr(i, "usage", None) for i in event.added)])
            self._show_spent()
        elif isinstance(event, AttemptStarted):
            if self.session.position is not None:
                self._entries[self.session.position] = event.turn
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
            if event.result.detail:
                self._mount(ErrorDetails(event.result.detail))  # the provider's whole text, folded
        elif isinstance(event, ExchangeDone):
            self.call_after_refresh(collector.between_turns)  # the full collection, while the reply is read
            self._last_failed = event.status in ("failed", "cancelled")
            if event.message:
                self._mount(NoteBlock(event.message, "error"))
            if event.model is not None or event.usage is not None:  # requests were made
                self._spent_live = total([self._spent_live, event.usage])
                self._exchange_spent = total([self._exchange_spent, event.usage])
                self._exchange_model = event.model or self._exchange_model
                self._show_usage_line()
                self._show_spent()
            if self._branched and self._runtime() is not None and self.session.position is not None:
                # a new version: show the tree's markers, as a reopen would
                self._branched = False
                self.call_later(self._show_branch)
            self._set_state(_STATUS.get(event.status, event.status))

    # -- approvals: the dispatcher waits; the card shows it; the key goes back ---------

    def _awaiting(self, card: ToolCard) -> None:
        self._set_state("waiting for your approval")
        if card.approval is not None:
            card.approval.focus()
            card.scroll_visible()
        self.app.bell()
        driver = getattr(self.app, "_driver", None)
        if driver is not None:  # OSC 9: a desktop notification where the terminal shows them
            driver.write(f"\x1b]9;callstream: {card.block.name} needs your approval\x07")

    @on(ApprovalPrompt.Answered)
    def _answered(self, message: ApprovalPrompt.Answered) -> None:
        from ..tools.approvals import Answer

        answer = Answer(message.choice, message.reason)
        self.query_one(PromptInput).focus()
        if self.session.answer(message.key, answer):
            self._set_state("running tools…" if message.choice != "deny" else "streaming…")
        elif not self.session.busy and any(c.key == message.key for c in self.session.pending_approvals()):
            self._resume({message.key: answer})

    @work(group="chat", exclusive=True, exit_on_error=False)
    async def _resume(self, answers: dict[str, Any]) -> None:
        """A stored pending approval (after a crash, or from ``ask``) answered:
        run it under its stored key, then let the model read the result."""
        self._set_state("running tools…")
        if await self.session.resume_pending(answers):
            await self.session.go_on()
        else:
            self._set_state("waiting for approval")

    def _open_block(self, event: Any) -> None:
        # live widgets start empty: every character arrives as a BlockGrew after this
        widget = self._widget_for(event.block, finished=False)
        self._turn_widgets.setdefault(event.turn, {})[event.index] = widget
        self._mount(widget)

    def _widget_for(self, block: Any, finished: bool) -> Widget:
        from widgets.prose import ProseBlock
        from widgets.reasoning import ReasoningBlock
        from widgets.tool_card import ToolCard

        from ..stream import ToolCallBlock

        if block.type == "text":
            return ProseBlock(block.text if finished else "")
        if block.type == "reasoning":
            return ReasoningBlock(block.text if finished else "")
        assert isinstance(block, ToolCallBlock)
        display, result_display = self.host.display_specs(block.name)
        card = ToolCard(block, display, result_display, finished=finished)
        tool = self.session.registry.get(block.name)
        card.offer_always = tool is None or tool.approval != "always-ask"
        return card

    def _show_branch(self) -> None:
        if self.session.busy or self.session.position is None:
            return
        state = self.query_one(StatusLine).state
        self.session.stored = self._stored_runtime().store.load(self.session.conversation, self.session.position)
        self._rerender()
        self._set_state(state)

    def _render_stored(self, stored: Any) -> None:
        """A reopened conversation, in the shape it was shown in live (with
        a ‹n/m› marker above an entry that has other versions)."""
        self._render_items(stored.items)
        # every turn of every branch was paid for: the conversation's cost is the whole tree's
        self._spent_stored = total(getattr(item, "usage", None) for item in stored.tree or stored.items)
        self._spent_live = None
        self._show_spent()

    # -- what it cost ------------------------------------------------------------------

    def _show_usage_line(self) -> None:
        """The exchange's line (model · tokens), below everything it showed; an
        exchange that goes on (Ctrl+R, an approval answered) moves it down, summed."""
        if self._usage_line is not None:
            self._usage_line.remove()
        self._usage_line = UsageLine(self._exchange_model, self._exchange_spent)
        self._mount(self._usage_line)

    def _show_spent(self) -> None:
        spent = usage_words(total([self._spent_stored, self._spent_live]), brief=True)
        self.query_one(StatusLine).usage = f"conversation {spent}" if spent else ""

    def _render_items(self, items: list[Any]) -> None:
        from ..store.transcripts import StoredUser

        message: str | None = None
        status: str | None = None
        exchange: list[Any] = []  # the turns since the last user message

        def close_exchange() -> None:
            # the line a live exchange ended with: only where requests were recorded as made
            if any(t.usage is not None or t.model is not None for t in exchange):
                self._exchange_spent = total(t.usage for t in exchange)
                self._exchange_model = next((t.model for t in reversed(exchange) if t.model), None)
                self._usage_line = None
                self._show_usage_line()
            exchange.clear()

        for item in items:
            marked = item.siblings[1] > 1
            if isinstance(item, StoredUser):
                if message:
                    self._mount(NoteBlock(message, "error"))
                close_exchange()
                if marked:
                    self._mount(BranchMarker(*item.siblings))
                widget = UserMessage(item.text)
                widget.set_class(marked, "-after-marker")
                self._mount(widget)
                self._entries[item.seq] = widget
                message, status = item.exchange_message, item.exchange
                continue
            if marked:
                self._mount(BranchMarker(*item.siblings))
            for failure in item.failures:
                # a Ctrl+R retry keeps the note the earlier run ended with, as the live screen does
                note = NoteBlock(failure, "error" if failure.startswith("Interrupted:") else "warning")
                note.set_class(marked, "-after-marker")
                marked = False
                self._mount(note)
            blocks = {i: self._widget_for(block, finished=True) for i, block in enumerate(item.blocks)}
            self._turn_widgets[item.turn] = blocks
            self._entries[item.seq] = item.turn
            for block_widget in blocks.values():
                block_widget.set_class(marked, "-after-marker")
                marked = False
                self._mount(block_widget)
            if item.note:
                self._mount(NoteBlock(item.note, "error"))
            if item.detail:
                self._mount(ErrorDetails(item.detail))
            if item.killed:
                status = "failed"
            exchange.append(item)
        if message:
            self._mount(NoteBlock(message, "error"))
        close_exchange()
        if status:
            self._set_state(_STATUS.get(status, status))
