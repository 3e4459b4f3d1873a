"""The composer: the input box, the messages queued behind a running turn,
the prompt history, the hint of matching slash commands, and Ctrl+E.

What a submitted text means (a command, a prompt, an edited message) is the
screen's decision: the composer only holds and shows what is being written.
Its widgets are the screen's own children (``widgets``), not in a container
of their own: the screen's vertical layout sizes the transcript by them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from textual import events
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Collapsible, Static, TextArea

from widgets.prompt_input import PromptInput

from ..stream.inert import inert
from .editor import run_editor

if TYPE_CHECKING:
    from .host import ChatHost
    from .slash import CommandTable

__all__ = ["Composer", "offer_attachment"]


def offer_attachment(pasted: str) -> str | None:
    """A paste that is one file's path (a file dropped on the terminal) is
    offered as ``/attach PATH``: Enter attaches it; deleting ``/attach`` sends it as text."""
    from ..files.typed_paths import pasted_path

    path = pasted_path(pasted)
    if path is None:
        return None
    return f"/attach {path}"  # the whole rest of the line is the path: spaces need no quoting


class Composer:
    def __init__(self, owner: Widget, host: ChatHost, commands: CommandTable) -> None:
        #: The screen the composer's widgets are in.
        self._owner = owner
        self.host = host
        self.commands = commands
        #: Messages typed while a turn ran, sent in order once it is done.
        self.queued: list[str] = []
        #: What the hint line shows ("" hidden): a key that leaves it as it is changes nothing on screen.
        self._hint_text = ""
        #: Tab's other completers, after the commands' (``@server:uri``: ``mcp_commands``).
        self.completers: list[Callable[[str], str | None]] = []

    def widgets(self) -> Iterator[Widget]:
        yield Static(id="queued", classes="bar")
        yield PromptInput(self.host.prompt_history, self.complete, offer_attachment)
        yield Static(id="hint", classes="bar")

    def complete(self, text: str) -> str | None:
        """Tab: a command's name, else what another completer makes of the text."""
        return self.commands.complete(text) or next((c for f in self.completers if (c := f(text)) is not None), None)

    def propose(self, text: str) -> None:
        """Put ``text`` in the box for the person to review and send (what was typed is replaced)."""
        prompt = self.prompt
        if prompt is not None:
            prompt.text = text
            self._cursor_to_end(prompt)
            prompt.focus()

    def completed_later(self, before: str, after: str) -> None:
        """A completion that came later (a server's): applied only if the box still holds ``before``."""
        prompt = self.prompt
        if prompt is not None and prompt.text == before:
            prompt.text = after
            self._cursor_to_end(prompt)
            prompt.focus()  # the Tab that asked moved the focus on

    @property
    def prompt(self) -> PromptInput | None:
        """The input box (None where it was taken away: a replay takes no input)."""
        return self._owner.query_one_optional(PromptInput)

    # -- the queue ------------------------------------------------------------------

    def queue(self, text: str) -> None:
        self.queued.append(text)
        self.show_queue()

    def next_queued(self) -> str:
        text = self.queued.pop(0)
        self.show_queue()
        return text

    def return_queue(self) -> None:
        """The turn did not finish: queued messages go back into the box, not to the model."""
        prompt = self.prompt
        text = "\n\n".join(self.queued)
        self.queued.clear()
        self.show_queue()
        if prompt is not None:
            prompt.text = text + ("\n\n" + prompt.text if prompt.text.strip() else "")
            self._cursor_to_end(prompt)  # what is typed next goes after it, not in front

    @staticmethod
    def _cursor_to_end(prompt: PromptInput) -> None:
        last = prompt.document.line_count - 1
        prompt.cursor_location = (last, len(prompt.document.get_line(last)))

    def show_queue(self) -> None:
        bar = self._owner.query_one("#queued", Static)
        if self.queued:
            first = self.queued[0].strip().splitlines()[0] if self.queued[0].strip() else ""
            more = f" (+{len(self.queued) - 1} more)" if len(self.queued) > 1 else ""
            bar.update(Content(f"queued: {inert(first)[:200]}{more} — sent when this turn ends"))
        bar.set_class(bool(self.queued), "-shown")

    # -- keys from elsewhere ------------------------------------------------------------

    def take_stray_key(self, event: events.Key, focused: Widget | None) -> None:
        """A printable key while the focus is elsewhere goes to the input box, but
        only from what Tab or a click lands on (the transcript, a fold or its
        title): an approval prompt or a list keeps its own keys."""
        prompt = self.prompt
        if prompt is None or not event.is_printable or event.character is None:
            return
        if focused is not None and not (isinstance(focused, VerticalScroll | Collapsible)
                                        or isinstance(focused.parent, Collapsible)):
            return
        prompt.focus()
        prompt.insert(event.character)
        event.stop()
        event.prevent_default()

    def to_line_edge(self, focused: Widget | None, end: bool) -> bool:
        """Home / End in the line being typed; False when the box is not focused or empty."""
        prompt = self.prompt
        if prompt is None or focused is not prompt or not prompt.text:
            return False
        if end:
            prompt.action_cursor_line_end()
        else:
            prompt.action_cursor_line_start()
        return True

    # -- history, hints, the editor ----------------------------------------------------

    def save_history(self) -> None:
        prompt = self.prompt
        if prompt is not None:
            self.host.save_prompt_history(prompt.prompt_history)

    def typed(self, event: TextArea.Changed) -> None:
        """The hint under the box: the commands the typed ``/wor`` could become."""
        text = event.text_area.text
        matches = self.commands.matching(text) if text.startswith("/") and " " not in text.strip() else []
        self.hint("   ".join(f"{self.commands.usage_of(c.name)} — {c.help}" for c in matches[:4]) if matches else "")

    def hint(self, text: str) -> None:
        """Every key asks for the hint: only a changed text touches the line,
        and never with a layout (the line is one row the screen's width, see
        the screen's CSS): a layout of the screen walks every widget of the
        conversation, which is what a key press used to wait behind. Showing
        or hiding the line is the one change that moves the box, and a layout."""
        hint = self._owner.query_one_optional("#hint", Static)
        if hint is None or text == self._hint_text:
            return
        self._hint_text = text
        hint.update(Content(text), layout=False)
        hint.set_class(bool(text), "-shown")

    def edit_in_editor(self) -> None:
        """Ctrl+E: the prompt in $VISUAL / $EDITOR, for a long one."""
        prompt = self.prompt
        if prompt is None:
            return
        text = run_editor(self._owner.app, prompt.text)
        if text is None:
            return
        prompt.text = text
        self._cursor_to_end(prompt)
        prompt.focus()
