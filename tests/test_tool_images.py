"""A tool's image reaches the model as an image (issue 28 item 5): an MCP
image from the fixture server and from server-everything's image tool, and a
command tool that declares ``output = "image"``, each called by a scripted
model through the real chat loop; the next request carries the image inside
the tool result on Anthropic's wire, and after the results, in the
user-side message, on every other. The card shows it and says which."""

from __future__ import annotations

import base64
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from app.chat.session import ChatSession
from app.ledger import SqliteLedger as Ledger
from app.mcp import attach_servers, open_hub
from app.net.endpoint import Endpoint
from app.net.stream import Timeouts
from app.settings.mcp import parse_servers
from app.settings.tools import CommandToolConfig
from app.stream import ToolCallBlock
from app.stream.attachments import tool_image_route
from app.tools.command import command_tool
from app.tools.registry import Registry
from tests import streamgen
from tests.conftest import ROOT
from tests.faultserver import FaultServer, Reply
from tests.mcp_fixture import picture_png
from tests.test_mcp_everything import everything

DIALECTS = ["anthropic", "openai-chat", "openai-responses", "gemini"]
FIXTURE = {"command": sys.executable, "args": ["-m", "tests.mcp_fixture", "stdio"], "cwd": str(ROOT),
           "startup_timeout": 60, "approval": "never"}


