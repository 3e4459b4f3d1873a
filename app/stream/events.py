"""The provider-neutral events every dialect emits (DESIGN.md, step 3).

A dialect turns wire frames into these and nothing else; the assembler is the
only consumer. ``slot`` is whatever per-call coordinate the wire format puts
on every fragment (index, output_index, content block index); ``None`` means
the server left it out, which the assembler resolves.
"""

from __future__ import annotations

from dataclasses import dataclass

from .restated import Restated
from .usage import Usage

__all__ = [
    "TextDelta",
    "ReasoningDelta",
    "CallStarted",
    "ArgsDelta",
    "CallEnded",
    "ServerResult",
    "TurnEnded",
    "ProviderError",
    "StreamMalformed",
    "UsageReported",
    "ModelReported",
    "Event",
    "TRUNCATION_REASONS",
]


@dataclass(slots=True)
class TextDelta:
    text: str


@dataclass(slots=True)
class ReasoningDelta:
    text: str


@dataclass(slots=True)
class CallStarted:
    """A call announced (or re-announced: servers repeat id and name).

    ``provider_executed`` marks calls the provider runs itself (Anthropic
    ``server_tool_use``): shown, never dispatched locally.
    """

    slot: object
    id: str | None
    name: str | None
    provider_executed: bool = False


@dataclass(slots=True)
class ArgsDelta:
    """An argument fragment, appended as an opaque string.

    ``fragment`` is a ``str`` on every well-behaved wire. Some servers send the
    arguments as a JSON value instead (llama.cpp, Gemini's whole ``args``);
    the dialect passes that value through unchanged and the assembler decides.
    """

    slot: object
    fragment: object


@dataclass(slots=True)
class CallEnded:
    """The provider has no more fragments for this call.

    ``arguments`` is the full argument text when the wire restates it at the
    end (Responses' ``.done``); the assembler reconciles it with the deltas.
    A restatement too long to hold beside them comes as its ``Restated``
    (length and digest, ``restated``), compared with the buffer's.
    """

    slot: object
    arguments: str | Restated | None = None


@dataclass(slots=True)
class ServerResult:
    """A result block for a provider-executed call (never dispatched locally)."""

    call_id: str | None
    kind: str
    content: object


@dataclass(slots=True)
class TurnEnded:
    """The dialect's positive terminal marker, with the finish reason seen.

    ``ends_open_calls`` is set by dialects that have no per-call end event
    (OpenAI Chat), when the finish reason allows the calls still open to be
    taken as complete (``tool_calls``, ``stop``).
    """

    stop_reason: str | None
    ends_open_calls: bool = False
    #: Set where the marker itself says "incomplete" whatever the reason.
    truncated: bool = False


@dataclass(slots=True)
class ProviderError:
    message: str
    code: str | None = None
    #: The whole event it came in (``full_text`` makes it safe to keep), for the details.
    detail: str | None = None


@dataclass(slots=True)
class StreamMalformed:
    """The wire itself broke its format (non-JSON data, spliced generations)."""

    message: str


@dataclass(slots=True)
class UsageReported:
    """Token counts the wire reported, cumulative for the reply so far (a
    later report's counts replace an earlier one's; its gaps keep them)."""

    usage: Usage


@dataclass(slots=True)
class ModelReported:
    """The model the provider says answered (``gpt-4o-2024-08-06`` for a
    request that named ``gpt-4o``); the first report is kept."""

    name: str


Event = (
    TextDelta
    | ReasoningDelta
    | CallStarted
    | ArgsDelta
    | CallEnded
    | ServerResult
    | TurnEnded
    | ProviderError
    | StreamMalformed
    | UsageReported
    | ModelReported
)

#: Finish reasons that mean the output limit cut the turn off.
TRUNCATION_REASONS = frozenset(
    {"length", "max_tokens", "MAX_TOKENS", "incomplete", "max_output_tokens", "model_context_window_exceeded"}
)
