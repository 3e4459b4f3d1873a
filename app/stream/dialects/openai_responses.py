"""OpenAI Responses (``/v1/responses``, ``stream: true``).

Every event names itself in its ``type``; we read that rather than the SSE
``event:`` line so a stream whose event lines were lost still parses. Calls
end at ``response.function_call_arguments.done`` (or, from servers that skip
it, ``response.output_item.done``); the turn ends at ``response.completed``,
``response.incomplete`` (truncation) or ``response.failed`` / ``error``.
Slots are ``output_index``; the id kept is ``call_id``, the one a tool result
must quote. llama-server sends no ``output_index`` on any event (parallel
calls are linked only by ``item_id`` / ``item.id``, and every
``output_item.done`` comes at the end), so where it is absent the slot is
the item's id — or the index that id was announced under, when a server
sends the index on some events and not on others.
"""

from __future__ import annotations

from typing import Any

from ..attachments import Attachment
from ..events import (
    ArgsDelta,
    CallEnded,
    CallStarted,
    Event,
    ProviderError,
    ReasoningDelta,
    StreamMalformed,
    TextDelta,
    TurnEnded,
    UsageReported,
)
from ..history import Assistant, Entry, ToolResult, ToolSpec, User
from ..jsonwrite import JSONText
from ..sse import SSEEvent
from ..usage import Usage, count
from .base import ModelOnce, error_message, field, load_payload
from .built import BuiltItems
from .requests_common import assistant_text, tool_images_words
from .schemas import adapt

__all__ = ["OpenAIResponses", "build_request", "auth_headers", "usage_of"]

_CALL_ITEMS = frozenset({"function_call", "custom_tool_call"})


class OpenAIResponses:
    name = "openai-responses"
    #: How the repeats of a call's arguments after its ``.done`` begin (``type``
    #: first, as OpenAI writes it): a megabyte one, once no call is open, is
    #: kept without its long strings (``stream.restated``). Another order is read whole.
    RESTATEMENTS = (b'{"type":"response.output_item.done"', b'{"type":"response.completed"')
    #: How a call's own end begins, which restates its arguments for the strict check: a
    #: megabyte one is kept as its arguments' length and digest (``stream.restated``).
    CHECKED = (b'{"type":"response.function_call_arguments.done"', b'{"type":"response.custom_tool_call_input.done"')

    def __init__(self) -> None:
        self._index_of: dict[str, object] = {}  # item id → the output_index it came with
        self._model = ModelOnce()

    def _slot(self, payload: dict[str, Any], item: dict[str, Any] | None = None) -> object:
        index = payload.get("output_index")
        item_id = payload.get("item_id") or (item.get("id") if item else None)
        if index is not None:
            if isinstance(item_id, str):
                self._index_of[item_id] = index
            return index
        if isinstance(item_id, str) and item_id:
            return self._index_of.get(item_id, ("item", item_id))
        return None

    def body_ended(self, out: list[Event]) -> None:
        pass  # only the terminal marker ends this wire's turn

    def frame(self, sse: SSEEvent, out: list[Event]) -> None:
        payload = load_payload(sse.data, out)
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or sse.event
        if kind == "response.function_call_arguments.delta" or kind == "response.custom_tool_call_input.delta":
            delta = payload.get("delta")
            if delta is not None:
                out.append(ArgsDelta(self._slot(payload), delta))
        elif kind == "response.output_text.delta" or kind == "response.refusal.delta":
            delta = payload.get("delta")
            if delta and isinstance(delta, str):
                out.append(TextDelta(delta))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            delta = payload.get("delta")
            if delta and isinstance(delta, str):
                out.append(ReasoningDelta(delta))
        elif kind == "response.output_item.added":
            item = payload.get("item") or {}
            if item.get("type") in _CALL_ITEMS:
                slot = self._slot(payload, item)
                out.append(CallStarted(slot, item.get("call_id") or item.get("id"), item.get("name")))
                initial = item.get("arguments") or item.get("input")
                if initial:
                    out.append(ArgsDelta(slot, initial))
        elif kind == "response.function_call_arguments.done" or kind == "response.custom_tool_call_input.done":
            args = payload.get("arguments", payload.get("input"))
            if args == "" and len(sse.restated) == 1:  # emptied as it streamed: its length and digest stand for it
                kept = sse.restated[0]
                if kept.broken:
                    out.append(StreamMalformed("event data is not JSON: the arguments restated at the end "
                                               "are not a JSON string"))
                    return
                out.append(CallEnded(self._slot(payload), kept))
                return
            out.append(CallEnded(self._slot(payload), args if isinstance(args, str) else None))
        elif kind == "response.output_item.done":
            item = payload.get("item") or {}
            if item.get("type") in _CALL_ITEMS:
                args = item.get("arguments", item.get("input"))
                out.append(CallEnded(self._slot(payload, item), args if isinstance(args, str) else None))
        elif kind == "response.completed":
            response = payload.get("response") or {}
            self._metered(response, out)
            out.append(TurnEnded(_status(response) or "completed"))
        elif kind == "response.incomplete":
            response = payload.get("response") or {}
            self._metered(response, out)
            details = response.get("incomplete_details") or {}
            reason = details.get("reason") if isinstance(details, dict) else None
            out.append(TurnEnded(str(reason) if reason else "incomplete", truncated=True))
        elif kind == "response.created" or kind == "response.in_progress":
            self._model(field(payload, "response", "model"), out)
        elif kind == "response.failed":
            response = payload.get("response") or {}
            self._metered(response, out)
            out.append(error_message(response.get("error") or "the response failed"))
        elif kind == "error":
            out.append(error_message(payload.get("error") or payload))
        elif kind == "response.cancelled":
            out.append(ProviderError("the provider cancelled the response", "cancelled"))


    def _metered(self, response: Any, out: list[Event]) -> None:
        """The terminal event's response: its usage (the only report on this wire) and its model."""
        self._model(field(response, "model"), out)
        usage = usage_of(field(response, "usage"))
        if usage is not None:
            out.append(UsageReported(usage))


