"""Anthropic Messages (``/v1/messages``, ``stream: true``), also as served by
Vertex, Bedrock and Anthropic-compatible gateways.

Dispatch is on the payload's ``type`` (not the SSE ``event:`` line, which a
BOM or a proxy can lose). Calls end at their own ``content_block_stop``; the
turn ends at ``message_stop``. ``server_tool_use`` blocks are calls the
provider runs itself: shown, never dispatched. A second ``message_start``
with a new id while a message is open is a spliced generation (Q21): the
stream is malformed. The same id again is a gateway duplicate and ignored.
"""

from __future__ import annotations

from typing import Any

from ..attachments import Attachment
from ..events import (
    ArgsDelta,
    CallEnded,
    CallStarted,
    Event,
    ReasoningDelta,
    ServerResult,
    StreamMalformed,
    TextDelta,
    TurnEnded,
    UsageReported,
)
from ..history import Assistant, Entry, ToolResult, ToolSpec, User
from ..sse import SSEEvent
from ..usage import Usage, count
from .base import ModelOnce, error_message, field, load_payload
from .built import BuiltItems
from .requests_common import assistant_text
from .schemas import adapt

__all__ = ["Anthropic", "build_request", "auth_headers", "usage_of", "API_VERSION"]

API_VERSION = "2023-06-01"

#: The wire's usage fields, merged as they come: ``message_start`` has the
#: input (and a placeholder output), ``message_delta`` the final output (and,
#: where server tools ran, the final input).
_USAGE_FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")

_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


class Anthropic:
    name = "anthropic"

    def __init__(self) -> None:
        self.message_id: str | None = None
        self.stop_reason: str | None = None
        self._calls: set[object] = set()
        self._usage: dict[str, int] = {}
        self._model = ModelOnce()

    def body_ended(self, out: list[Event]) -> None:
        pass  # only the terminal marker ends this wire's turn

    def frame(self, sse: SSEEvent, out: list[Event]) -> None:
        payload = load_payload(sse.data, out)
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or sse.event
        if kind == "content_block_delta":
            delta = payload.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "input_json_delta":
                fragment = delta.get("partial_json")
                if fragment is not None:
                    out.append(ArgsDelta(payload.get("index"), fragment))
            elif dtype == "text_delta":
                text = delta.get("text")
                if text and isinstance(text, str):
                    out.append(TextDelta(text))
            elif dtype == "thinking_delta":
                text = delta.get("thinking")
                if text and isinstance(text, str):
                    out.append(ReasoningDelta(text))
        elif kind == "content_block_start":
            self._block_start(payload, out)
        elif kind == "content_block_stop":
            index = payload.get("index")
            if index in self._calls:
                out.append(CallEnded(index))
        elif kind == "message_delta":
            delta = payload.get("delta") or {}
            reason = delta.get("stop_reason")
            if reason:
                self.stop_reason = reason
            self._metered(payload.get("usage"), out, final=True)
        elif kind == "message_stop":
            out.append(TurnEnded(self.stop_reason))
        elif kind == "message_start":
            message = payload.get("message") or {}
            new_id = message.get("id")
            if self.message_id is None:
                self.message_id = new_id or ""
            elif new_id and new_id != self.message_id:
                out.append(StreamMalformed("a second message started inside the first (a spliced stream)"))
                return
            self._model(message.get("model"), out)
            self._metered(message.get("usage"), out, final=False)
        elif kind == "error":
            out.append(error_message(payload.get("error") or payload))
        # ping and unknown event types are ignored, as Anthropic asks

    def _metered(self, usage: Any, out: list[Event], final: bool) -> None:
        """Merge a usage object's counts; the output counts only from ``message_delta``
        (``message_start``'s is a placeholder, 1 or so, that a cut-off would leave standing)."""
        if not isinstance(usage, dict):
            return
        seen = self._usage
        for name in _USAGE_FIELDS if final else _USAGE_FIELDS[:3]:
            value = count(usage.get(name))
            if value is not None:
                seen[name] = value
        thinking = count(field(usage, "output_tokens_details", "thinking_tokens")) if final else None
        parts = [seen[n] for n in _USAGE_FIELDS[:3] if n in seen]
        found = Usage(sum(parts) if parts else None, seen.get("output_tokens"), seen.get("cache_read_input_tokens"),
                      thinking)
        if found.known:
            out.append(UsageReported(found))

    def _block_start(self, payload: dict[str, Any], out: list[Event]) -> None:
        index = payload.get("index")
        block = payload.get("content_block") or {}
        btype = block.get("type")
        if btype in _CALL_BLOCKS:
            self._calls.add(index)
            out.append(CallStarted(index, block.get("id"), block.get("name"), provider_executed=btype != "tool_use"))
            initial = block.get("input")
            if initial:  # some compatible servers put the whole input here
                out.append(ArgsDelta(index, initial))
        elif btype == "text":
            text = block.get("text")
            if text and isinstance(text, str):
                out.append(TextDelta(text))
        elif btype == "thinking":
            text = block.get("thinking")
            if text and isinstance(text, str):
                out.append(ReasoningDelta(text))
        elif isinstance(btype, str) and btype.endswith("_tool_result"):
            out.append(ServerResult(block.get("tool_use_id"), btype, block.get("content")))


