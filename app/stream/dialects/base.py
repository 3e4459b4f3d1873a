"""What every dialect shares: the frame → events contract and JSON loading."""

from __future__ import annotations

import json
from typing import Any, Protocol

from ..events import Event, ModelReported, ProviderError, StreamMalformed
from ..limits import loads, one_line
from ..redact import redact
from ..sse import SSEEvent

__all__ = ["Dialect", "load_payload", "error_message", "field", "ModelOnce"]


class Dialect(Protocol):
    """Turns one SSE frame into zero or more neutral events.

    A dialect holds only what its wire format forces it to remember (Gemini's
    open JSON path, Anthropic's message id); the assembler owns the turn.
    """

    name: str

    def frame(self, sse: SSEEvent, out: list[Event]) -> None: ...

    def body_ended(self, out: list[Event]) -> None:
        """The body ended cleanly (not a reset, not a timeout) before any
        terminal marker. A dialect whose real servers may end that way after
        a positive finish emits its ``TurnEnded`` here; the rest add nothing,
        and the turn stays cut off."""


def load_payload(data: str, out: list[Event]) -> Any:
    """``json.loads`` that reports a broken frame as ``StreamMalformed``."""
    try:
        return loads(data)
    except (ValueError, RecursionError):
        snippet = data if len(data) <= 120 else data[:117] + "..."
        out.append(StreamMalformed(f"event data is not JSON: {snippet!r}"))
        return None


def error_message(error: Any) -> ProviderError:
    """An error object in any provider's shape, as a ProviderError."""
    if isinstance(error, dict):
        message = error.get("message") or error.get("type") or json.dumps(error)[:300]
        code = error.get("code") or error.get("type") or error.get("status")
        return ProviderError(one_line(redact(str(message))), None if code is None else one_line(str(code), 60))
    return ProviderError(one_line(redact(str(error))) if error else "the provider reported an error")


def field(value: Any, *path: str) -> Any:
    """``value[a][b]…`` where each step is an object that has the key, else None
    (usage details nest, and any level may be missing or null)."""
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


class ModelOnce:
    """Reports the model a wire names, once: chat repeats it on every chunk."""

    __slots__ = ("model",)

    def __init__(self) -> None:
        self.model: str | None = None

    def __call__(self, name: Any, out: list[Event]) -> None:
        if self.model is None and isinstance(name, str) and name.strip():
            self.model = one_line(name, 120)
            out.append(ModelReported(self.model))