def usage_of(usage: Any) -> Usage | None:
    """Responses' ``usage`` (``input_tokens`` counts cached ones in, ``output_tokens`` reasoning ones)."""
    found = Usage(count(field(usage, "input_tokens")), count(field(usage, "output_tokens")),
                  count(field(usage, "input_tokens_details", "cached_tokens")),
                  count(field(usage, "output_tokens_details", "reasoning_tokens")))
    return found if found.known else None


def _status(response: dict[str, Any]) -> str | None:
    status = response.get("status")
    return status if isinstance(status, str) else None


def build_request(
    model: str, history: list[Entry], tools: list[ToolSpec], system: str | None = None
) -> tuple[str, dict[str, Any]]:
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
        if isinstance(entry, User):
            items.append({"role": "user", "content": _user_content(entry)})
        elif isinstance(entry, Assistant):
            text = assistant_text(entry)
            if text:
                items.append({"role": "assistant", "content": text})
            for call in entry.calls:
                items.append({"type": "function_call", "call_id": call.id, "name": call.name,
                              "arguments": JSONText(call.arguments)})
        elif isinstance(entry, ToolResult):
            items.append({"type": "function_call_output", "call_id": entry.call_id, "output": entry.content})
            if entry.images:
                shown.append(entry)
    if shown:
        items.append(_tool_images(shown))
    else:
        building.cut(len(history))
    building.done()
    body: dict[str, Any] = {"model": model, "stream": True, "input": [*items], "store": False}
    if system:
        body["instructions"] = system
    if tools:
        body["tools"] = [
            {"type": "function", "name": t.name, "description": t.description,
             "parameters": adapt("openai-responses", t.parameters), "strict": False}
            for t in tools
        ]
    return "/responses", body


#: The items of the last history built, given again for the entries the next begins with (``built.py``).
_BUILT = BuiltItems()


def _part(item: Attachment) -> dict[str, Any]:
    if item.kind == "image":
        return {"type": "input_image", "image_url": item.data_url(), "detail": "auto"}
    if item.kind == "pdf":
        return {"type": "input_file", "filename": item.name, "file_data": item.data_url()}
    return {"type": "input_text", "text": item.as_text()}


def _user_content(entry: User) -> str | list[dict[str, Any]]:
    if not entry.attachments:
        return entry.text
    parts = [_part(item) for item in entry.attachments]
    if entry.text:
        parts.append({"type": "input_text", "text": entry.text})
    return parts


def _tool_images(results: list[ToolResult]) -> dict[str, Any]:
    """A function call's output is sent as text; its images follow as a user message."""
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": tool_images_words(results)}]
    parts += [_part(image) for result in results for image in result.images]
    return {"role": "user", "content": parts}


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
