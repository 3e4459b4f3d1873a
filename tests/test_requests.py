"""Request bodies built from history are accepted by the official SDKs'
request types (validated with pydantic against their TypedDicts), and
Gemini's by its documented shape — for a history with tool calls, tool
results, a rejected call and an interrupted turn."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from app.stream.dialects import REQUEST_BUILDERS
from app.stream.history import Assistant, CallRecord, ToolResult, ToolSpec, User
from app.stream.jsonwrite import encode, plain

TOOLS = [ToolSpec("search_orders", "Find orders.", {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
    "properties": {"customer": {"type": "string"}}, "additionalProperties": False})]

HISTORY = [
    User("Check Ada's orders"),
    Assistant("Looking.", [CallRecord("c1", "search_orders", {"customer": "Ada"}),
                           CallRecord("c2", "search_orders", {"customer": 5})]),
    ToolResult("c1", "search_orders", json.dumps({"orders": [{"order_id": "A-1042"}]})),
    ToolResult("c2", "search_orders", "Error: customer: 5 is not of type 'string'. Nothing was run.", is_error=True),
    Assistant("Filing a ticket", [], "Interrupted: the connection dropped while create_ticket was being prepared; "
                                     "it was not run."),
    User("Did it work?"),
]


def build(dialect: str) -> tuple[str, dict[str, Any]]:
    """The body as a reader of the JSON gets it (a call's arguments on the
    OpenAI wires are written from the dict in pieces: ``jsonwrite.JSONText``)."""
    path, body = REQUEST_BUILDERS[dialect]("model-x", HISTORY, TOOLS, "Be brief.")
    return path, plain(body)


def test_openai_chat_body_matches_the_sdk_type() -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    path, body = build("openai-chat")
    assert path == "/chat/completions"
    TypeAdapter(CompletionCreateParamsStreaming).validate_python(body)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert body["messages"][5]["content"].endswith("[Interrupted: the connection dropped while create_ticket was "
                                                   "being prepared; it was not run.]")
    assert "tool_calls" not in body["messages"][5]  # no fabricated call for the interrupted turn


def test_openai_responses_body_matches_the_sdk_type() -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    path, body = build("openai-responses")
    assert path == "/responses"
    TypeAdapter(ResponseCreateParamsStreaming).validate_python(body)
    kinds = [item.get("type", item.get("role")) for item in body["input"]]
    assert kinds == ["user", "assistant", "function_call", "function_call", "function_call_output",
                     "function_call_output", "assistant", "user"]


def test_anthropic_body_matches_the_sdk_type_and_alternates() -> None:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming

    path, body = build("anthropic")
    assert path == "/v1/messages"
    TypeAdapter(MessageCreateParamsStreaming).validate_python(body)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]  # strictly alternating
    results = body["messages"][2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result"]
    assert results[1]["is_error"] is True
    interrupted = body["messages"][3]["content"]
    assert [b["type"] for b in interrupted] == ["text"] and "Interrupted" in interrupted[0]["text"]
    # the user's next message merges with nothing before it: it follows the assistant
    assert body["messages"][4]["content"] == [{"type": "text", "text": "Did it work?"}]


def test_gemini_body_matches_the_documented_shape() -> None:
    path, body = build("gemini")
    assert path == "/v1beta/models/model-x:streamGenerateContent?alt=sse"
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    roles = [c["role"] for c in body["contents"]]
    assert roles == ["user", "model", "user", "model", "user"]
    for content in body["contents"]:
        for part in content["parts"]:
            (kind,) = part.keys()
            assert kind in ("text", "functionCall", "functionResponse")
            if kind == "functionCall":
                assert isinstance(part[kind]["args"], dict) and part[kind]["name"] == "search_orders"
            if kind == "functionResponse":
                assert isinstance(part[kind]["response"], dict)
    responses = [p["functionResponse"] for p in body["contents"][2]["parts"]]
    assert responses[0]["response"] == {"result": {"orders": [{"order_id": "A-1042"}]}}
    assert "error" in responses[1]["response"]
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert "$schema" not in declaration["parameters"] and "additionalProperties" not in declaration["parameters"]


@pytest.mark.parametrize("dialect", list(REQUEST_BUILDERS))
def test_the_demo_server_reads_back_what_we_send(dialect: str) -> None:
    """Our request builders and the demo's request parsers agree on history."""
    from app.demo.dialects import PARSERS

    _, body = build(dialect)
    parsed = PARSERS[dialect](body)
    users = [e.text for e in parsed.history if isinstance(e, User)]
    assert users == ["Check Ada's orders", "Did it work?"]
    calls = [c.arguments for e in parsed.history if isinstance(e, Assistant) for c in e.calls]
    assert calls == [{"customer": "Ada"}, {"customer": 5}]
    assert [t.name for t in parsed.tools] == ["search_orders"]


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses"])
def test_the_openai_wires_carry_the_arguments_as_json_dumps_wrote_them(dialect: str) -> None:
    """Why: the arguments are written from the dict a piece at a time (no
    ``json.dumps`` copy of a 10 MB call at every later request); the bytes
    on the wire must stay the ones ``json.dumps(arguments, ensure_ascii=False)``
    gave, default separators and all."""
    arguments = {"customer": "Ada \"Lovelace\"\n", "nested": {"list": [1, 2.5, None, True], "é": "☃"}}
    history = [User("hi"), Assistant("", [CallRecord("c1", "search_orders", arguments)]),
               ToolResult("c1", "search_orders", "ok")]
    _, body = REQUEST_BUILDERS[dialect]("model-x", history, TOOLS, None)
    sent = encode(body)
    assert sent == json.dumps(plain(body), ensure_ascii=False, separators=(",", ":")).encode()
    carried = json.loads(sent)
    if dialect == "openai-chat":
        text = carried["messages"][1]["tool_calls"][0]["function"]["arguments"]
    else:
        text = carried["input"][1]["arguments"]
    assert text == json.dumps(arguments, ensure_ascii=False)
