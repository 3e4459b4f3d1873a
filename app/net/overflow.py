"""A request longer than the model's context window, as each provider says it: recognised from the
HTTP error body so the turn ends with one line that says so and what to do (compact), instead of
the provider's words alone and a Ctrl+R that would fail the same way.

The bodies, as the providers send them (their documentation and reports of real ones):

- OpenAI (Chat Completions, Responses; and servers that copy it, vLLM, DeepSeek):
  ``{"error": {"message": "This model's maximum context length is 128000 tokens. However, your
  messages resulted in 130532 tokens…", "type": "invalid_request_error", "param": "messages",
  "code": "context_length_exceeded"}}``;
- Anthropic: ``{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too
  long: 209353 tokens > 199999 maximum"}}``;
- Gemini: ``{"error": {"code": 400, "message": "The input token count (1200293) exceeds the maximum
  number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}`` (sometimes in a list);
- llama-server: ``{"error": {"code": 400, "message": "request (4476 tokens) exceeds the available
  context size (4096 tokens)", "type": "exceed_context_size_error", "n_prompt_tokens": 4476,
  "n_ctx": 4096}}``.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["overflow_words", "OVERFLOW_OFFER"]

#: What the one line offers (the TUI's command, and ask's option).
OVERFLOW_OFFER = ("compact it (/compact, or ask --compact) to go on from a summary of its older part on a new "
                  "branch, nothing lost")

_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"})

_WORDS = re.compile(
    r"prompt is too long"  # Anthropic
    r"|maximum context length"  # OpenAI chat, vLLM, DeepSeek
    r"|exceeds the context window"  # OpenAI Responses
    r"|input token count \(\d+\) exceeds the maximum number of tokens"  # Gemini
    r"|exceeds the available context size",  # llama-server
    re.IGNORECASE)


def overflow_words(status: int, payload: Any) -> str | None:
    """The provider's own message when an error body says the request does not fit the model's
    context window; ``None`` for every other error."""
    if status not in (400, 413, 422):
        return None
    if isinstance(payload, list) and len(payload) == 1:
        payload = payload[0]  # Gemini's streaming endpoint wraps its error in a list
    if not isinstance(payload, dict):
        return None
    error = payload.get("error", payload)
    if not isinstance(error, dict):
        return None
    message = error.get("message")
    message = message if isinstance(message, str) else ""
    if error.get("code") in _CODES or error.get("type") in _CODES or _WORDS.search(message):
        return message or str(error.get("code") or error.get("type"))
    return None
