"""Reading a server's resources: for the model (the built-in ``read_resource`` tool), for a
person's message (attachments), for the command line (``mcp read``) and for a card.

- The model reads through ``read_resource(server, uri)``, a built-in tool that is read-only
  (so the one approval function, ``tools.approvals``, treats it as any read: it runs unless the
  config says otherwise), offered only while a connected server declares resources
  (``offer_reader``). What it returns is text: each text content after its resource line
  (``stream.resource_lines``), an image kept in the data dir and sent to the model as an image
  (``results.keep_image``, the tool-image path), any other binary a stated summary.
- A person attaches one with ``@server:uri`` or ``/resource``: text as a text attachment, an
  image or a PDF as what it is (``files.attach.from_bytes``: the attachment checks), anything
  else as a text attachment holding the stated summary — the attachments' path
  (``chat.attaching.ready_for``) then decides what the provider takes.
- Template arguments and prompt arguments are completed with ``completion/complete`` where the
  server declares completions.
- ``subscribe`` asks the server to tell of changes to a URI: ``resources/subscribe`` on a 2025-era
  connection (``notifications/resources/updated``), a ``subscriptions/listen`` stream on a
  2026-07-28 one (``Catalog.watch``); the catalog hands each change to whoever shows it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import warnings
from typing import Any

from ..files.attach import AttachError, from_bytes
from ..settings.tools import READER_NAME
from ..stream.attachments import Attachment, size_words
from ..stream.redact import redact
from ..stream.resource_lines import binary_line, resource_head
from ..tools.base import DisplayField, Tool, ToolContext, ToolError
from ..tools.images import image_result
from ..tools.output import capped_text
from ..tools.registry import Registry
from .catalog import Catalog, catalog_of
from .results import keep_image
from .servers import MCPHub, ServerConnection

__all__ = ["ResourceError", "READER_NAME", "read", "as_text", "as_attachments", "complete", "reader_tool",
           "offer_reader", "subscribe", "MAX_COMPLETIONS"]

#: Completion values kept from one answer.
MAX_COMPLETIONS = 100
_ORIGIN = "mcp:resources"


class ResourceError(Exception):
    """A resource that could not be read; the message is the sentence to show."""


def _client(catalog: Catalog, name: str) -> tuple[ServerConnection, Any]:
    server = catalog.server(name)
    if server is None:
        known = ", ".join(catalog.with_resources()) or "none"
        raise ResourceError(f"no connected MCP server named {name!r} offers resources (those that do: {known})")
    return server, server.client


async def read(catalog: Catalog, name: str, uri: str) -> list[Any]:
    """The contents of ``uri`` on server ``name`` (never from the SDK's cache: a changed one is read anew)."""
    from mcp.shared.exceptions import MCPError

    server, client = _client(catalog, name)
    try:
        async with asyncio.timeout(server.config.tool_timeout):
            result = await client.read_resource(uri, cache_mode="refresh")
    except TimeoutError:
        raise ResourceError(f"{name} did not answer within {server.config.tool_timeout:g} s (tool_timeout)") from None
    except MCPError as exc:
        raise ResourceError(redact(f"{name} could not read {uri}: {exc.message or exc.code}")) from None
    except Exception as exc:  # the connection went, an answer that cannot be read: said, never a traceback
        raise ResourceError(redact(f"{name} could not read {uri}: {type(exc).__name__}: {exc}")) from None
    return list(result.contents or [])


def _blob(content: Any) -> bytes | None:
    try:
        return base64.b64decode(getattr(content, "blob", "") or "", validate=True)
    except (binascii.Error, ValueError):
        return None


def _attachable(data: bytes | None, name: str) -> Attachment | None:
    try:
        return from_bytes(data, name) if data is not None else None
    except AttachError:
        return None


def as_text(contents: list[Any], limit: int) -> str:
    """What the model (and ``mcp read``) is given, within ``limit`` bytes (the cut stated)."""
    parts: list[str] = []
    for content in contents:
        uri, mime = str(content.uri), getattr(content, "mime_type", None)
        text = getattr(content, "text", None)
        if text is not None:
            parts.append(f"{resource_head(uri, mime, size_words(len(text.encode())))}\n{text}")
            continue
        data = _blob(content)
        item = _attachable(data, uri)
        if item is not None and item.kind == "text":  # a blob that is UTF-8 text is text
            parts.append(f"{resource_head(uri, mime, size_words(item.size))}\n{item.as_text()}")
            continue
        kept = keep_image(getattr(content, "blob", "") or "") if item is not None and item.kind == "image" else None
        if kept is not None:
            parts.append(f"{resource_head(uri, mime, size_words(kept.size))}\n"
                         f"{image_result(kept)}")
            continue
        parts.append(binary_line(uri, mime, size_words(len(data)) if data is not None else "unreadable base64"))
    data = redact("\n".join(parts) or "(the resource is empty)").encode("utf-8", "surrogatepass")
    return capped_text(data[:limit], max(0, len(data) - limit))


def as_attachments(contents: list[Any]) -> list[Attachment]:
    """A person's message's attachments for ``contents``: each as what it is where callstream can
    attach that, else as a text attachment stating what it was."""
    items: list[Attachment] = []
    for content in contents:
        uri, mime = str(content.uri), getattr(content, "mime_type", None)
        text = getattr(content, "text", None)
        data = text.encode("utf-8") if text is not None else _blob(content)
        try:
            if data is None:
                raise AttachError("unreadable base64")
            items.append(from_bytes(data, uri))
        except AttachError:
            size = size_words(len(data)) if data is not None else "unreadable base64"
            items.append(from_bytes(binary_line(uri, mime, size).encode(), uri))
    return items


async def complete(catalog: Catalog, name: str, ref: Any, argument: str, value: str,
                   context: dict[str, str] | None = None) -> list[str]:
    """The values the server suggests for ``argument`` of ``ref`` (a ``ResourceTemplateReference`` or
    ``PromptReference``) as typed so far; [] where it offers no completion or the request fails."""
    server = catalog.server(name)
    if server is None or not catalog.completes(server):
        return []
    try:
        async with asyncio.timeout(server.config.tool_timeout):
            result = await server.client.complete(ref, {"name": argument, "value": value}, context_arguments=context)
    except Exception:  # a suggestion that cannot be had is no suggestion; typing goes on
        return []
    return [str(v) for v in (result.completion.values or [])][:MAX_COMPLETIONS]


async def subscribe(catalog: Catalog, name: str, uri: str) -> bool:
    """Ask ``name`` to tell of changes to ``uri`` (where it offers subscriptions); True if it agreed."""
    server = catalog.server(name)
    if server is None or not catalog.subscribable(server):
        return False
    if getattr(server.client, "protocol_version", None) == "2026-07-28":  # it tells of changes on a listen stream
        return await catalog.watch(server, uri)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks it deprecated for 2026-era servers, which have listen
            await server.client.subscribe_resource(uri)
    except Exception:
        return False
    return True


def reader_tool(catalog: Catalog, servers: list[str], limit: int) -> Tool:
    async def run(arguments: dict[str, Any], ctx: ToolContext) -> str:
        server, uri = arguments.get("server"), arguments.get("uri")
        if not isinstance(server, str) or not isinstance(uri, str) or not uri:
            raise ToolError("read_resource needs a server (one of " + ", ".join(servers) + ") and a uri")
        try:
            return as_text(await read(catalog, server, uri), limit)
        except ResourceError as exc:
            raise ToolError(str(exc)) from None

    return Tool(
        name=READER_NAME,
        description=("Read a resource of a connected MCP server by its URI (a resource link or embedded resource "
                     "in a tool result names one). Read-only."),
        parameters={"type": "object", "properties": {
            "server": {"type": "string", "enum": servers, "description": "the MCP server that holds the resource"},
            "uri": {"type": "string", "description": "the resource's URI"}},
            "required": ["server", "uri"]},
        run=run, read_only=True, origin=_ORIGIN,
        display=(DisplayField("server", "server"), DisplayField("uri", "uri")))


def offer_reader(registry: Registry, hub: MCPHub) -> Catalog:
    """``registry`` offers ``read_resource`` exactly while a connected server declares resources (its
    ``server`` choices are those servers), from the moment the server is ready."""
    catalog = catalog_of(hub)

    def offer(_server: ServerConnection) -> None:
        names = catalog.with_resources()
        limit = min((s.output_limit for s in hub.servers), default=0)
        registry.replace(_ORIGIN, [reader_tool(catalog, names, limit)] if names else [])

    hub.listeners.append(offer)
    return catalog
