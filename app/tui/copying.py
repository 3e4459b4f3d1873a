"""Copy: what can be copied from the conversation, and the picker (Ctrl+Y):
replies, code blocks, cards, and each attachment's file path.

The list is built from the session's data (through a ``SlashContext``) (the replies in the
history, the calls' blocks), never from what a widget happens to hold; the
clipboard is Textual's ``copy_to_clipboard`` (OSC 52, so it works over SSH
and inside tmux). A card copies what it shows: its allow-listed fields and
its result line. Its full arguments are only ever *shown*, on an explicit
request from the picker, never copied silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..stream import ToolCallBlock
from ..stream.history import Assistant, User
from ..stream.inert import inert
from ..stream.preview import result_line, visible_fields
from .frames import SteadyFrames

if TYPE_CHECKING:
    from .context import DisplaySpecs, SlashContext

__all__ = ["Copyable", "copyables", "code_blocks", "copy_command", "CopyPicker", "card_text"]

_MARKDOWN = MarkdownIt("commonmark")


@dataclass(frozen=True, slots=True)
class Copyable:
    label: str
    #: The text to copy, or None for an action (``act``) such as showing a card's arguments.
    text: str | None
    act: Callable[[], None] | None = None


def code_blocks(markdown: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced or indented code block, in order."""
    return [(token.info.strip().split(" ")[0] if token.info else "", token.content)
            for token in _MARKDOWN.parse(markdown) if token.type in ("fence", "code_block")]


def replies(context: SlashContext) -> list[str]:
    """The model's replies with any text, oldest first (from the history: the
    exact text, as the model wrote it)."""
    return [entry.text for entry in context.session.history if isinstance(entry, Assistant) and entry.text.strip()]


def card_text(display_specs: Callable[[str], DisplaySpecs], call: ToolCallBlock) -> tuple[str, str]:
    """What a card shows, as text: its allow-listed fields, and its result line."""
    display, result_display = display_specs(call.name)
    fields = visible_fields(call.arguments, display) if call.arguments is not None else []
    shown = "\n".join([call.name, *(f"{label}: {value}" for label, value in fields)])
    result = ""
    if call.result:
        result = result_line(call.result, result_display if call.state == "ran" else [], 10_000)
    return inert(shown), inert(result)


def copyables(context: SlashContext) -> list[Copyable]:
    """Newest first: the last reply, its code blocks, the last cards, earlier replies."""
    items: list[Copyable] = []
    texts = replies(context)
    if texts:
        items.append(Copyable("The last reply", texts[-1]))
        for number, (language, code) in enumerate(code_blocks(texts[-1]), 1):
            first = code.strip().splitlines()[0] if code.strip() else ""
            items.append(Copyable(f"Code block {number}{f' ({language})' if language else ''}: {first[:50]}", code))
    for call in reversed(context.calls()[-6:]):
        shown, result = card_text(context.display_specs, call)
        items.append(Copyable(f"Card {call.name}: its shown fields", shown))
        if result:
            items.append(Copyable(f"Card {call.name}: its result", result))
        items.append(Copyable(f"Card {call.name}: show all its arguments on the card", None,
                              partial(context.reveal_arguments, call)))
    for number, text in reversed(list(enumerate(texts[:-1], 1))):
        first = text.strip().splitlines()[0]
        items.append(Copyable(f"Reply {number}: {first[:50]}", text))
    items += attachment_paths(context)
    return items


def attachment_paths(context: SlashContext) -> list[Copyable]:
    """Each attachment sent in this conversation, newest first: the path of
    its file in the data dir (kept by content hash), to open it elsewhere."""
    from ..files.paths import data_dir
    from ..store.attachfiles import AttachmentFiles

    files = AttachmentFiles(data_dir() / "attachments")
    sent = [item for entry in context.session.history if isinstance(entry, User) for item in entry.attachments]
    found: list[Copyable] = []
    for item in reversed(list({item.digest: item for item in sent}.values())):
        found.append(Copyable(f"Attachment {item.name}: its file's path", str(files.path(item.digest))))
    return found


def copy_command(context: SlashContext, argument: str) -> None:
    """``/copy``, ``/copy code [N]``, ``/copy card``, ``/copy result``."""
    words = argument.split()
    texts = replies(context)
    if not words:
        if not texts:
            context.note("Nothing to copy yet: no reply so far.", "warning")
            return
        context.copy(texts[-1], "the last reply")
        return
    if words[0] == "code":
        blocks = code_blocks(texts[-1]) if texts else []
        if not blocks:
            context.note("The last reply has no code block.", "warning")
            return
        try:
            number = int(words[1]) if len(words) > 1 else 1
        except ValueError:
            number = 0
        if not 1 <= number <= len(blocks):
            context.note(f"The last reply has {len(blocks)} code block{'s' if len(blocks) != 1 else ''}.", "warning")
            return
        context.copy(blocks[number - 1][1], f"code block {number}")
        return
    if words[0] in ("card", "result"):
        calls = context.calls()
        if not calls:
            context.note("There is no tool card yet.", "warning")
            return
        shown, result = card_text(context.display_specs, calls[-1])
        if words[0] == "card":
            context.copy(shown, f"the {calls[-1].name} card's shown fields")
        elif result:
            context.copy(result, f"the {calls[-1].name} card's result")
        else:
            context.note("The last card has no result.", "warning")
        return
    context.note("Usage: /copy, /copy code [N], /copy card, /copy result (Ctrl+Y picks any block)", "warning")


class CopyPicker(SteadyFrames[None], ModalScreen[None]):
    """Ctrl+Y: pick a block to copy (↑/↓, Enter; Esc closes)."""

    DEFAULT_CSS = """
    CopyPicker { align: center middle; }
    CopyPicker > Vertical { width: 80%; max-width: 100; height: auto; max-height: 80%;
                            border: round $accent; background: $surface; padding: 0 1; }
    CopyPicker OptionList { height: auto; max-height: 20; border: none; }
    """

    BINDINGS = [Binding("escape", "dismiss_picker", "Close", show=True)]

    def __init__(self, items: list[Copyable], copy: Callable[[str, str], None]) -> None:
        super().__init__()
        self.items = items
        self._copy = copy

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content("Copy to the clipboard — Enter copies, Esc closes"))
            yield OptionList(*[Option(Content(inert(item.label)), id=str(i)) for i, item in enumerate(self.items)])

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        item = self.items[int(event.option.id or 0)]
        self.dismiss(None)
        if item.act is not None:
            item.act()
        elif item.text is not None:
            self._copy(item.text, item.label[:1].lower() + item.label[1:])

    def action_dismiss_picker(self) -> None:
        self.dismiss(None)
