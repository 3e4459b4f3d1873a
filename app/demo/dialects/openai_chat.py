"""OpenAI Chat Completions, server side (``POST /v1/chat/completions``)."""

from __future__ import annotations

from typing import Any

from ...stream.history import Assistant, CallRecord, Entry, ToolResult, ToolSpec, User
from ...stream.limits import loads
from .base import Encoder, Request, RequestError, looks_failed, sse
from .parts import user_of
from .resumed import Resumed

__all__ = ["ChatEncoder", "parse_request"]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") in ("text", None))
    return ""


def _arguments(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = loads(text or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


#: The last fold of a request's messages: its history, and each call's name by id (``resumed.py``).
_RESUMED: Resumed[tuple[list[Entry], dict[str, str]]] = Resumed()


def parse_request(body: dict[str, Any]) -> Request:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise RequestError("'messages' must be a list")
    start, kept = _RESUMED.take(messages)
    history, names = kept if kept is not None else ([], {})
    for message in messages[start:]:
        if not isinstance(message, dict):
            raise RequestError("each message must be an object")
        role = message.get("role")
        if role == "user":
            content = message.get("content")
            user = user_of(content, history) if isinstance(content, list) else User(_content_text(content))
            if user is not None:
                history.append(user)
        elif role == "assistant":
            calls = []
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                record = CallRecord(str(call.get("id", "")), str(function.get("name", "")),
                                    _arguments(function.get("arguments")))
                names[record.id] = record.name
                calls.append(record)
            history.append(Assistant(_content_text(message.get("content")), calls))
        elif role == "tool":
            call_id = str(message.get("tool_call_id", ""))
            content = _content_text(message.get("content"))
            history.append(ToolResult(call_id, names.get(call_id, ""), content, looks_failed(content)))
        # system / developer messages carry no conversation
    _RESUMED.keep(messages, (list(history), dict(names)))
    tools = []
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            tools.append(ToolSpec(function["name"], function.get("description", ""), function.get("parameters") or {}))
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    return Request(str(body.get("model", "demo")), history, tools, bool(body.get("stream")),
                   include_usage=include_usage)


class ChatEncoder(Encoder):
    name = "openai-chat"

    def __init__(self, model: str = "demo", completion_id: str = "chatcmpl-demo", created: int = 0,
                 include_usage: bool = False) -> None:
        super().__init__(model)
        self.include_usage = include_usage
        self._base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                      "system_fingerprint": "fp_demo"}

    def _chunk(self, delta: dict[str, Any], reason: str | None = None) -> bytes:
        return sse({**self._base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}]})

    def begin(self) -> list[bytes]:
        return [self._chunk({"role": "assistant", "content": ""})]

    def text(self, text: str) -> list[bytes]:
        return [self._chunk({"content": text})]

    def reasoning(self, text: str) -> list[bytes]:
        return [self._chunk({"reasoning_content": text})]

    def start(self, slot: int, call_id: str, name: str) -> list[bytes]:
        return [self._chunk({"tool_calls": [{"index": slot, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]})]

    def args(self, slot: int, fragment: str) -> list[bytes]:
        return [self._chunk({"tool_calls": [{"index": slot, "function": {"arguments": fragment}}]})]

    def finish(self, reason: str) -> list[bytes]:
        return [self._chunk({}, reason)]

    def terminal(self) -> list[bytes]:
        out = []
        if self.include_usage:  # as OpenAI sends it: a last chunk with no choices
            prompt, completion = self.usage
            out.append(sse({**self._base, "choices": [], "usage": {
                "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}))
        return out + [b"data: [DONE]\n\n"]

    def error(self, message: str, kind: str = "overloaded_error") -> list[bytes]:
        code = "server_error" if kind == "overloaded_error" else kind
        return [sse({"error": {"message": message, "type": code, "param": None, "code": code}})]

    def native(self, neutral: str) -> str:
        return neutral  # stop, tool_calls, length
