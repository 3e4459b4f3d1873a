"""Gemini ``streamGenerateContent?alt=sse``, server side.

Calls go out whole (``functionCall.args``), as Gemini sends them, unless the
request asks for streamed arguments (Vertex's
``toolConfig.functionCallingConfig.streamFunctionCallArguments``): then as
``partialArgs``, so a client can show them forming — the argument text is
scanned as it is produced and each string piece, number, boolean or null goes
out with its JSON path. Requests are read in camelCase and in the snake_case
the protobuf JSON mapping also accepts (``function_call``,
``function_response``, ``parameters_json_schema``...), which is what some
clients and proxies (LiteLLM) send.
Gemini cannot send arguments that are not JSON; a call whose text does not
scan ends the turn with ``MALFORMED_FUNCTION_CALL``, as Gemini itself does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...stream.history import Assistant, CallRecord, Entry, ToolResult, ToolSpec
from ...stream.jsonscan import JSONScanner, Path
from ...stream.limits import loads
from .base import Encoder, Request, RequestError, sse
from .parts import user_of
from .resumed import Resumed

__all__ = ["GeminiEncoder", "parse_request", "json_path"]

_IDENT = re.compile(r"[A-Za-z_$][\w$-]*\Z")


def json_path(path: Path) -> str:
    out = ["$"]
    for segment in path:
        if isinstance(segment, int):
            out.append(f"[{segment}]")
        elif _IDENT.match(segment):
            out.append("." + segment)
        else:
            out.append("['" + segment.replace("\\", "\\\\").replace("'", "\\'") + "']")
    return "".join(out)


def _field(value: dict[str, Any], camel: str) -> Any:
    """A field under its camelCase name or its snake_case one."""
    if camel in value:
        return value[camel]
    return value.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel))


def _streams_arguments(body: dict[str, Any]) -> bool:
    config = _field(body, "toolConfig")
    calling = _field(config, "functionCallingConfig") if isinstance(config, dict) else None
    return isinstance(calling, dict) and bool(_field(calling, "streamFunctionCallArguments"))


#: The last fold of a request's contents: its history, the calls not yet answered, and how many calls
#: it numbered (``resumed.py``).
_RESUMED: Resumed[tuple[list[Entry], list[CallRecord], int]] = Resumed()


def parse_request(body: dict[str, Any]) -> Request:
    contents = body.get("contents")
    if not isinstance(contents, list):
        raise RequestError("'contents' must be a list")
    start, kept = _RESUMED.take(contents)
    history, pending, count = kept if kept is not None else ([], [], 0)
    for content in contents[start:]:
        if not isinstance(content, dict):
            raise RequestError("each content must be an object")
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role") == "model":
            entry = Assistant("".join(p.get("text", "") for p in parts if not p.get("thought")))
            for part in parts:
                call = _field(part, "functionCall")
                if isinstance(call, dict):
                    count += 1
                    arguments = call.get("args")
                    record = CallRecord(str(call.get("id") or f"gemini-call-{count}"), str(call.get("name", "")),
                                        arguments if isinstance(arguments, dict) else {})
                    entry.calls.append(record)
                    pending.append(record)
            history.append(entry)
            continue
        texts = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            response = _field(part, "functionResponse")
            if isinstance(response, dict):
                name = str(response.get("name", ""))
                match = next((c for c in pending if c.name == name and (not response.get("id") or
                                                                         c.id == response.get("id"))), None)
                if match is not None:
                    pending.remove(match)
                payload = response.get("response")
                text = json.dumps(payload.get("result", payload) if isinstance(payload, dict) else payload)
                is_error = isinstance(payload, dict) and "error" in payload and "result" not in payload
                if is_error and isinstance(payload, dict):
                    text = str(payload.get("error"))
                history.append(ToolResult(match.id if match else str(response.get("id", "")), name, text, is_error))
            else:
                texts.append(part)
        if texts:
            user = user_of(texts, history)
            if user is not None:
                history.append(user)
    _RESUMED.keep(contents, (list(history), list(pending), count))
    tools = []
    for tool in body.get("tools") or []:
        for decl in (_field(tool, "functionDeclarations") if isinstance(tool, dict) else None) or []:
            if isinstance(decl, dict) and decl.get("name"):
                schema = _field(decl, "parametersJsonSchema") or decl.get("parameters") or {}
                tools.append(ToolSpec(decl["name"], decl.get("description", ""), schema))
    return Request("", history, tools, True, stream_arguments=_streams_arguments(body))


class GeminiEncoder(Encoder):
    name = "gemini"

    def __init__(self, model: str = "demo", response_id: str = "demo", partial_args: bool = False) -> None:
        super().__init__(model)
        self.response_id = response_id
        self.partial_args = partial_args
        self._calls: dict[int, tuple[str, list[str], JSONScanner]] = {}
        self._reason = "STOP"
        self.malformed = False

    def _chunk(self, parts: list[dict[str, Any]], reason: str | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if reason:
            candidate["finishReason"] = reason
        payload: dict[str, Any] = {"candidates": [candidate], "modelVersion": self.model,
                                   "responseId": self.response_id}
        if reason:
            prompt, completion = self.usage
            payload["usageMetadata"] = {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                                        "totalTokenCount": prompt + completion}
        return sse(payload)

    def text(self, text: str) -> list[bytes]:
        return [self._chunk([{"text": text}])]

    def reasoning(self, text: str) -> list[bytes]:
        return [self._chunk([{"text": text, "thought": True}])]

    def start(self, slot: int, call_id: str, name: str) -> list[bytes]:
        self._calls[slot] = (name, [], JSONScanner())
        if not self.partial_args:
            return []
        return [self._chunk([{"functionCall": {"name": name, "willContinue": True}}])]

    def args(self, slot: int, fragment: str) -> list[bytes]:
        name, parts, scanner = self._calls[slot]
        parts.append(fragment)
        if not self.partial_args:
            return []
        pieces = []
        for piece in scanner.feed(fragment):
            arg: dict[str, Any] = {"jsonPath": json_path(piece.path)}
            if piece.kind == "string":
                if not piece.value and not piece.done:
                    continue
                arg["stringValue"] = piece.value
                if not piece.done:
                    arg["willContinue"] = True
            elif piece.kind == "number":
                arg["numberValue"] = piece.value
            elif piece.kind == "bool":
                arg["boolValue"] = piece.value
            elif piece.kind == "null":
                arg["nullValue"] = None
            else:
                continue
            pieces.append(arg)
        if scanner.error is not None:
            self.malformed = True
        return [self._chunk([{"functionCall": {"partialArgs": [p], "willContinue": True}}]) for p in pieces]

    def end(self, slot: int) -> list[bytes]:
        name, parts, scanner = self._calls.pop(slot)
        if self.partial_args:
            if scanner.error is not None or not scanner.done:
                self.malformed = True
                return []
            return [self._chunk([{"functionCall": {}}])]
        try:
            arguments = loads("".join(parts) or "{}")
        except ValueError:
            self.malformed = True
            return []
        return [self._chunk([{"functionCall": {"name": name, "args": arguments}}])]

    def finish(self, reason: str) -> list[bytes]:
        self._reason = reason
        return []

    def terminal(self) -> list[bytes]:
        reason = "MALFORMED_FUNCTION_CALL" if self.malformed else self._reason
        return [self._chunk([{"text": ""}], reason)]

    def error(self, message: str, kind: str = "overloaded_error") -> list[bytes]:
        return [sse({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}})]

    def native(self, neutral: str) -> str:
        return "MAX_TOKENS" if neutral == "length" else "STOP"
