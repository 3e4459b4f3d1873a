"""A generator of synthetic provider streams, framed as each provider frames
them, from one neutral script. Used where real recordings do not reach: two
calls interleaved fragment by fragment, a megabyte of escaped arguments,
text between calls, every quirk on its own.

A script is a list of steps:
  ("text", s) | ("reasoning", s)
  ("start", slot, call_id, name)   announce a call
  ("args", slot, fragment)         one argument fragment
  ("end", slot)                    the call's own end (where the wire has one)
"""

from __future__ import annotations

import json
from typing import Any

Step = tuple[Any, ...]


def fragments(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def call_script(slot: int, call_id: str, name: str, args: str, size: int = 7) -> list[Step]:
    return [("start", slot, call_id, name)] + [("args", slot, f) for f in fragments(args, size)] + [("end", slot)]


def interleave(*scripts: list[Step]) -> list[Step]:
    """Starts first, then fragments round-robin, then ends."""
    starts = [s[0] for s in scripts]
    bodies = [[x for x in s if x[0] == "args"] for s in scripts]
    ends = [s[-1] for s in scripts]
    out: list[Step] = list(starts)
    longest = max(len(b) for b in bodies)
    for i in range(longest):
        for body in bodies:
            if i < len(body):
                out.append(body[i])
    return out + ends


def _sse(payload: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(payload, ensure_ascii=False) + "\n\n").encode()


# -- OpenAI Chat ----------------------------------------------------------------


def openai_chat(script: list[Step], finish: str | None = "tool_calls", done: bool = True) -> bytes:
    out = []
    base = {"id": "chatcmpl-synthetic", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]})

    out.append(chunk({"role": "assistant", "content": ""}))
    for step in script:
        kind = step[0]
        if kind == "text":
            out.append(chunk({"content": step[1]}))
        elif kind == "reasoning":
            out.append(chunk({"reasoning_content": step[1]}))
        elif kind == "start":
            _, slot, call_id, name = step
            out.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": slot,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
        elif kind == "args":
            _, slot, fragment = step
            out.append(chunk({"tool_calls": [{"index": slot, "function": {"arguments": fragment}}]}))
    if finish is not None:
        out.append(chunk({}, finish))
    if done:
        out.append(b"data: [DONE]\n\n")
    return b"".join(out)


# -- Anthropic ------------------------------------------------------------------


