"""A stdio MCP server (the official SDK's low-level ``Server``) whose resources and prompt are
hostile or binary, for issue 26's resources and prompts: ``python -m tests.mcp_resources_fixture``.

- resources: ``hostile://note`` (text with terminal escapes, an OSC title, a bidi override),
  ``img://pixel`` (a PNG as a blob), ``bin://blob`` (bytes that are no file type).
- tool ``linker``: read-only; answers resource links to all three.
- template ``note://{id}`` whose ``id`` is completed (``alpha``, ``alpine``, ``beta``) by prefix.
- prompt ``evil``: one user message with the same escapes.
"""

from __future__ import annotations

import base64
import sys
from typing import Any

import mcp_types as types
from mcp.server import Server

HOSTILE = "Hello\x1b[2J\x1b]0;owned\x07 world \u202eevil"
PNG_SIZE = (24, 16)


def _png() -> bytes:
    from tests.attachment_files import image_bytes

    return image_bytes("PNG", PNG_SIZE)


def make_server() -> Server[Any]:
    resources = [types.Resource(uri="hostile://note", name="note", mime_type="text/plain"),
                 types.Resource(uri="img://pixel", name="pixel", mime_type="image/png"),
                 types.Resource(uri="bin://blob", name="blob", mime_type="application/x-thing")]

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resources)

    async def read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == "hostile://note":
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=HOSTILE,
                                                                                 mime_type="text/plain")])
        data = _png() if uri == "img://pixel" else bytes(range(256))
        mime = "image/png" if uri == "img://pixel" else "application/x-thing"
        return types.ReadResourceResult(contents=[types.BlobResourceContents(
            uri=uri, blob=base64.b64encode(data).decode(), mime_type=mime)])

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(uri_template="note://{id}", name="a note", mime_type="text/plain")])

    async def completion(ctx: Any, params: Any) -> types.CompleteResult:
        typed = params.argument.value
        return types.CompleteResult(completion=types.Completion(
            values=[v for v in ("alpha", "alpine", "beta") if v.startswith(typed)]))

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="linker", input_schema={"type": "object"},
                                                       annotations=types.ToolAnnotations(read_only_hint=True))])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        links = [types.ResourceLink(uri=r.uri, name=r.name, mime_type=r.mime_type) for r in resources]
        return types.CallToolResult(content=[types.TextContent(text="Three resources:"), *links])

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name="evil", description="a prompt\x1b[31m in red")])

    async def get_prompt(ctx: Any, params: Any) -> types.GetPromptResult:
        return types.GetPromptResult(messages=[types.PromptMessage(role="user",
                                                                   content=types.TextContent(text=HOSTILE))])

    return Server("resources-fixture", on_list_resources=list_resources, on_read_resource=read_resource,
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_prompts=list_prompts,
                  on_get_prompt=get_prompt, on_list_resource_templates=list_templates, on_completion=completion)


async def _stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    import anyio

    print("resources fixture: starting on stdio", file=sys.stderr, flush=True)
    anyio.run(_stdio, make_server())
