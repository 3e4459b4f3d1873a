"""The server side of each wire format: request parsing and reply framing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .anthropic import MessagesEncoder
from .anthropic import parse_request as parse_anthropic
from .base import Encoder, Request, RequestError
from .gemini import GeminiEncoder
from .gemini import parse_request as parse_gemini
from .openai_chat import ChatEncoder
from .openai_chat import parse_request as parse_chat
from .openai_responses import ResponsesEncoder
from .openai_responses import parse_request as parse_responses

__all__ = ["ENCODERS", "PARSERS", "Encoder", "Request", "RequestError"]

ENCODERS: dict[str, Callable[..., Encoder]] = {
    "openai-chat": ChatEncoder,
    "openai-responses": ResponsesEncoder,
    "anthropic": MessagesEncoder,
    "gemini": GeminiEncoder,
}

PARSERS: dict[str, Callable[[dict[str, Any]], Request]] = {
    "openai-chat": parse_chat,
    "openai-responses": parse_responses,
    "anthropic": parse_anthropic,
    "gemini": parse_gemini,
}
