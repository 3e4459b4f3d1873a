"""An MCP server (the official SDK's low-level ``Server``, over stdio:
``python -m tests.mcp_poet``) whose one tool is a side effect that asks the
client's model for something in the middle of its call (``sampling/createMessage``) the
2026-07-28 way: its first answer is ``InputRequired`` (a sampling request), and the client
sends the call again with the model's reply — one call on the ledger, two round trips on the wire.

``write_poem()``: no hints (a side effect). It counts its runs per idempotency
key (read from the request's ``_meta``) in the JSON file named by
``MCP_POET_COUNTS`` (and the first round trips as ``asked KEY``), and answers with
the model's line, the count and the key it saw — what tests/test_mcp_sampling.py
checks exactly once by.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server import Server

from tests.mcp_fixture import META_KEY


def _count(key: str) -> int:
    file = Path(os.environ["MCP_POET_COUNTS"])
    counts: dict[str, int] = json.loads(file.read_text()) if file.exists() else {}
    counts[key] = counts.get(key, 0) + 1
    file.write_text(json.dumps(counts))
    return counts[key]


def make_server() -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="write_poem", description="Writes a line.", input_schema={"type": "object"})]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        meta = ctx.meta or {}
        key = str(meta.get(META_KEY) if isinstance(meta, dict) else getattr(meta, META_KEY, None))
        answered = (params.input_responses or {}).get("line")
        if answered is None:  # the first round trip: what it needs of the model, nothing done yet
            _count(f"asked {key}")
            return types.InputRequiredResult(
                input_requests={
                    "line": types.CreateMessageRequest(
                        params=types.CreateMessageRequestParams(
                            messages=[
                                types.SamplingMessage(
                                    role="user", content=types.TextContent(text="A line about the sea?")
                                )
                            ],
                            max_tokens=40,
                            system_prompt="You are a poet.",
                            model_preferences=types.ModelPreferences(hints=[types.ModelHint(name="claude-3")]),
                        )
                    )
                }
            )
        runs = _count(key)  # the side effect, once the line is there
        content = getattr(answered, "content", None)
        said = content.text if isinstance(content, types.TextContent) else "?"
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps({"poem": said, "key": key, "runs": runs}))]
        )

    return Server("poet", on_list_tools=list_tools, on_call_tool=call_tool)


async def _stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = make_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    print("poet: starting on stdio", file=sys.stderr, flush=True)
    asyncio.run(_stdio())