def pixels(data: bytes) -> tuple[int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return image.size


def _b64_of(url_or_data: str) -> bytes:
    return base64.b64decode(url_or_data.split("base64,", 1)[-1])


def sent_images(dialect: str, body: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    """(images inside tool results, images in a user-side message after them) of a request body."""
    inside: list[bytes] = []
    after: list[bytes] = []
    if dialect == "anthropic":
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    inside += [base64.b64decode(b["source"]["data"]) for b in block["content"] if b["type"] == "image"]
                elif block.get("type") == "image":
                    after.append(base64.b64decode(block["source"]["data"]))
    elif dialect == "openai-chat":
        for message in body["messages"]:
            if message["role"] == "tool":
                assert isinstance(message["content"], str)  # chat's tool messages are text only
            elif message["role"] == "user" and isinstance(message["content"], list):
                after += [_b64_of(p["image_url"]["url"]) for p in message["content"] if p["type"] == "image_url"]
    elif dialect == "openai-responses":
        for item in body["input"]:
            if item.get("type") == "function_call_output":
                assert isinstance(item["output"], str)
            elif item.get("role") == "user" and isinstance(item.get("content"), list):
                after += [_b64_of(p["image_url"]) for p in item["content"] if p["type"] == "input_image"]
    else:
        for content in body["contents"]:
            parts = content["parts"]
            if any("functionResponse" in p for p in parts):
                after += [base64.b64decode(p["inlineData"]["data"]) for p in parts if "inlineData" in p]
    return inside, after


def reply(dialect: str, script: list[Any], final: bool) -> bytes:
    encode = streamgen.ENCODERS[dialect]
    if dialect == "openai-chat":
        return encode(script, finish="stop" if final else "tool_calls")
    if dialect == "anthropic":
        return encode(script, stop_reason="end_turn" if final else "tool_use")
    return encode(script)


async def run_calls(dialect: str, registry: Registry, calls: list[tuple[str, dict[str, Any]]],
                    tmp_path: Path) -> tuple[ChatSession, dict[str, Any]]:
    script: list[Any] = [("text", "Looking. ")]
    for slot, (name, arguments) in enumerate(calls):
        script += streamgen.call_script(slot, f"c{slot}", name, json.dumps(arguments))
    with FaultServer() as model:
        model.replies.append(Reply(reply(dialect, script, final=False)))
        model.replies.append(Reply(reply(dialect, [("text", "I see it.")], final=True)))
        session = ChatSession(Endpoint(dialect, model.url, "m", "test"), registry, Ledger(tmp_path / "l.db"),
                              f"conv-{dialect}", backoff=0.01, timeouts=Timeouts(10.0, 30.0, 60.0))
        try:
            done = await session.send("what does it show?")
        finally:
            await session.aclose()
    assert done.status == "done", done
    ran = [b for b in session.turns[0].blocks if isinstance(b, ToolCallBlock)]
    assert [b.state for b in ran] == ["ran"] * len(calls), [(b.name, b.state, b.result) for b in ran]
    return session, model.requests[1]["body"]


def check_route(dialect: str, body: dict[str, Any], expected: list[bytes]) -> None:
    inside, after = sent_images(dialect, body)
    if dialect == "anthropic":
        assert sorted(inside) == sorted(expected) and after == []
    else:
        assert inside == [] and sorted(after) == sorted(expected)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_the_fixture_servers_image_goes_to_the_model_as_each_wire_takes_it(dialect: str,
                                                                                 tmp_path: Path) -> None:
    registry = Registry([])
    attach_servers(registry, open_hub(parse_servers({"fx": FIXTURE}, "test"), tmp_path / "logs"))
    await registry.settled()
    try:
        session, body = await run_calls(dialect, registry, [("fx__picture", {})], tmp_path)
    finally:
        await registry.aclose()
    check_route(dialect, body, [picture_png()])
    (call,) = [b for b in session.turns[0].blocks if isinstance(b, ToolCallBlock)]
    assert call.result is not None and "(sent to the model as an image; attachment" in call.result


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_server_everythings_image_tool_goes_to_the_model_as_each_wire_takes_it(dialect: str,
                                                                                     tmp_path: Path) -> None:
    registry = Registry([])
    attach_servers(registry, open_hub(parse_servers({"ev": everything(approval="never")}, "test"),
                                      tmp_path / "logs"))
    await registry.settled()
    try:
        _, body = await run_calls(dialect, registry, [("ev__get-tiny-image", {})], tmp_path)
    finally:
        await registry.aclose()
    inside, after = sent_images(dialect, body)
    (image,) = inside or after
    assert pixels(image)[0] > 0  # a whole image, decoded
    check_route(dialect, body, [image])


def image_command(tmp_path: Path, data: bytes, name: str = "chart") -> CommandToolConfig:
    source = tmp_path / "image.bin"
    source.write_bytes(data)
    return CommandToolConfig(name=name, command=[sys.executable, "-c", f"import sys; sys.stdout.buffer.write("
                                                 f"open({str(source)!r}, 'rb').read())"], read_only=True,
                             output="image")


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_command_tool_declaring_an_image_output_sends_it_to_the_model_as_an_image(
        dialect: str, tmp_path: Path) -> None:
    png = picture_png()
    registry = Registry([command_tool(image_command(tmp_path, png))])
    _, body = await run_calls(dialect, registry, [("chart", {})], tmp_path)
    check_route(dialect, body, [png])


async def test_a_command_tool_declaring_an_image_that_writes_text_fails_with_a_sentence(tmp_path: Path) -> None:
    from app.tools.base import ToolContext, ToolError

    tool = command_tool(image_command(tmp_path, b"not a picture\n"))
    with pytest.raises(ToolError, match=r"declared an image output, but wrote no usable image \(is not an image"):
        await tool.run({}, ToolContext("k"))


async def test_a_command_tool_declaring_an_image_that_writes_a_truncated_png_fails_with_a_sentence(
        tmp_path: Path) -> None:
    from app.tools.base import ToolContext, ToolError
    from tests.attachment_files import image_bytes

    whole = image_bytes("PNG", (60, 60), noise=True)
    tool = command_tool(image_command(tmp_path, whole[: len(whole) // 2]))
    with pytest.raises(ToolError, match="damaged or truncated"):
        await tool.run({}, ToolContext("k"))


def test_an_output_that_is_neither_text_nor_image_is_a_config_error() -> None:
    from app.settings.checks import ConfigError
    from app.settings.tools import parse_tool

    with pytest.raises(ConfigError, match=r"tools.x.output must be one of text, image \(got 'video'\)"):
        parse_tool("x", {"command": "true", "output": "video"}, "tools.x", [])


@pytest.mark.parametrize(("dialect", "size"), [("anthropic", (120, 40)), ("openai-chat", (60, 20))])
async def test_the_card_shows_the_tools_image_and_says_how_it_reached_the_model(
        dialect: str, size: tuple[int, int], tmp_path: Path, request: pytest.FixtureRequest) -> None:
    from app.settings.config import Config
    from app.tui.app import make_app
    from tests.snapshots import check_snapshot
    from tests.test_tui import still
    from tests.test_tui_everyday import send
    from widgets.attachment_chips import AttachmentChips
    from widgets.note import NoteBlock
    from widgets.tool_card import ToolCard

    tool = image_command(tmp_path, picture_png())
    with FaultServer() as model:
        script = [("text", "Drawing. "), *streamgen.call_script(0, "c0", "chart", "{}")]
        model.replies.append(Reply(reply(dialect, script, final=False)))
        model.replies.append(Reply(reply(dialect, [("text", "A gradient.")], final=True)))
        app = still(make_app(config=Config(tools={"chart": tool}),
                             endpoint=Endpoint(dialect, model.url, "m", "test")))
        async with app.run_test(size=size) as pilot:
            await send(app, pilot, "draw me a chart")
            (card,) = app.screen.query(ToolCard)
            after = list(card.parent.children)[list(card.parent.children).index(card) + 1:]  # type: ignore[union-attr]
            chips, note = after[0], after[1]
            assert isinstance(chips, AttachmentChips) and isinstance(note, NoteBlock)
            shown = str(chips.render())
            assert "PNG" in shown and "16×8" in shown and "▀" in shown
            said = str(note.render())
            assert tool_image_route(dialect) in said
            assert ("inside the tool result" in said) == (dialect == "anthropic")
            await pilot.pause()
            check_snapshot(app, f"tool_image_card_{size[0]}x{size[1]}", request.config,
                           mask=r"[0-9a-f]{64}")
