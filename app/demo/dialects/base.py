"""The server side of a wire format: parse a request into neutral history,
and encode a reply as the provider would frame it.

An encoder is called step by step (text, a call's start, its fragments, its
end, the finish reason, the terminal marker, or an error) and returns the
SSE frames each step produces, so a caller can pace them, stop after any of
them (a cut-off), or put a fault where it wants one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...stream.history import Entry, ToolSpec

__all__ = ["Encoder", "Request", "RequestError", "sse", "NEUTRAL_FINISH", "looks_failed"]

#: The finish reasons a plan speaks in; each encoder maps them to its own.
NEUTRAL_FINISH = ("stop", "tool_calls", "length")


class RequestError(ValueError):
    """The request body cannot be read as this dialect's request."""


@dataclass(slots=True)
class Request:
    model: str
    history: list[Entry]
    tools: list[ToolSpec] = field(default_factory=list)
    stream: bool = True
    #: Gemini: the request asked for streamed function-call arguments (Vertex's
    #: ``streamFunctionCallArguments``); otherwise calls go out whole.
    stream_arguments: bool = False
    #: OpenAI chat: ``stream_options.include_usage`` (a final usage chunk).
    include_usage: bool = False


def looks_failed(text: str) -> bool:
    """Whether a tool result the client sent back reports a failure, in the
    formats that carry no flag for it (OpenAI chat and Responses): clients
    write errors as ``Error: ...``, callstream among them."""
    head = text.lstrip()[:12].lower()
    return head.startswith(("error", '{"error"'))


def sse(payload: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n\n").encode()


class Encoder:
    name = ""

    def __init__(self, model: str = "demo") -> None:
        self.model = model
        #: (prompt tokens, completion tokens) for the usage the format reports;
        #: the server sets estimates from the request and the plan.
        self.usage = (25, 42)

    def begin(self) -> list[bytes]:
        return []

    def text(self, text: str) -> list[bytes]:
        raise NotImplementedError

    def reasoning(self, text: str) -> list[bytes]:
        raise NotImplementedError

    def start(self, slot: int, call_id: str, name: str) -> list[bytes]:
        raise NotImplementedError

    def args(self, slot: int, fragment: str) -> list[bytes]:
        raise NotImplementedError

    def end(self, slot: int) -> list[bytes]:
        return []

    def finish(self, reason: str) -> list[bytes]:
        """The frame carrying the finish reason (``reason`` is native)."""
        return []

    def terminal(self) -> list[bytes]:
        """The positive terminal marker."""
        return []

    def error(self, message: str, kind: str = "overloaded_error") -> list[bytes]:
        raise NotImplementedError

    def native(self, neutral: str) -> str:
        """The native spelling of a neutral finish reason."""
        raise NotImplementedError
