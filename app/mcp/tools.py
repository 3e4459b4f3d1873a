"""An MCP server's tools as callstream ``Tool``s: the dispatcher, the
finaliser, the ledger and the cards treat them like any other tool.

- name: ``server__tool`` (``names.tool_name``); the server is called by its own name.
- read-only: the tool's ``readOnlyHint`` (concurrent, warmable); anything
  else, destructive or unhinted, is a side effect and asks first.
- display: only the fields ``[mcp.NAME.tool.TOOL].display`` lists.
- a transport death or a timeout mid-call: for a side effect ``OutcomeUnknown``
  (the ledger keeps it as ``unknown``, never re-run); for a read-only call a
  plain failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..settings.mcp import MCPServerConfig
from ..stream.redact import redact
from ..tools.base import DisplayField, OutcomeUnknown, Tool, ToolContext, ToolError
from ..tools.registry import Registry
from .names import tool_name
from .results import map_result
from .servers import ListedTool, MCPHub, ServerConnection, TransportLost

__all__ = ["mcp_tool", "server_tools", "open_hub", "attach_servers"]

#: Seconds the dispatcher allows beyond the server's own tool_timeout, so the
#: MCP call's timeout (which knows a side effect from a read) fires first.
_MARGIN = 5.0


def mcp_tool(server: ServerConnection, listed: ListedTool) -> Tool:
    config = server.config
    options = config.tool.get(listed.name)
    name = tool_name(config.name, listed.name)

    async def run(arguments: dict[str, Any], ctx: ToolContext) -> str:
        try:
            result = await server.call(listed.name, arguments, ctx.idempotency_key)
        except TransportLost as exc:
            if listed.read_only:
                raise ToolError(str(exc)) from None
            raise OutcomeUnknown(f"{exc}; it may have acted") from None
        except Exception as exc:  # a protocol error (MCPError), a result the SDK refused
            raise ToolError(f"{config.name} refused the call: {exc}") from None
        mapped = map_result(result)
        if mapped.is_error:
            raise ToolError(mapped.text or "the tool reported an error")
        return mapped.text

    description = listed.description or listed.title or listed.name
    return Tool(
        name=name,
        description=description[:2048],
        parameters=listed.input_schema or {"type": "object", "properties": {}},
        run=_redacted(run),
        read_only=listed.read_only,
        display=tuple(DisplayField(path, label) for path, label in (options.display if options else [])),
        timeout=config.tool_timeout + _MARGIN,
        approval=(options.approval if options and options.approval else None) or config.approval,
        origin=_origin(server),
    )


def _redacted(run: Callable[[dict[str, Any], ToolContext], Awaitable[str]]
              ) -> Callable[[dict[str, Any], ToolContext], Awaitable[str]]:
    """``run`` whose result and error messages are redacted where they are
    made: a server that echoes a token it was configured with ("token … is
    expired") reaches neither a card nor the next provider request with it."""

    async def redacted(arguments: dict[str, Any], ctx: ToolContext) -> str:
        try:
            return redact(await run(arguments, ctx))
        except (ToolError, OutcomeUnknown) as exc:
            raise type(exc)(redact(str(exc))) from None

    return redacted


def _origin(server: ServerConnection) -> str:
    return f"mcp:{server.config.name}"


def server_tools(server: ServerConnection) -> list[Tool]:
    return [mcp_tool(server, listed) for listed in server.status.tools]


def attach_servers(registry: Registry, hub: MCPHub) -> None:
    """``registry`` starts, waits for and closes ``hub``'s servers, and offers
    each server's tools as soon as it lists them (none once it fails)."""
    registry.attach(hub)
    hub.listeners.append(lambda server: registry.replace(_origin(server), server_tools(server)))


def open_hub(configs: dict[str, MCPServerConfig], log_dir: Path | None,
             targets: dict[str, Any] | None = None) -> MCPHub:
    """A hub for the configured servers (``targets`` maps a name to an
    in-memory SDK server, for tests)."""
    targets = targets or {}
    return MCPHub([ServerConnection(cfg, log_dir, target=targets.get(name)) for name, cfg in configs.items()])
