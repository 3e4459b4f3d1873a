"""What a tool is, and what it is handed when it runs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..stream.elicitation import Elicitation
from ..stream.history import ToolSpec
from ..stream.sampling import SamplingRequest

__all__ = ["Tool", "ToolContext", "ToolError", "OutcomeUnknown", "NotSent", "DisplayField"]


class ToolError(Exception):
    """The tool failed; the message is shown to the user and told to the model."""


class OutcomeUnknown(Exception):
    """The tool may or may not have acted (its transport died or it stopped
    answering mid-call): recorded as ``unknown`` and never run again."""


class NotSent(Exception):
    """The call never reached the tool (its server died between calls and
    could not be started again): nothing can have happened, so it is
    ``not run``, and the message says why."""


@dataclass(slots=True, frozen=True)
class DisplayField:
    """One allow-listed field: a dotted path into the arguments and a label.
    Anything not listed is hidden from every screen."""

    path: str
    label: str


@dataclass(slots=True)
class ToolContext:
    idempotency_key: str
    #: Set when the turn is cancelled; long tools should look at it.
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    #: ``loop.time()`` after which the tool must stop.
    deadline: float | None = None
    #: Where a tool reports progress while it runs (``stream.progress.progress_words``
    #: makes the line): the dispatcher passes it on to the card. None: nobody listens.
    progress: Callable[[float, float | None, str | None], None] | None = None
    #: Where a tool's server asks the person something while it runs (MCP elicitation): it
    #: sets the request's state and kept answer, and gives the values for the server (None
    #: unless accepted). None: nobody can be asked, so the tool declines itself.
    elicit: Callable[[Elicitation], Awaitable[dict[str, Any] | None]] | None = None
    #: Where a tool's server asks the model something while it runs (MCP sampling): it takes the
    #: request through the person and the model, and leaves its end on it (``returned`` with the
    #: text, or ``refused`` / ``failed`` with the reason). None: nobody can, so it is refused.
    sample: Callable[[SamplingRequest], Awaitable[None]] | None = None


Runner = Callable[[dict[str, Any], ToolContext], Awaitable[str]]
Warmer = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(slots=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    run: Runner
    read_only: bool = False
    display: tuple[DisplayField, ...] = ()
    #: Allow-list for the result's fields on screen (empty: the result is shown whole).
    result_display: tuple[DisplayField, ...] = ()
    #: Seconds a run may take.
    timeout: float = 60.0
    #: Read-only tools may prepare while the call forms (never returns anything).
    warm: Warmer | None = None
    #: "never" | "ask" | "always-ask" (app/tools/approvals.py); None: read-only runs, the rest asks.
    approval: str | None = None
    #: Where the tool comes from, for the approval card and ``mcp list`` ("built-in", "command", "mcp:NAME").
    origin: str = "built-in"
    #: Brings what is known of the tool up to date before a call to it is judged (an MCP server that
    #: announced a changed tool list is listed again first); None: nothing can change it.
    refresh: Callable[[], Awaitable[None]] | None = None

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)
