"""The official SDKs as test-only oracles: feed them a recorded body through a
mock transport and read what their stream helpers assemble."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai


def _client(body: bytes) -> httpx2.Client:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def openai_chat(body: bytes) -> dict[str, Any]:
    client = openai.OpenAI(api_key="test", base_url="http://oracle.test/v1", http_client=_client(body))
    with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "x"}]) as stream:
        for _ in stream:
            pass
        message = stream.get_final_completion().choices[0].message
    calls = [
        {"id": c.id, "name": c.function.name, "arguments": json.loads(c.function.arguments or "{}")}
        for c in message.tool_calls or []
    ]
    return {"text": message.content or "", "calls": calls}


def openai_responses(body: bytes) -> dict[str, Any]:
    client = openai.OpenAI(api_key="test", base_url="http://oracle.test/v1", http_client=_client(body))
    with client.responses.stream(model="m", input="x") as stream:
        for _ in stream:
            pass
        response = stream.get_final_response()
    calls, text = [], []
    for item in response.output:
        if item.type == "function_call":
            calls.append({"id": item.call_id, "name": item.name, "arguments": json.loads(item.arguments or "{}")})
        elif item.type == "message":
            text.extend(part.text for part in item.content if part.type == "output_text")
    return {"text": "".join(text), "calls": calls}


def anthropic_messages(body: bytes) -> dict[str, Any]:
    client = anthropic.Anthropic(api_key="test", base_url="http://oracle.test", http_client=_client(body))
    with client.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]) as stream:
        for _ in stream:
            pass
        message = stream.get_final_message()
    calls, text = [], []
    for block in message.content:
        if block.type in ("tool_use", "server_tool_use"):
            calls.append({"id": block.id, "name": block.name, "arguments": block.input})
        elif block.type == "text":
            text.append(block.text)
    return {"text": "".join(text), "calls": calls}


ORACLES = {"openai-chat": openai_chat, "openai-responses": openai_responses, "anthropic": anthropic_messages}
