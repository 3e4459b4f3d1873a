"""An MCP server that echoes the secret it was configured with, as a real one
does when a token has expired ("token … is expired"): over stdio it echoes
the ``ECHO_TOKEN`` of its environment, over Streamable HTTP on 127.0.0.1 the
``Authorization`` header of the request.

``python -m tests.mcp_echo stdio`` | ``python -m tests.mcp_echo http PORT``
(over stdio it also prints the token on stderr, into its log); ``fail``
prints it on stderr (and any further arguments) and exits, so the server fails
with it in its reason.

Tools (side effects with no hints, so each is claimed in the ledger):
- ``whoami()``: a result that quotes the secret.
- ``refused()``: an ``isError`` result that quotes it.
- ``broken()``: a JSON-RPC error that quotes it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError

_OBJECT = {"type": "object", "properties": {}}


def _secret(ctx: Any) -> str:
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is not None:
        return str(headers.get("authorization", "")).removeprefix("Bearer ")
    return os.environ.get("ECHO_TOKEN", "")


def make_server() -> Server[Any]:
    tools = [types.Tool(name=name, description=f"{name}.", input_schema=_OBJECT)
             for name in ("whoami", "refused", "broken")]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        secret = _secret(ctx)
        if params.name == "whoami":
            return types.CallToolResult(content=[types.TextContent(text=f"you are token {secret}, which is expired")])
        if params.name == "refused":
            return types.CallToolResult(content=[types.TextContent(text=f"token {secret} is expired")], is_error=True)
        raise MCPError(-32001, f"cannot go on: token {secret} is expired")

    return Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)


async def _stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    print(f"echo: starting with token {os.environ.get('ECHO_TOKEN')}", file=sys.stderr, flush=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: list[str]) -> None:
    if argv and argv[0] == "fail":
        sys.exit(" ".join([f"echo: token {os.environ.get('ECHO_TOKEN')} is expired", *argv[1:]]))
    server = make_server()
    if argv and argv[0] == "http":
        import uvicorn

        uvicorn.run(server.streamable_http_app(host="127.0.0.1"), host="127.0.0.1", port=int(argv[1]),
                    log_level="warning")
        return
    asyncio.run(_stdio(server))


if __name__ == "__main__":
    main(sys.argv[1:])
