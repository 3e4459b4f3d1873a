"""Attachments on every wire (issue 28 items 2 and 5): a request with an
image, a PDF and a text file, and one whose tool returned an image, built by
each dialect and validated against the official SDKs' request types
(openai, anthropic, google-genai), as tests/test_requests.py does; and the
demo's parsers read the same attachments back."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from app.files.attach import from_bytes
from app.stream.dialects import REQUEST_BUILDERS
from app.stream.history import Assistant, CallRecord, Entry, ToolResult, User
from tests.attachment_files import image_bytes, pdf_bytes

PNG = from_bytes(image_bytes("PNG", (40, 30)), "chart.png")
PDF = from_bytes(pdf_bytes(), "report.pdf")
TEXT = from_bytes(b"Remember the milk\nand the eggs\n", "notes.txt")
SHOT = from_bytes(image_bytes("JPEG", (20, 10)), "screenshot.jpg")

ATTACHED: list[Entry] = [User("What are these?", [PNG, PDF, TEXT])]
TOOL_IMAGE: list[Entry] = [
    User("Take a screenshot"),
    Assistant("", [CallRecord("c1", "screenshot", {}), CallRecord("c2", "screenshot", {"page": 2})]),
    ToolResult("c1", "screenshot", "Took a screenshot.", images=[SHOT]),
    ToolResult("c2", "screenshot", "Nothing on page 2."),
]


def build(dialect: str, history: list[Entry]) -> dict[str, Any]:
    """The body as the provider reads it (the base64 a body streams, as strings)."""
    from app.stream.jsonwrite import plain

    body: dict[str, Any] = plain(REQUEST_BUILDERS[dialect]("model-x", history, [], None)[1])
    return body


def test_openai_chat_sends_image_url_file_and_text_parts_the_sdk_accepts() -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    body = build("openai-chat", ATTACHED)
    TypeAdapter(CompletionCreateParamsStreaming).validate_python(body)
    parts = body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["image_url", "file", "text", "text"]
    assert parts[0]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG.data).decode()
    assert parts[1]["file"]["filename"] == "report.pdf"
    assert parts[1]["file"]["file_data"].startswith("data:application/pdf;base64,")
    assert parts[2]["text"] == "[file notes.txt]\nRemember the milk\nand the eggs\n"
    assert parts[3] == {"type": "text", "text": "What are these?"}


def test_openai_responses_sends_input_image_input_file_and_input_text_the_sdk_accepts() -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    body = build("openai-responses", ATTACHED)
    TypeAdapter(ResponseCreateParamsStreaming).validate_python(body)
    parts = body["input"][0]["content"]
    assert [p["type"] for p in parts] == ["input_image", "input_file", "input_text", "input_text"]
    assert parts[0]["image_url"].startswith("data:image/png;base64,")
    assert parts[1]["filename"] == "report.pdf" and parts[1]["file_data"].startswith("data:application/pdf;")


def test_anthropic_sends_image_and_document_blocks_the_sdk_accepts() -> None:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming

    body = build("anthropic", ATTACHED)
    TypeAdapter(MessageCreateParamsStreaming).validate_python(body)
    blocks = body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["image", "document", "document", "text"]
    assert blocks[0]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG.b64()}
    assert blocks[1]["source"]["media_type"] == "application/pdf" and blocks[1]["title"] == "report.pdf"
    assert blocks[2]["source"] == {"type": "text", "media_type": "text/plain",
                                   "data": "Remember the milk\nand the eggs\n"}


def test_gemini_sends_inline_data_google_genai_reads_back_to_the_same_bytes() -> None:
    from google.genai import types

    body = build("gemini", ATTACHED)
    content = types.Content.model_validate_json(json.dumps(body["contents"][0]))
    blobs = [p.inline_data for p in content.parts or [] if p.inline_data is not None]
    assert [(b.mime_type, b.data) for b in blobs] == [("image/png", PNG.data), ("application/pdf", PDF.data)]
    texts = [p.text for p in content.parts or [] if p.text]
    assert texts == ["[file notes.txt]\nRemember the milk\nand the eggs\n", "What are these?"]


def test_anthropic_puts_a_tool_image_inside_its_tool_result() -> None:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming

    body = build("anthropic", TOOL_IMAGE)
    TypeAdapter(MessageCreateParamsStreaming).validate_python(body)
    results = body["messages"][2]["content"]
    assert results[0]["content"][0] == {"type": "text", "text": "Took a screenshot."}
    assert results[0]["content"][1]["type"] == "image" and results[0]["content"][1]["source"]["data"] == SHOT.b64()
    assert results[1]["content"] == "Nothing on page 2."
    assert len(body["messages"]) == 3  # no extra user message


def test_openai_chat_sends_a_tool_image_in_the_user_message_after_the_results() -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    body = build("openai-chat", TOOL_IMAGE)
    TypeAdapter(CompletionCreateParamsStreaming).validate_python(body)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user"]  # both results first: the calls stay answered
    assert body["messages"][2]["content"] == "Took a screenshot."
    last = body["messages"][4]["content"]
    assert last[0]["text"].startswith("[The image returned by screenshot")
    assert last[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")


def test_openai_responses_sends_a_tool_image_in_a_user_message_after_the_outputs() -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    body = build("openai-responses", TOOL_IMAGE)
    TypeAdapter(ResponseCreateParamsStreaming).validate_python(body)
    kinds = [item.get("type", item.get("role")) for item in body["input"]]
    assert kinds == ["user", "function_call", "function_call", "function_call_output", "function_call_output",
                     "user"]
    assert body["input"][-1]["content"][1]["type"] == "input_image"


def test_gemini_sends_a_tool_image_as_inline_data_beside_the_function_responses() -> None:
    from google.genai import types

    body = build("gemini", TOOL_IMAGE)
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    content = types.Content.model_validate_json(json.dumps(body["contents"][2]))
    parts = content.parts or []
    assert [p.function_response is not None for p in parts[:2]] == [True, True]
    assert parts[3].inline_data is not None and parts[3].inline_data.data == SHOT.data


@pytest.mark.parametrize("dialect", list(REQUEST_BUILDERS))
def test_the_demo_reads_back_the_attachments_we_send(dialect: str) -> None:
    from app.demo.dialects import PARSERS

    parsed = PARSERS[dialect](build(dialect, ATTACHED))
    (user,) = [e for e in parsed.history if isinstance(e, User)]
    assert user.text == "What are these?"
    assert [(a.media_type, a.data, a.width) for a in user.attachments] == [
        ("image/png", PNG.data, 40), ("application/pdf", PDF.data, None), ("text/plain", TEXT.data, None)]


@pytest.mark.parametrize("dialect", list(REQUEST_BUILDERS))
def test_the_demo_gives_a_tool_image_back_to_its_tool_result(dialect: str) -> None:
    from app.demo.dialects import PARSERS

    parsed = PARSERS[dialect](build(dialect, TOOL_IMAGE))
    assert [e.text for e in parsed.history if isinstance(e, User)] == ["Take a screenshot"]
    images = [a.data for e in parsed.history if isinstance(e, ToolResult) for a in e.images]
    assert images == [SHOT.data]


def test_an_mcp_image_result_is_kept_and_goes_to_the_model_as_an_image(tmp_path: Any) -> None:
    """The MCP result conversion keeps a whole image by hash and names it in the
    result line; the next request's history gives it back to the tool result,
    and each dialect sends it as item 5 says."""
    import mcp_types as types

    from app.chat.attaching import with_tool_images
    from app.files.paths import data_dir
    from app.mcp.results import map_result

    png = image_bytes("PNG", (12, 9))
    result = types.CallToolResult(content=[types.TextContent(text="the chart"),
                                           types.ImageContent(data=base64.b64encode(png).decode(),
                                                              mime_type="image/png")])
    mapped = map_result(result)
    digest = from_bytes(png, "x").digest
    assert mapped.text.splitlines()[1] == (f"[image: image/png, {len(png)} B] (sent to the model as an image; "
                                           f"attachment {digest})")
    assert (data_dir() / "attachments" / digest[:2] / digest).read_bytes() == png
    history: list[Entry] = [User("chart please"), Assistant("", [CallRecord("c1", "fx__chart", {})]),
                            ToolResult("c1", "fx__chart", mapped.text)]
    with_tool_images(history)
    result_entry = history[2]
    assert isinstance(result_entry, ToolResult)
    assert [(i.media_type, i.width, i.data) for i in result_entry.images] == [("image/png", 12, png)]
    anthropic = build("anthropic", history)["messages"][2]["content"][0]["content"]
    assert anthropic[1]["type"] == "image"
    chat = build("openai-chat", history)["messages"]
    assert chat[-1]["role"] == "user" and chat[-1]["content"][1]["type"] == "image_url"


def test_an_mcp_image_that_is_not_a_whole_image_stays_a_line() -> None:
    import mcp_types as types

    from app.mcp.results import map_result

    broken = types.CallToolResult(content=[types.ImageContent(data="AAAA", mime_type="image/png")])
    assert map_result(broken).text == "[image: image/png, 3 B]"
