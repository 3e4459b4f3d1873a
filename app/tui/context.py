"""What a slash command may touch: a narrow, typed context instead of the screen.

The chat screen builds one ``SlashContext`` per command it runs. A command
reads the session and the runtime's pieces, answers with a note, copies to
the clipboard, or asks the screen for one of a few named things (retry, fork,
clear, …); it never reaches into the screen's widgets or the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..chat.session import ChatSession
    from ..runtime.wiring import Runtime
    from ..stream import ToolCallBlock
    from ..stream.attachments import Attachment

__all__ = ["SlashContext", "DisplaySpecs", "Note"]

#: A tool's allow-lists: the argument fields a card shows, the result fields it shows.
DisplaySpecs = tuple[list[tuple[str, str]], list[tuple[str, str]]]


class Note(Protocol):
    """A line from the client on the transcript (kind: quiet, warning, error), never from the model."""

    def __call__(self, text: str, kind: str = "quiet") -> None: ...


@dataclass(frozen=True, slots=True)
class SlashContext:
    session: ChatSession
    runtime: Runtime
    #: /help: the commands this screen knows, one line each.
    help_text: Callable[[], str]
    #: Tools switched off with /tools off (this conversation only); the screen's own set.
    disabled_tools: set[str]
    note: Note
    #: To the clipboard, and say what was copied (text, what).
    copy: Callable[[str, str], None]
    display_specs: Callable[[str], DisplaySpecs]
    #: The tool calls shown, oldest first.
    calls: Callable[[], list[ToolCallBlock]]
    reveal_arguments: Callable[[ToolCallBlock], None]
    #: The status line names the provider again (after /model, /provider).
    refresh_provider: Callable[[], None]
    retry: Callable[[], None]
    #: /compact: summarise the older part and go on from the summary on a new branch.
    compact: Callable[[], None]
    fork: Callable[[], None]
    clear: Callable[[], None]
    new_conversation: Callable[[], None]
    show_mcp_servers: Callable[[], None]
    #: /attach: a file to send with the next message (its chip shows when it is sent).
    attach: Callable[[Attachment], None]
    #: Text put in the input box for the person to review and send (an MCP prompt's expansion).
    propose: Callable[[str], None]
    #: A resource (server's URI, inert text) shown on a call's card (/resource open).
    show_resource: Callable[[ToolCallBlock, str, str], None]
