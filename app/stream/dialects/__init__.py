"""One module per wire format; ``make_dialect`` and ``detect`` choose among them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..limits import loads
from ..sse import SSEEvent
from . import anthropic, gemini, openai_chat, openai_responses
from .anthropic import Anthropic
from .base import Dialect
from .gemini import Gemini
from .openai_chat import OpenAIChat
from .openai_responses import OpenAIResponses

__all__ = ["DIALECTS", "REQUEST_BUILDERS", "AUTH_HEADERS", "USAGE_REQUESTS", "max_tokens_option", "Dialect",
           "make_dialect", "detect"]

DIALECTS: dict[str, Callable[[], Dialect]] = {
    "openai-chat": OpenAIChat,
    "openai-responses": OpenAIResponses,
    "anthropic": Anthropic,
    "gemini": Gemini,
}

#: dialect → build_request(model, history, tools, system) → (path, body)
REQUEST_BUILDERS = {
    "openai-chat": openai_chat.build_request,
    "openai-responses": openai_responses.build_request,
    "anthropic": anthropic.build_request,
    "gemini": gemini.build_request,
}

#: dialect → the request fields its builder adds to be sent usage, where the wire
#: reports it only when asked (a profile's ``usage = false`` takes them out again)
USAGE_REQUESTS = {"openai-chat": openai_chat.USAGE_REQUEST}


def max_tokens_option(dialect: str, tokens: int) -> dict[str, Any]:
    """The body fields that cap a reply at ``tokens`` on ``dialect`` (an MCP server's sampling ``maxTokens``),
    to merge over a request's body as a profile's options are."""
    if dialect == "gemini":
        return {"generationConfig": {"maxOutputTokens": tokens}}
    return {"max_output_tokens" if dialect == "openai-responses" else "max_tokens": tokens}

#: dialect → auth_headers(api_key) → headers
AUTH_HEADERS = {
    "openai-chat": openai_chat.auth_headers,
    "openai-responses": openai_responses.auth_headers,
    "anthropic": anthropic.auth_headers,
    "gemini": gemini.auth_headers,
}

_ANTHROPIC_TYPES = frozenset(
    {"message_start", "message_delta", "message_stop", "content_block_start", "content_block_delta",
     "content_block_stop", "ping"}
)


def make_dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]()
    except KeyError:
        known = ", ".join(DIALECTS)
        raise ValueError(f"unknown dialect {name!r} (known: {known}, auto)") from None


def detect(sse: SSEEvent) -> str | None:
    """The dialect one frame reveals, or None when it could be any of them
    (an error object, a frame that is not JSON)."""
    if sse.event in _ANTHROPIC_TYPES:
        return "anthropic"
    if sse.event.startswith("response."):
        return "openai-responses"
    data = sse.data
    if data.startswith("[DONE]"):
        return "openai-chat"
    try:
        payload = loads(data)
    except (ValueError, RecursionError):
        return None
    if isinstance(payload, list):
        return "gemini" if payload and isinstance(payload[0], dict) and "candidates" in payload[0] else None
    if not isinstance(payload, dict):
        return None
    if "choices" in payload or str(payload.get("object", "")).startswith("chat.completion"):
        return "openai-chat"
    if "candidates" in payload or "usageMetadata" in payload or "promptFeedback" in payload:
        return "gemini"
    kind = payload.get("type")
    if isinstance(kind, str):
        if kind.startswith("response."):
            return "openai-responses"
        if kind in _ANTHROPIC_TYPES:
            return "anthropic"
    return None
