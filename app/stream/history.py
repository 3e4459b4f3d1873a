"""The conversation as provider-neutral history.

Both sides of the wire use it: the chat loop builds each provider's request
body from it, and the embedded demo model parses each provider's request
body back into it. An interrupted turn is an ``Assistant`` with its prose and
a ``note``, and no calls: a call that never completed is never sent back as
a call, and no result is fabricated for it (brief chapter 8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .attachments import Attachment

__all__ = ["User", "Assistant", "CallRecord", "ToolResult", "Entry", "ToolSpec", "changed", "edits"]


@dataclass(slots=True)
class User:
    text: str
    #: Files and images sent with the message (each dialect encodes them as its parts).
    attachments: list[Attachment] = field(default_factory=list)


@dataclass(slots=True)
class CallRecord:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class Assistant:
    text: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    #: One line saying the turn was interrupted and that its call did not run.
    note: str | None = None


@dataclass(slots=True)
class ToolResult:
    call_id: str
    name: str
    #: The result as text (JSON for the built-in tools), as the model reads it.
    content: str
    is_error: bool = False
    #: Images the tool returned: inside the result where the wire takes them
    #: (Anthropic), else in a user-side message right after the results.
    images: list[Attachment] = field(default_factory=list)


Entry = User | Assistant | ToolResult

#: Changes made in place to entries already in a history (``changed``).
_edits = 0


def changed() -> None:
    """An entry already in a history was changed in place (a tool result given its images). A request
    builder gives the items it built for a history's entries again while they are the same objects
    (``dialects/built.py``); after this call it builds them anew."""
    global _edits
    _edits += 1


def edits() -> int:
    """How many times ``changed`` was called."""
    return _edits


@dataclass(slots=True)
class ToolSpec:
    """What a provider is told about a tool: name, description, JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]
