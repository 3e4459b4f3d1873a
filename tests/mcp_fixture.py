"""A fixture MCP server written with the official SDK's low-level ``Server``,
used in memory (``make_server()``), as a stdio subprocess
(``python -m tests.mcp_fixture stdio``) and over Streamable HTTP on 127.0.0.1
(``python -m tests.mcp_fixture http PORT``).

Tools:
- ``lookup(q)``: read-only (``readOnlyHint``), answers at once.
- ``effect(label)``: a side effect with no hints. It counts its runs per
  idempotency key (read from the request's ``_meta``) in the JSON file named by
  ``MCP_FIXTURE_COUNTS``, and answers with the count and the key it saw.
- ``fail()``: answers ``isError``.
- ``hang(seconds)``: a side effect that sleeps (for the tool timeout).
- ``crash()``: a side effect that kills the server mid-call (stdio).
- ``picture(broken?)``: read-only, answers an image (``picture_png``, 16×8, as Pillow writes it; with
  ``broken``, 2 KB that only start like a PNG) and structured content.
- ``bad_schema``: a schema every provider rejects somewhere (``mcp doctor``).

``--tools N`` adds N extra read-only tools ``t0``…, listed 100 a page.
``--mute`` never answers anything (a server that never starts).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server import Server

META_KEY = "callstream/idempotency-key"
PAGE = 100

_OBJECT = {"type": "object", "properties": {}}


@contextlib.contextmanager
def serving_http(module: str) -> Iterator[str]:
    """``python -m MODULE http PORT`` (this fixture, or another MCP test server) on a free loopback
    port, until it listens; yields its Streamable HTTP URL and stops it after."""
    from tests.conftest import ROOT  # the test side only: the server itself imports no pytest

    with listening_on_loopback(module, lambda port: ([sys.executable, "-m", module, "http", str(port)], None),
                               cwd=ROOT) as url:
        yield url


@contextlib.contextmanager
def listening_on_loopback(name: str, command: Callable[[int], tuple[list[str], dict[str, str] | None]],
                          cwd: Path | None = None) -> Iterator[str]:
    """Any MCP server process given a free 127.0.0.1 port (``command(port)``: its argv and env), until
    it listens (its exit while starting fails with its stderr); yields its Streamable HTTP URL and
    stops it after."""
    from tests.waiting import wait_until_sync

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv, env = command(port)
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def listening() -> bool:
        if process.poll() is not None:
            assert process.stderr is not None
            raise AssertionError(f"{name} exited: {process.stderr.read().decode()[-500:]}")
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    try:
        wait_until_sync(listening, f"{name} to listen on 127.0.0.1:{port}", timeout=60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def _tools(extra: int) -> list[types.Tool]:
    read_only = types.ToolAnnotations(read_only_hint=True)
    tools = [
        types.Tool(name="lookup", description="Look something up.", annotations=read_only,
                   input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
        types.Tool(name="effect", description="Do something that changes the world.",
                   input_schema={"type": "object", "properties": {"label": {"type": "string"}},
                                 "required": ["label"]}),
        types.Tool(name="fail", description="Always fails.", input_schema=_OBJECT,
                   annotations=types.ToolAnnotations(read_only_hint=True)),
        types.Tool(name="hang", description="Takes its time.",
                   input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}}),
        types.Tool(name="crash", description="Stops the server mid-call.", input_schema=_OBJECT),
        types.Tool(name="picture", description="A picture.", input_schema=_OBJECT, annotations=read_only),
        types.Tool(name="bad_schema", description="A schema providers reject.", annotations=read_only,
                   input_schema={"type": "object", "anyOf": [{"required": ["a"]}],
                                 "properties": {"a": {"type": "string"}, "tags": {"type": "array"}}}),
    ]
    tools += [types.Tool(name=f"t{i}", description=f"Extra tool {i}.", input_schema=_OBJECT, annotations=read_only)
              for i in range(extra)]
    return tools


def _count(key: str | None) -> int:
    path = os.environ.get("MCP_FIXTURE_COUNTS")
    if not path:
        return 0
    file = Path(path)
    counts: dict[str, int] = json.loads(file.read_text()) if file.exists() else {}
    counts[key or ""] = counts.get(key or "", 0) + 1
    file.write_text(json.dumps(counts))
    return counts[key or ""]


def make_server(extra: int = 0) -> Server[Any]:
    tools = _tools(extra)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        return types.ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        meta = ctx.meta or {}
        key = meta.get(META_KEY) if isinstance(meta, dict) else getattr(meta, META_KEY, None)

        def text(value: str) -> types.CallToolResult:
            return types.CallToolResult(content=[types.TextContent(text=value)])

        name = params.name
        if name == "lookup":
            return text(f"found: {args.get('q')}")
        if name == "effect":
            runs = _count(key)
            return text(json.dumps({"label": args.get("label"), "runs": runs, "key": key}))
        if name == "fail":
            return types.CallToolResult(content=[types.TextContent(text="the fixture always fails")], is_error=True)
        if name == "hang":
            await asyncio.sleep(float(args.get("seconds", 3600)))
            return text("woke up")
        if name == "crash":
            _count(key)
            os._exit(3)
        if name == "picture":
            png = base64.b64encode(picture_png() if not args.get("broken") else
                                   b"\x89PNG\r\n\x1a\n" + b"\x00" * 2040).decode()
            return types.CallToolResult(content=[types.ImageContent(data=png, mime_type="image/png")],
                                        structured_content={"width": 1, "height": 1})
        if name in {t.name for t in tools}:
            return text(f"{name} ok")
        return types.CallToolResult(content=[types.TextContent(text=f"no tool {name}")], is_error=True)

    return Server("fixture", on_list_tools=list_tools, on_call_tool=call_tool)


def picture_png() -> bytes:
    """The fixture's picture: a 16×8 gradient PNG, as Pillow writes it (the same bytes every time)."""
    import io

    from PIL import Image

    image = Image.new("RGB", (16, 8))
    image.putdata([(x * 16, y * 32, 200) for y in range(8) for x in range(16)])
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


async def _stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    print("fixture: starting on stdio", file=sys.stderr, flush=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: list[str]) -> None:
    extra = int(argv[argv.index("--tools") + 1]) if "--tools" in argv else 0
    if "--mute" in argv:
        print("fixture: muted, never answering", file=sys.stderr, flush=True)
        sys.stdin.read()
        return
    server = make_server(extra)
    if argv and argv[0] == "http":
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=int(argv[1]), log_level="warning")
        return
    asyncio.run(_stdio(server))


if __name__ == "__main__":
    main(sys.argv[1:])
