"""Gemini ``streamGenerateContent?alt=sse`` (AI Studio and Vertex).

Gemini sends a call either whole (``functionCall.args``, an object) or, with
``streamFunctionCallArguments``, as ``partialArgs``: a JSON path and a typed
value per piece, a string value continuing while its ``willContinue`` is set.
This module turns the pieces back into argument *text* in arrival order, so
everything downstream sees the same shape as every other dialect. A call that
streams ends with a ``functionCall`` that no longer continues (Vertex sends
an empty ``{}``). The turn ends with the first ``finishReason``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..attachments import Attachment
from ..events import (
    ArgsDelta,
    CallEnded,
    CallStarted,
    Event,
    ReasoningDelta,
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
from .requests_common import assistant_text, result_value, tool_images_words
from .schemas import adapt

__all__ = ["Gemini", "parse_json_path", "build_request", "auth_headers", "STREAM_ARGUMENTS", "usage_of"]

#: The request fields that ask Vertex (and the demo) to stream a call's arguments as
#: ``partialArgs`` rather than whole; put them in a profile's ``options`` to ask.
STREAM_ARGUMENTS: dict[str, Any] = {"toolConfig": {"functionCallingConfig": {"streamFunctionCallArguments": True}}}

_SEGMENT = re.compile(r"\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]")


def parse_json_path(path: str) -> list[str | int] | None:
    """``$.a.b[0]['c d']`` → ``["a", "b", 0, "c d"]``; None if it is not one."""
    if not path.startswith("$"):
        return None
    segments: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _SEGMENT.match(path, pos)
        if match is None:
            return None
        name, index, single, double = match.groups()
        if index is not None:
            segments.append(int(index))
        else:
            segments.append(name if name is not None else (single if single is not None else double))
        pos = match.end()
    return segments


class _PathWriter:
    """Writes JSON text for a sequence of (path, value) pieces, in order.

    Keeps the stack of open containers (with whether each already has a
    member) and the string being continued, so each piece costs the size of
    the piece plus the depth it closes or opens.
    """

    def __init__(self) -> None:
        self.stack: list[tuple[str | int | None, bool, bool]] = []  # (segment, is_array, has_member)
        self.open_string: list[str | int] | None = None

    def start(self) -> str:
        self.stack = [(None, False, False)]
        return "{"

    def piece(self, path: list[str | int], value: Any, string: str | None, more: bool) -> str:
        if self.open_string is not None:
            if path == self.open_string and string is not None:
                text = _escape(string)
                if not more:
                    self.open_string = None
                    text += '"'
                return text
            out = ['"']
            self.open_string = None
        else:
            out = []
        if not self.stack:
            out.append(self.start())
        container = path[:-1]
        # close containers that are not on the new path
        current = [seg for seg, _, _ in self.stack[1:]]
        common = 0
        while common < len(current) and common < len(container) and current[common] == container[common]:
            common += 1
        while len(self.stack) - 1 > common:
            _, is_array, _ = self.stack.pop()
            out.append("]" if is_array else "}")
        # open the ones it needs
        for depth in range(common, len(path)):
            segment = path[depth]
            seg_parent, is_array, has_member = self.stack[-1]
            if has_member:
                out.append(",")
            self.stack[-1] = (seg_parent, is_array, True)
            if not is_array:
                out.append(json.dumps(str(segment), ensure_ascii=False) + ":")
            if depth < len(path) - 1:
                child_is_array = isinstance(path[depth + 1], int)
                out.append("[" if child_is_array else "{")
                self.stack.append((segment, child_is_array, False))
        if string is not None:
            out.append('"' + _escape(string))
            if more:
                self.open_string = path
            else:
                out.append('"')
        else:
            out.append(json.dumps(value, ensure_ascii=False))
        return "".join(out)

    def finish(self) -> str:
        out = []
        if self.open_string is not None:
            out.append('"')
            self.open_string = None
        if not self.stack:
            return "{}"
        while self.stack:
            _, is_array, _ = self.stack.pop()
            out.append("]" if is_array else "}")
        return "".join(out)


def _escape(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class Gemini:
    name = "gemini"

    def __init__(self) -> None:
        self._count = 0
        self._open: int | None = None  # slot of the call still streaming
        self._writer: _PathWriter | None = None
        self._text_seen = False
        self._model = ModelOnce()

    def body_ended(self, out: list[Event]) -> None:
        pass  # only the terminal marker ends this wire's turn

    def frame(self, sse: SSEEvent, out: list[Event]) -> None:
        payload = load_payload(sse.data, out)
        if isinstance(payload, list):  # a JSON array of responses (no alt=sse)
            for item in payload:
                if isinstance(item, dict):
                    self._response(item, out)
        elif isinstance(payload, dict):
            self._response(payload, out)

    def _response(self, payload: dict[str, Any], out: list[Event]) -> None:
        error = payload.get("error")
        if error:
            out.append(error_message(error))
            return
        usage = payload.get("usageMetadata")
        if usage:  # on every chunk, cumulative; the last one (with the finish reason) is the whole reply's
            reported = usage_of(usage)
            if reported is not None:
                out.append(UsageReported(reported))
        if self._model.model is None:
            self._model(payload.get("modelVersion"), out)
        candidates = payload.get("candidates") or []
        if not candidates:
            feedback = payload.get("promptFeedback") or {}
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                out.append(error_message({"message": f"prompt blocked: {feedback['blockReason']}"}))
            return
        candidate = candidates[0]
        if not isinstance(candidate, dict):
            return
        content = candidate.get("content") or {}
        for part in content.get("parts") or []:
            if isinstance(part, dict):
                self._part(part, out)
        reason = candidate.get("finishReason")
        if reason:
            if reason == "MALFORMED_FUNCTION_CALL":
                out.append(StreamMalformed("the model produced a malformed function call"))
                return
            out.append(TurnEnded(reason, truncated=reason == "MAX_TOKENS"))

    def _part(self, part: dict[str, Any], out: list[Event]) -> None:
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._call(call, out)
            return
        text = part.get("text")
        if text and isinstance(text, str):
            out.append(ReasoningDelta(text) if part.get("thought") else TextDelta(text))

    def _call(self, call: dict[str, Any], out: list[Event]) -> None:
        name = call.get("name")
        more = bool(call.get("willContinue"))
        partial = call.get("partialArgs")
        if name:
            if self._open is not None:
                self._end(out)
            slot = self._count
            self._count += 1
            out.append(CallStarted(slot, call.get("id"), name))
            if "args" in call and call["args"] is not None:
                out.append(ArgsDelta(slot, call["args"]))
            if more or partial:
                self._open = slot
                self._writer = _PathWriter()
            else:
                out.append(CallEnded(slot))
                return
        if self._open is None or self._writer is None:
            return
        if partial:
            for piece in partial:
                if isinstance(piece, dict):
                    self._piece(piece, out)
        if not more:
            self._end(out)

    def _piece(self, piece: dict[str, Any], out: list[Event]) -> None:
        assert self._writer is not None
        path = parse_json_path(str(piece.get("jsonPath", "")))
        if not path:
            out.append(StreamMalformed(f"unreadable partialArgs path {piece.get('jsonPath')!r}"))
            return
        more = bool(piece.get("willContinue"))
        string: str | None = None
        value: Any = None
        if "stringValue" in piece:
            string = str(piece["stringValue"])
        elif "numberValue" in piece:
            value = piece["numberValue"]
        elif "boolValue" in piece:
            value = bool(piece["boolValue"])
        elif "nullValue" in piece:
            value = None
        else:
            return
        out.append(ArgsDelta(self._open, self._writer.piece(path, value, string, more)))

    def _end(self, out: list[Event]) -> None:
        assert self._writer is not None
        slot = self._open
        out.append(ArgsDelta(slot, self._writer.finish()))
        out.append(CallEnded(slot))
        self._open = None
        self._writer = None


def _sum(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def usage_of(usage: Any) -> Usage | None:
    """``usageMetadata``: ``promptTokenCount`` counts cached tokens in (the tool-use
    prompt is apart: added in); ``candidatesTokenCount`` leaves the thoughts out
    (added in, so output means what it means on every other wire). Vertex sends
    ``{"trafficType": …}`` alone on early chunks: no usage."""
    prompt = count(field(usage, "promptTokenCount"))
    tools = count(field(usage, "toolUsePromptTokenCount"))
    thoughts = count(field(usage, "thoughtsTokenCount"))
    found = Usage(_sum(prompt, tools), _sum(count(field(usage, "candidatesTokenCount")), thoughts),
                  count(field(usage, "cachedContentTokenCount")), thoughts)
    return found if found.known else None


def build_request(
    model: str, history: list[Entry], tools: list[ToolSpec], system: str | None = None
) -> tuple[str, dict[str, Any]]:
    building = _BUILT.build(history)
    contents = building.items  # (those of the entries it shares with the last history built, reused)

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if contents and contents[-1]["role"] == role:  # a new content, never one changed: it may be reused
            contents[-1] = {"role": role, "parts": [*contents[-1]["parts"], *parts]}
            building.merged()
        else:
            if not shown:  # (the contents before this one are whole: nothing merges into them now)
                building.cut(index)
            contents.append({"role": role, "parts": parts})

    shown: list[ToolResult] = []  # results with images: their images follow all the function responses

    def show() -> None:
        if shown:
            add("user", [{"text": tool_images_words(shown)}, *(_part(i) for r in shown for i in r.images)])
            shown.clear()

    for index in range(building.start, len(history)):
        entry = history[index]
        if not isinstance(entry, ToolResult):
            show()
        if isinstance(entry, User):
            user_parts = [_part(item) for item in entry.attachments]
            if entry.text or not user_parts:
                user_parts.append({"text": entry.text})
            add("user", user_parts)
        elif isinstance(entry, Assistant):
            text = assistant_text(entry)
            parts: list[dict[str, Any]] = [{"text": text}] if text else []
            parts += [{"functionCall": {"name": c.name, "args": c.arguments}} for c in entry.calls]
            add("model", parts)
        elif isinstance(entry, ToolResult):
            key = "error" if entry.is_error else "result"
            add("user", [{"functionResponse": {"name": entry.name, "response": {key: result_value(entry.content)}}}])
            if entry.images:  # inline data after the function responses, in the same user turn
                shown.append(entry)
    if not shown:
        building.cut(len(history))
    show()
    building.done()
    body: dict[str, Any] = {"contents": [*contents]}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    if tools:
        body["tools"] = [{"functionDeclarations": [
            {"name": t.name, "description": t.description, "parameters": adapt("gemini", t.parameters)} for t in tools
        ]}]
    return f"/v1beta/models/{model}:streamGenerateContent?alt=sse", body


#: The contents of the last history built, given again for the entries the next begins with (``built.py``).
_BUILT = BuiltItems()


def _part(item: Attachment) -> dict[str, Any]:
    if item.kind == "text":
        return {"text": item.as_text()}
    return {"inlineData": {"mimeType": item.media_type, "data": item.b64()}}


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"x-goog-api-key": api_key} if api_key else {}
