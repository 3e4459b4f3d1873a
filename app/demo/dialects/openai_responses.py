"""OpenAI Responses, server side (``POST /v1/responses``)."""

from __future__ import annotations

import json
from typing import Any

from ...stream.history import Assistant, CallRecord, Entry, ToolResult, ToolSpec, User
from ...stream.limits import loads
from .base import Encoder, Request, RequestError, looks_failed, sse
from .parts import user_of
from .resumed import Resumed

__all__ = ["ResponsesEncoder", "parse_request"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


#: The last fold of a request's items: its history, and each call's name by id (``resumed.py``).
_RESUMED: Resumed[tuple[list[Entry], dict[str, str]]] = Resumed()


def parse_request(body: dict[str, Any]) -> Request:
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise RequestError("'input' must be a string or a list of items")
    start, kept = _RESUMED.take(items)
    history, names = kept if kept is not None else ([], {})

    def assistant() -> Assistant:
        if history and isinstance(history[-1], Assistant):
            return history[-1]
        entry = Assistant()
        history.append(entry)
        return entry

    for item in items[start:]:
        if not isinstance(item, dict):
            raise RequestError("each input item must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role == "user":
                content = item.get("content")
                user = user_of(content, history) if isinstance(content, list) else User(_text(content))
                if user is not None:
                    history.append(user)
            elif role == "assistant":
                assistant().text += _text(item.get("content"))
        elif kind == "function_call":
            try:
                arguments = loads(item.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            record = CallRecord(str(item.get("call_id", "")), str(item.get("name", "")),
                                arguments if isinstance(arguments, dict) else {})
            names[record.id] = record.name
            assistant().calls.append(record)
        elif kind == "function_call_output":
            call_id = str(item.get("call_id", ""))
            output = item.get("output")
            # a string, or a list of input_text (and other) parts
            text = output if isinstance(output, str) else _text(output) if isinstance(output, list) else \
                json.dumps(output)
            history.append(ToolResult(call_id, names.get(call_id, ""), text, looks_failed(text)))
    _RESUMED.keep(items, (list(history), dict(names)))
    tools = [
        ToolSpec(t["name"], t.get("description", ""), t.get("parameters") or {})
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("type", "function") == "function" and t.get("name")
    ]
    return Request(str(body.get("model", "demo")), history, tools, bool(body.get("stream")))


class ResponsesEncoder(Encoder):
    name = "openai-responses"

    def __init__(self, model: str = "demo", response_id: str = "resp_demo", created: int = 0) -> None:
        super().__init__(model)
        self._seq = 0
        self._response = {"id": response_id, "object": "response", "created_at": created, "status": "in_progress",
                          "model": model, "output": [], "error": None, "incomplete_details": None,
                          "tools": [], "parallel_tool_calls": True}
        self._next = 0
        self._message: int | None = None
        self._text_parts: list[str] = []
        self._reasoning: int | None = None
        self._reasoning_parts: list[str] = []
        self._index: dict[int, int] = {}
        self._calls: dict[int, tuple[str, str, list[str]]] = {}
        self._output: list[dict[str, Any]] = []
        self._reason = "completed"

    def _event(self, payload: dict[str, Any]) -> bytes:
        payload["sequence_number"] = self._seq
        self._seq += 1
        return sse(payload, payload["type"])

    def begin(self) -> list[bytes]:
        return [self._event({"type": "response.created", "response": dict(self._response)}),
                self._event({"type": "response.in_progress", "response": dict(self._response)})]

    def _close_message(self) -> list[bytes]:
        if self._message is None:
            return []
        index, self._message = self._message, None
        text = "".join(self._text_parts)
        self._text_parts = []
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        item = {"id": f"msg_{index}", "type": "message", "status": "completed", "role": "assistant",
                "content": [part]}
        self._output.append(item)
        return [
            self._event({"type": "response.output_text.done", "item_id": f"msg_{index}", "output_index": index,
                         "content_index": 0, "text": text, "logprobs": []}),
            self._event({"type": "response.content_part.done", "item_id": f"msg_{index}", "output_index": index,
                         "content_index": 0, "part": part}),
            self._event({"type": "response.output_item.done", "output_index": index, "item": item}),
        ]

    def _close_reasoning(self) -> list[bytes]:
        if self._reasoning is None:
            return []
        index, self._reasoning = self._reasoning, None
        text = "".join(self._reasoning_parts)
        self._reasoning_parts = []
        item = {"id": f"rs_{index}", "type": "reasoning", "summary": [{"type": "summary_text", "text": text}]}
        self._output.append(item)
        return [
            self._event({"type": "response.reasoning_summary_text.done", "item_id": f"rs_{index}",
                         "output_index": index, "summary_index": 0, "text": text}),
            self._event({"type": "response.output_item.done", "output_index": index, "item": item}),
        ]

    def text(self, text: str) -> list[bytes]:
        out: list[bytes] = self._close_reasoning()
        if self._message is None:
            self._message = self._next
            self._next += 1
            item = {"id": f"msg_{self._message}", "type": "message", "status": "in_progress", "role": "assistant",
                    "content": []}
            out.append(self._event({"type": "response.output_item.added", "output_index": self._message,
                                    "item": item}))
            out.append(self._event({"type": "response.content_part.added", "item_id": f"msg_{self._message}",
                                    "output_index": self._message, "content_index": 0,
                                    "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}))
        self._text_parts.append(text)
        out.append(self._event({"type": "response.output_text.delta", "item_id": f"msg_{self._message}",
                                "output_index": self._message, "content_index": 0, "delta": text,
                                "logprobs": []}))
        return out

    def reasoning(self, text: str) -> list[bytes]:
        out: list[bytes] = []
        if self._reasoning is None:
            self._reasoning = self._next
            self._next += 1
            out.append(self._event({"type": "response.output_item.added", "output_index": self._reasoning,
                                    "item": {"id": f"rs_{self._reasoning}", "type": "reasoning", "summary": []}}))
        self._reasoning_parts.append(text)
        out.append(self._event({"type": "response.reasoning_summary_text.delta", "item_id": f"rs_{self._reasoning}",
                                "output_index": self._reasoning, "summary_index": 0, "delta": text}))
        return out

    def start(self, slot: int, call_id: str, name: str) -> list[bytes]:
        out = self._close_reasoning() + self._close_message()
        index = self._index[slot] = self._next
        self._next += 1
        self._calls[slot] = (call_id, name, [])
        item = {"id": f"fc_{index}", "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": call_id, "name": name}
        out.append(self._event({"type": "response.output_item.added", "output_index": index, "item": item}))
        return out

    def args(self, slot: int, fragment: str) -> list[bytes]:
        self._calls[slot][2].append(fragment)
        index = self._index[slot]
        return [self._event({"type": "response.function_call_arguments.delta", "item_id": f"fc_{index}",
                             "output_index": index, "delta": fragment})]

    def end(self, slot: int) -> list[bytes]:
        index = self._index[slot]
        call_id, name, parts = self._calls[slot]
        arguments = "".join(parts)
        item = {"id": f"fc_{index}", "type": "function_call", "status": "completed", "arguments": arguments,
                "call_id": call_id, "name": name}
        self._output.append(item)
        return [
            self._event({"type": "response.function_call_arguments.done", "item_id": f"fc_{index}",
                         "output_index": index, "arguments": arguments}),
            self._event({"type": "response.output_item.done", "output_index": index, "item": item}),
        ]

    def finish(self, reason: str) -> list[bytes]:
        self._reason = reason
        return self._close_reasoning() + self._close_message()

    def terminal(self) -> list[bytes]:
        prompt, completion = self.usage
        response = {**self._response, "output": self._output,
                    "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
                              "total_tokens": prompt + completion}}
        if self._reason == "completed":
            return [self._event({"type": "response.completed", "response": {**response, "status": "completed"}})]
        response.update(status="incomplete", incomplete_details={"reason": self._reason})
        return [self._event({"type": "response.incomplete", "response": response})]

    def error(self, message: str, kind: str = "overloaded_error") -> list[bytes]:
        code = "server_is_overloaded" if kind == "overloaded_error" else kind
        return [self._event({"type": "error", "code": code, "message": message, "param": None})]

    def native(self, neutral: str) -> str:
        return "max_output_tokens" if neutral == "length" else "completed"