def usage_of(usage: Any) -> Usage | None:
    """A whole Messages ``usage`` object (a stored message's, as Claude Code
    keeps them): the same counts the stream's ``_metered`` merges — the input
    with the cache reads and writes added in, of which ``cached`` the reads."""
    parts = [n for n in (count(field(usage, name)) for name in _USAGE_FIELDS[:3]) if n is not None]
    found = Usage(sum(parts) if parts else None, count(field(usage, "output_tokens")),
                  count(field(usage, "cache_read_input_tokens")),
                  count(field(usage, "output_tokens_details", "thinking_tokens")))
    return found if found.known else None


def build_request(
    model: str, history: list[Entry], tools: list[ToolSpec], system: str | None = None, max_tokens: int = 8192
) -> tuple[str, dict[str, Any]]:
    """Anthropic wants strictly alternating roles, tool results as user-role
    blocks, and no empty text blocks; consecutive entries are merged."""
    building = _BUILT.build(history)
    messages = building.items  # (those of the entries it shares with the last history built, reused)

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if messages and messages[-1]["role"] == role:  # a new message, never one changed: it may be reused
            messages[-1] = {"role": role, "content": [*messages[-1]["content"], *blocks]}
            building.merged()
        else:
            building.cut(index)  # (the messages before this one are whole: nothing merges into them now)
            messages.append({"role": role, "content": blocks})

    for index in range(building.start, len(history)):
        entry = history[index]
        if isinstance(entry, User):
            blocks_in = [_block(item) for item in entry.attachments]
            if entry.text or not blocks_in:
                blocks_in.append({"type": "text", "text": entry.text or " "})
            add("user", blocks_in)
        elif isinstance(entry, Assistant):
            text = assistant_text(entry)
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in entry.calls]
            add("assistant", blocks)
        elif isinstance(entry, ToolResult):
            content: str | list[dict[str, Any]] = entry.content
            if entry.images:  # a tool result takes images here: the model sees what its tool returned
                content = [{"type": "text", "text": entry.content or " "}, *(_block(i) for i in entry.images)]
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": entry.call_id, "content": content}
            if entry.is_error:
                block["is_error"] = True
            add("user", [block])
    building.cut(len(history))
    building.done()
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "stream": True, "messages": [*messages]}
    if system:
        body["system"] = system
    if tools:
        body["tools"] = [{"name": t.name, "description": t.description,
                          "input_schema": adapt("anthropic", t.parameters)} for t in tools]
    return "/v1/messages", body


#: The messages of the last history built, given again for the entries the next begins with (``built.py``).
_BUILT = BuiltItems()


def _block(item: Attachment) -> dict[str, Any]:
    """An image block, a PDF document block, or a plain-text document block titled with the file's name."""
    if item.kind == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": item.media_type, "data": item.b64()}}
    if item.kind == "pdf":
        return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                "data": item.b64()}, "title": item.name}
    return {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                            "data": item.data.decode("utf-8", errors="replace")}, "title": item.name}


def auth_headers(api_key: str | None) -> dict[str, str]:
    headers = {"anthropic-version": API_VERSION}
    if api_key:
        headers["x-api-key"] = api_key
    return headers
