"""Anthropic Messages, server side (``POST /v1/messages``)."""

from __future__ import annotations

import json
from typing import Any

from ...stream.history import Assistant, CallRecord, Entry, ToolResult, ToolSpec
from .base import Encoder, Request, RequestError, sse
from .parts import attachment_of, user_of
from .resumed import Resumed

__all__ = ["MessagesEncoder", "parse_request"]


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    raise RequestError("message content must be a string or a list of blocks")


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return json.dumps(content)


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
        blocks = _blocks(message.get("content"))
        if message.get("role") == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = []
            for block in blocks:
                if block.get("type") == "tool_use":
                    arguments = block.get("input")
                    record = CallRecord(str(block.get("id", "")), str(block.get("name", "")),
                                        arguments if isinstance(arguments, dict) else {})
                    names[record.id] = record.name
                    calls.append(record)
            history.append(Assistant(text, calls))
        else:
            texts = []
            for block in blocks:
                if block.get("type") == "tool_result":
                    call_id = str(block.get("tool_use_id", ""))
                    content = block.get("content")
                    images = [a for n, b in enumerate(content) if isinstance(b, dict)
                              for a in [attachment_of(b, n)] if a is not None] if isinstance(content, list) else []
                    history.append(ToolResult(call_id, names.get(call_id, ""), _result_text(content),
                                              bool(block.get("is_error")), images))
                else:
                    texts.append(block)
            if texts:
                user = user_of(texts, history)
                if user is not None:
                    history.append(user)
    _RESUMED.keep(messages, (list(history), dict(names)))
    tools = [
        ToolSpec(t["name"], t.get("description", ""), t.get("input_schema") or {})
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("name")
    ]
    return Request(str(body.get("model", "demo")), history, tools, bool(body.get("stream")))


class MessagesEncoder(Encoder):
    name = "anthropic"

    def __init__(self, model: str = "demo", message_id: str = "msg_demo") -> None:
        super().__init__(model)
        self.message_id = message_id
        self._next = 0
        self._index: dict[int, int] = {}
        self._prose: tuple[str, int] | None = None
        self._reason: str | None = None

    def begin(self) -> list[bytes]:
        message: dict[str, Any] = {"id": self.message_id, "type": "message", "role": "assistant", "model": self.model,
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": self.usage[0], "output_tokens": 1}}
        return [sse({"type": "message_start", "message": message}, "message_start")]

    def _close_prose(self) -> list[bytes]:
        if self._prose is None:
            return []
        index = self._prose[1]
        self._prose = None
        return [sse({"type": "content_block_stop", "index": index}, "content_block_stop")]

    def _prose_delta(self, kind: str, text: str) -> list[bytes]:
        out: list[bytes] = []
        if self._prose is None or self._prose[0] != kind:
            out += self._close_prose()
            block = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking", "thinking": "",
                                                                         "signature": ""}
            out.append(sse({"type": "content_block_start", "index": self._next, "content_block": block},
                           "content_block_start"))
            self._prose = (kind, self._next)
            self._next += 1
        delta = {"type": "text_delta", "text": text} if kind == "text" else {"type": "thinking_delta",
                                                                               "thinking": text}
        out.append(sse({"type": "content_block_delta", "index": self._prose[1], "delta": delta},
                       "content_block_delta"))
        return out

    def text(self, text: str) -> list[bytes]:
        return self._prose_delta("text", text)

    def reasoning(self, text: str) -> list[bytes]:
        return self._prose_delta("thinking", text)

    def start(self, slot: int, call_id: str, name: str) -> list[bytes]:
        out = self._close_prose()
        self._index[slot] = self._next
        self._next += 1
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        out.append(sse({"type": "content_block_start", "index": self._index[slot], "content_block": block},
                       "content_block_start"))
        return out

    def args(self, slot: int, fragment: str) -> list[bytes]:
        delta = {"type": "input_json_delta", "partial_json": fragment}
        return [sse({"type": "content_block_delta", "index": self._index[slot], "delta": delta},
                    "content_block_delta")]

    def end(self, slot: int) -> list[bytes]:
        return [sse({"type": "content_block_stop", "index": self._index[slot]}, "content_block_stop")]

    def finish(self, reason: str) -> list[bytes]:
        out = self._close_prose()
        out.append(sse({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
                        "usage": {"output_tokens": self.usage[1]}}, "message_delta"))
        return out

    def terminal(self) -> list[bytes]:
        return [sse({"type": "message_stop"}, "message_stop")]

    def error(self, message: str, kind: str = "overloaded_error") -> list[bytes]:
        return [sse({"type": "error", "error": {"type": kind, "message": message}}, "error")]

    def native(self, neutral: str) -> str:
        return {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}[neutral]
