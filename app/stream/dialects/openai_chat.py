"""OpenAI Chat Completions (``/v1/chat/completions``, ``stream: true``) and
every OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter,
Groq, Gemini's compatibility endpoint...).

The wire has no per-call end: calls end at ``data: [DONE]`` when the finish
reason seen before it allows it. Some real servers never send ``[DONE]``:
a body that ended cleanly after a non-null ``finish_reason`` ends the turn
the same way (``body_ended``); a reset or a timeout after it does not, so
the transport's cause decides. Slots are ``tool_calls[].index``; servers
that drop or freeze it (Mistral, Ollama's ``/v1``, Gemini's compatibility
endpoint) are handled by the assembler.
"""

from __future__ import annotations

import functools
from typing import Any

from ..attachments import Attachment
from ..events import ArgsDelta, CallStarted, Event, ReasoningDelta, TextDelta, TurnEnded, UsageReported
from ..history import Assistant, Entry, ToolResult, ToolSpec, User
from ..jsonwrite import JSONText
from ..sse import SSEEvent
from ..usage import Usage, count
from .base import ModelOnce, error_message, field, load_payload
from .built import BuiltItems
from .requests_common import assistant_text, tool_images_words
from .schemas import adapt

__all__ = ["OpenAIChat", "build_request", "auth_headers", "usage_of", "USAGE_REQUEST"]

#: What a request adds to be sent its usage: this wire reports it only when
#: asked (a last chunk with ``choices: []``). A profile with ``usage = false``
#: leaves it out, for a server that refuses the field.
USAGE_REQUEST: dict[str, Any] = {"stream_options": {"include_usage": True}}

#: Finish reasons under which the calls still open at [DONE] are complete.
#: ``stop`` is here because gpt-4o, Ollama, vLLM and Gemini's compat endpoint
#: all report complete calls with it (reliability.md §2.1, Q7, Q8).
CALL_FINISH = frozenset({"tool_calls", "stop", "function_call"})


class OpenAIChat:
    name = "openai-chat"

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self._model = ModelOnce()

    def frame(self, sse: SSEEvent, out: list[Event]) -> None:
        data = sse.data
        if data[:6] == "[DONE]":
            self._end(out)
            return
        payload = load_payload(data, out)
        if not isinstance(payload, dict):
            return
        error = payload.get("error")
        if error:
            out.append(error_message(error))
            return
        usage = payload.get("usage")
        if usage:  # null on every chunk but the last when asked; Groq repeats it on the finish chunk
            reported = usage_of(usage)
            if reported is not None:
                out.append(UsageReported(reported))
        if self._model.model is None:
            self._model(payload.get("model"), out)
        choices = payload.get("choices")
        if not choices:
            return  # Azure prompt_filter_results, the include_usage chunk
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # n > 1: only the first choice is a turn
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(delta, out)
            reason = choice.get("finish_reason")
            if reason:
                self.finish_reason = reason

    def body_ended(self, out: list[Event]) -> None:
        if self.finish_reason is not None:
            self._end(out)  # no [DONE], but the finish reason came and the body ended cleanly

    def _end(self, out: list[Event]) -> None:
        reason = self.finish_reason
        out.append(TurnEnded(reason, ends_open_calls=reason in CALL_FINISH))

    def _delta(self, delta: dict[str, Any], out: list[Event]) -> None:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning and isinstance(reasoning, str):
            out.append(ReasoningDelta(reasoning))
        content = delta.get("content")
        if content and isinstance(content, str):
            out.append(TextDelta(content))
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                if isinstance(call, dict):
                    self._call(call, out)
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            self._call({"index": 0, "function": legacy}, out)

    @staticmethod
    def _call(call: dict[str, Any], out: list[Event]) -> None:
        slot = call.get("index")
        function = call.get("function") or {}
        call_id = call.get("id") or function.get("id")  # llama.cpp once put it inside
        name = function.get("name")
        if call_id or name:
            out.append(CallStarted(slot, call_id or None, name or None))
        if "arguments" in function:
            args = function["arguments"]
            if args is not None:
                out.append(ArgsDelta(slot, args))


def usage_of(usage: Any) -> Usage | None:
    """Chat's ``usage`` object (``prompt_tokens`` counts cached ones in,
    ``completion_tokens`` reasoning ones)."""
    found = Usage(count(field(usage, "prompt_tokens")), count(field(usage, "completion_tokens")),
                  count(field(usage, "prompt_tokens_details", "cached_tokens")),
                  count(field(usage, "completion_tokens_details", "reasoning_tokens")))
    return found if found.known else None


def build_request(
    model: str, history: list[Entry], tools: list[ToolSpec], system: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The path (relative to a base URL ending in /v1) and body of a request."""
    building = _BUILT.build(history)
    items = building.items  # (those of the entries it shares with the last history built, reused)
    shown: list[ToolResult] = []  # tool results with images, waiting for the user-side message after them
    for index in range(building.start, len(history)):
        entry = history[index]
        if shown and not isinstance(entry, ToolResult):
            items.append(_tool_images(shown))
            shown = []
        if not shown:
            building.cut(index)
        items.append(_message(entry))
        if isinstance(entry, ToolResult) and entry.images:
            shown.append(entry)
    if shown:
        items.append(_tool_images(shown))
    else:
        building.cut(len(history))
    building.done()
    messages = [_system_message(system), *items] if system else [*items]
    body: dict[str, Any] = {"model": model, "stream": True, **USAGE_REQUEST, "messages": messages}
    if tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": adapt("openai-chat", t.parameters)}}
            for t in tools
        ]
    return "/chat/completions", body


#: The messages of the last history built, given again for the entries the next begins with (``built.py``).
_BUILT = BuiltItems()


@functools.lru_cache(maxsize=8)
def _system_message(system: str) -> dict[str, Any]:
    """The same message for the same system prompt, request after request: it leads the list, and the
    body's writer finds what a request shares with the last from the start, by identity
    (``jsonreuse``): a new one each request made it compare the other 1,800 messages value by value."""
    return {"role": "system", "content": system}


def _message(entry: User | Assistant | ToolResult) -> dict[str, Any]:
    if isinstance(entry, User):
        return {"role": "user", "content": _user_content(entry)}
    if isinstance(entry, Assistant):
        message: dict[str, Any] = {"role": "assistant", "content": assistant_text(entry) or None}
        if entry.calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": JSONText(c.arguments)}}
                for c in entry.calls
            ]
        return message
    return {"role": "tool", "tool_call_id": entry.call_id, "content": entry.content}


def _part(item: Attachment) -> dict[str, Any]:
    if item.kind == "image":
        return {"type": "image_url", "image_url": {"url": item.data_url()}}
    if item.kind == "pdf":
        return {"type": "file", "file": {"filename": item.name, "file_data": item.data_url()}}
    return {"type": "text", "text": item.as_text()}


def _user_content(entry: User) -> str | list[dict[str, Any]]:
    """A plain string without attachments (what every compatible server takes);
    with them, the parts (files first, then the text)."""
    if not entry.attachments:
        return entry.text
    parts = [_part(item) for item in entry.attachments]
    if entry.text:
        parts.append({"type": "text", "text": entry.text})
    return parts


def _tool_images(results: list[ToolResult]) -> dict[str, Any]:
    """Chat's tool messages take text only: a tool's images follow its results as a user message."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": tool_images_words(results)}]
    parts += [_part(image) for result in results for image in result.images]
    return {"role": "user", "content": parts}


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
