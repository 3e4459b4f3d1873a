"""Capture real llama-server streams (see README.md beside this file).

    bash ../shared/real-peer/start.sh PORT      # prints the server's pid
    .venv/bin/python tests/captures/capture.py PORT
    kill PID

Writes each response body byte for byte, as it came off the socket, to
``llama-server-<format>-parallel.sse`` beside this file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx

HERE = Path(__file__).parent
MODEL = "smollm2-135m"
TOOLS = [
    ("get_weather", "Get the weather", "city"),
    ("get_time", "Get the local time", "city"),
]
# The tiny model answers a two-part question with two calls only after seeing it done: the few-shot
# template (../shared/real-peer/chatml-tools-fewshot.jinja) shows one such answer, and the history
# below shows two more (each exchange: the question, two calls, their results, a short answer).
EXAMPLES = [("Rome", "Cairo"), ("Madrid", "Seoul")]
PROMPT = "Get the weather: Paris. And also Get the local time: Tokyo"


def _schema(param: str) -> dict[str, object]:
    return {"type": "object", "properties": {param: {"type": "string", "description": "the " + param}},
            "required": [param]}


def _question(a: str, b: str) -> str:
    return f"Get the weather: {a}. And also Get the local time: {b}"


def _city(city: str) -> str:
    return json.dumps({"city": city})


def _chat_history() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i, (a, b) in enumerate(EXAMPLES):
        out += [
            {"role": "user", "content": _question(a, b)},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"ex{i}a", "type": "function", "function": {"name": "get_weather", "arguments": _city(a)}},
                {"id": f"ex{i}b", "type": "function", "function": {"name": "get_time", "arguments": _city(b)}},
            ]},
            {"role": "tool", "tool_call_id": f"ex{i}a", "content": "sunny"},
            {"role": "tool", "tool_call_id": f"ex{i}b", "content": "noon"},
            {"role": "assistant", "content": "Sunny, noon."},
        ]
    return out + [{"role": "user", "content": PROMPT}]


def _responses_input() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i, (a, b) in enumerate(EXAMPLES):
        out += [
            {"type": "message", "role": "user", "content": _question(a, b)},
            {"type": "function_call", "call_id": f"ex{i}a", "name": "get_weather", "arguments": _city(a)},
            {"type": "function_call", "call_id": f"ex{i}b", "name": "get_time", "arguments": _city(b)},
            {"type": "function_call_output", "call_id": f"ex{i}a", "output": "sunny"},
            {"type": "function_call_output", "call_id": f"ex{i}b", "output": "noon"},
            {"type": "message", "role": "assistant", "content": "Sunny, noon."},
        ]
    return out + [{"type": "message", "role": "user", "content": PROMPT}]


def _messages() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i, (a, b) in enumerate(EXAMPLES):
        out += [
            {"role": "user", "content": _question(a, b)},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"ex{i}a", "name": "get_weather", "input": {"city": a}},
                {"type": "tool_use", "id": f"ex{i}b", "name": "get_time", "input": {"city": b}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"ex{i}a", "content": "sunny"},
                {"type": "tool_result", "tool_use_id": f"ex{i}b", "content": "noon"},
            ]},
            {"role": "assistant", "content": "Sunny, noon."},
        ]
    return out + [{"role": "user", "content": PROMPT}]


REQUESTS: dict[str, tuple[str, dict[str, object]]] = {
    "chat": ("/v1/chat/completions", {
        "model": MODEL, "stream": True, "temperature": 0, "parallel_tool_calls": True,
        "messages": _chat_history(),
        "tools": [{"type": "function", "function": {"name": n, "description": d, "parameters": _schema(p)}}
                  for n, d, p in TOOLS],
    }),
    "responses": ("/v1/responses", {
        "model": MODEL, "stream": True, "temperature": 0, "parallel_tool_calls": True, "input": _responses_input(),
        "tools": [{"type": "function", "name": n, "description": d, "parameters": _schema(p)} for n, d, p in TOOLS],
    }),
    "messages": ("/v1/messages", {
        "model": MODEL, "stream": True, "temperature": 0, "max_tokens": 256, "messages": _messages(),
        "tools": [{"name": n, "description": d, "input_schema": _schema(p)} for n, d, p in TOOLS],
    }),
}


def main(port: int) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
        for name, (path, body) in REQUESTS.items():
            with client.stream("POST", path, json=body) as response:
                response.raise_for_status()
                data = b"".join(response.iter_raw())
            out = HERE / f"llama-server-{name}-parallel.sse"
            out.write_bytes(data)
            print(f"{out.name}: {len(data)} bytes")


if __name__ == "__main__":
    main(int(sys.argv[1]))