def anthropic(script: list[Step], stop_reason: str | None = "tool_use", stop: bool = True) -> bytes:
    out = [
        _sse(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_synthetic",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": "m",
                    "stop_reason": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
            "message_start",
        )
    ]
    index_of: dict[int, int] = {}
    next_index = 0
    prose: tuple[str, int] | None = None

    def close_prose() -> None:
        nonlocal prose
        if prose is not None:
            out.append(_sse({"type": "content_block_stop", "index": prose[1]}, "content_block_stop"))
            prose = None

    for step in script:
        kind = step[0]
        if kind in ("text", "reasoning"):
            btype = "text" if kind == "text" else "thinking"
            if prose is None or prose[0] != btype:
                close_prose()
                block: dict[str, Any] = (
                    {"type": "text", "text": ""} if btype == "text" else {"type": "thinking", "thinking": ""}
                )
                out.append(
                    _sse(
                        {"type": "content_block_start", "index": next_index, "content_block": block},
                        "content_block_start",
                    )
                )
                prose = (btype, next_index)
                next_index += 1
            delta = (
                {"type": "text_delta", "text": step[1]}
                if btype == "text"
                else {"type": "thinking_delta", "thinking": step[1]}
            )
            out.append(_sse({"type": "content_block_delta", "index": prose[1], "delta": delta}, "content_block_delta"))
        elif kind == "start":
            close_prose()
            _, slot, call_id, name = step
            index_of[slot] = next_index
            out.append(
                _sse(
                    {
                        "type": "content_block_start",
                        "index": next_index,
                        "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                    },
                    "content_block_start",
                )
            )
            next_index += 1
        elif kind == "args":
            _, slot, fragment = step
            out.append(
                _sse(
                    {
                        "type": "content_block_delta",
                        "index": index_of[slot],
                        "delta": {"type": "input_json_delta", "partial_json": fragment},
                    },
                    "content_block_delta",
                )
            )
        elif kind == "end":
            out.append(_sse({"type": "content_block_stop", "index": index_of[step[1]]}, "content_block_stop"))
    close_prose()
    if stop_reason is not None:
        out.append(
            _sse(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
                "message_delta",
            )
        )
    if stop:
        out.append(_sse({"type": "message_stop"}, "message_stop"))
    return b"".join(out)


# -- OpenAI Responses -------------------------------------------------------------


def openai_responses(script: list[Step], final: str | None = "response.completed") -> bytes:
    seq = 0
    out = []

    def event(payload: dict[str, Any]) -> None:
        nonlocal seq
        payload["sequence_number"] = seq
        seq += 1
        out.append(_sse(payload, payload["type"]))

    response = {"id": "resp_synthetic", "object": "response", "status": "in_progress", "output": []}
    event({"type": "response.created", "response": response})
    index_of: dict[int, int] = {}
    buffers: dict[int, list[str]] = {}
    meta: dict[int, tuple[str, str]] = {}
    next_index = 0
    message: int | None = None
    for step in script:
        kind = step[0]
        if kind == "text":
            if message is None:
                message = next_index
                next_index += 1
                event(
                    {
                        "type": "response.output_item.added",
                        "output_index": message,
                        "item": {"id": f"msg_{message}", "type": "message", "role": "assistant", "content": []},
                    }
                )
            event(
                {
                    "type": "response.output_text.delta",
                    "item_id": f"msg_{message}",
                    "output_index": message,
                    "content_index": 0,
                    "delta": step[1],
                }
            )
        elif kind == "reasoning":
            event(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "item_id": "rs_0",
                    "output_index": next_index,
                    "summary_index": 0,
                    "delta": step[1],
                }
            )
        elif kind == "start":
            _, slot, call_id, name = step
            message = None
            index_of[slot] = next_index
            buffers[slot] = []
            meta[slot] = (call_id, name)
            event(
                {
                    "type": "response.output_item.added",
                    "output_index": next_index,
                    "item": {
                        "id": f"fc_{slot}",
                        "type": "function_call",
                        "status": "in_progress",
                        "arguments": "",
                        "call_id": call_id,
                        "name": name,
                    },
                }
            )
            next_index += 1
        elif kind == "args":
            _, slot, fragment = step
            buffers[slot].append(fragment)
            event(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": f"fc_{slot}",
                    "output_index": index_of[slot],
                    "delta": fragment,
                }
            )
        elif kind == "end":
            slot = step[1]
            args = "".join(buffers[slot])
            call_id, name = meta[slot]
            event(
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": f"fc_{slot}",
                    "output_index": index_of[slot],
                    "arguments": args,
                }
            )
            event(
                {
                    "type": "response.output_item.done",
                    "output_index": index_of[slot],
                    "item": {
                        "id": f"fc_{slot}",
                        "type": "function_call",
                        "status": "completed",
                        "arguments": args,
                        "call_id": call_id,
                        "name": name,
                    },
                }
            )
    if final == "response.completed":
        event({"type": final, "response": {**response, "status": "completed"}})
    elif final == "response.incomplete":
        event(
            {
                "type": final,
                "response": {**response, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
            }
        )
    return b"".join(out)


# -- Gemini ---------------------------------------------------------------------


def gemini(script: list[Step], finish: str | None = "STOP") -> bytes:
    """Gemini sends whole calls; argument fragments are gathered per call and
    sent as one ``args`` object at the call's end (the script's order of
    starts is kept)."""
    out = []
    pending: dict[int, tuple[str, str, list[str]]] = {}

    def chunk(parts: list[dict[str, Any]], reason: str | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if reason:
            candidate["finishReason"] = reason
        return _sse({"candidates": [candidate], "modelVersion": "gemini-test"})

    for step in script:
        kind = step[0]
        if kind == "text":
            out.append(chunk([{"text": step[1]}]))
        elif kind == "reasoning":
            out.append(chunk([{"text": step[1], "thought": True}]))
        elif kind == "start":
            pending[step[1]] = (step[2], step[3], [])
        elif kind == "args":
            pending[step[1]][2].append(step[2])
        elif kind == "end":
            _, name, parts = pending.pop(step[1])
            out.append(chunk([{"functionCall": {"name": name, "args": json.loads("".join(parts) or "{}")}}]))
    if finish:
        out.append(chunk([{"text": ""}], finish))
    return b"".join(out)


ENCODERS = {"openai-chat": openai_chat, "anthropic": anthropic, "openai-responses": openai_responses, "gemini": gemini}


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]
