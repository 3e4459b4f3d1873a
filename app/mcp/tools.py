"""An MCP server's tools as callstream ``Tool``s: the dispatcher, the
finaliser, the ledger and the cards treat them like any other tool.

- name: ``server__tool`` (``names.tool_name``); the server is called by its own name.
- read-only: the tool's ``readOnlyHint`` (concurrent, warmable); anything
  else, destructive or unhinted, is a side effect and asks first.
- display: only the fields ``[mcp.NAME.tool.TOOL].display`` lists.
- an answer lost after the call was sent (the server went away, a timeout,
  HTTP 5xx, an answer that cannot be read): for a side effect
  ``OutcomeUnknown`` (the ledger keeps it as ``unknown``, never re-run); for
  a read-only call a plain failure. A call never sent (the server could not
  be started again) is ``NotSent``: ``not run``. A JSON-RPC error answer is a
  failed call in the server's words.
- a result past ``[limits] tool_output_bytes`` is cut with the marker
  command tools use (``app/tools/output.capped_text``); one too long to hold
  was cut on arrival (``wire``), and its ``_meta`` says by how much.
- hints are judged as they are now: ``refresh`` waits for a tool list the
  server said changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..settings.mcp import MCPServerConfig
from ..stream.limits import DEFAULT_LIMITS
from ..stream.redact import redact
from ..tools.base import DisplayField, NotSent, OutcomeUnknown, Tool, ToolContext, ToolError
from ..tools.output import capped_text
from ..tools.registry import Registry
from .names import refusals, tool_name
from .resources import offer_reader
from .results import map_result
from .servers import ListedTool, MCPHub, ServerConnection, TransportLost
from .wire import CUT_META

__all__ = ["mcp_tool", "server_tools", "open_hub", "attach_servers"]

#: Seconds the dispatcher allows beyond the server's own tool_timeout, so the
#: MCP call's timeout (which knows a side effect from a read) fires first.
_MARGIN = 5.0


def mcp_tool(server: ServerConnection, listed: ListedTool) -> Tool:
    config = server.config
    options = config.tool.get(listed.name)
    name = tool_name(config.name, listed.name)

    async def run(arguments: dict[str, Any], ctx: ToolContext) -> str:
        from mcp.shared.exceptions import MCPError

        try:
            result = await server.call(listed.name, arguments, ctx.idempotency_key, progress=_progress(ctx),
                                       elicit=ctx.elicit, sample=ctx.sample)
        except TransportLost as exc:
            if listed.read_only:
                raise ToolError(str(exc)) from None
            raise OutcomeUnknown(f"{exc}; it may have acted") from None
        except MCPError as exc:  # the server's own error answer: it says what went wrong
            raise ToolError(f"{config.name} answered with an error: {exc.message or exc.code}") from None
        except NotSent:
            raise
        except Exception as exc:  # anything else the SDK raised before an answer came
            raise ToolError(f"{config.name} refused the call: {exc}") from None
        await server.current()  # a list change sent with the answer is in force before the model hears of it
        text = _capped(map_result(result).text, result, server.output_limit)
        if result.is_error:
            raise ToolError(text or "the tool reported an error")
        return text

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
        refresh=server.current,
    )


def _progress(ctx: ToolContext) -> Callable[[float, float | None, str | None], Awaitable[None]] | None:
    """The SDK's progress callback for one call (its presence sends a
    progress token): each report goes to whoever listens on ``ctx``."""
    report = ctx.progress
    if report is None:
        return None

    async def progress(done: float, total: float | None, message: str | None) -> None:
        report(done, total, redact(message) if message else message)

    return progress


def _capped(text: str, result: Any, limit: int) -> str:
    """``text`` within ``limit`` bytes, the cut stated with the one marker
    (counting what ``wire`` already cut from an answer too long to hold)."""
    meta = getattr(result, "meta", None) or {}
    already = meta.get(CUT_META) if isinstance(meta, dict) else None
    already = already if isinstance(already, int) and already > 0 else 0
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit and not already:
        return text
    return capped_text(data[:limit], len(data) - min(len(data), limit) + already)


def _redacted(run: Callable[[dict[str, Any], ToolContext], Awaitable[str]]
              ) -> Callable[[dict[str, Any], ToolContext], Awaitable[str]]:
    """``run`` whose result and error messages are redacted where they are
    made: a server that echoes a token it was configured with ("token … is
    expired") reaches neither a card nor the next provider request with it."""

    async def redacted(arguments: dict[str, Any], ctx: ToolContext) -> str:
        try:
            return redact(await run(arguments, ctx))
        except (ToolError, OutcomeUnknown, NotSent) as exc:
            raise type(exc)(redact(str(exc))) from None

    return redacted


def _origin(server: ServerConnection) -> str:
    return f"mcp:{server.config.name}"


def server_tools(server: ServerConnection) -> list[Tool]:
    """The tools of ``server`` it may offer (a name already taken is refused: ``status.refused``; one
    callstream cannot call as it requires is not offered: ``ListedTool.unsupported``)."""
    return [mcp_tool(server, listed) for listed in server.status.tools
            if listed.name not in server.status.refused and listed.unsupported is None]


def _named(server: ServerConnection) -> list[tuple[str, str, str]]:
    return [(_origin(server), t.name, tool_name(server.config.name, t.name)) for t in server.status.tools]


def mark_refusals(servers: list[ServerConnection], others: Registry) -> None:
    """Each server's tools whose names are taken — by a built-in or command
    tool of ``others``, by a server earlier in the config, or twice by
    itself — are refused, with the reason, in its status (``mcp list`` and
    ``mcp doctor`` show them)."""
    held = [(tool.origin, name, name) for name in others.names() if (tool := others.get(name)) is not None]
    refused = refusals([*held, *(entry for server in servers for entry in _named(server))])
    for server in servers:
        origin = _origin(server)
        server.status.refused = {tool: why for (holder, tool), why in refused.items() if holder == origin}


def attach_servers(registry: Registry, hub: MCPHub) -> None:
    """``registry`` starts, waits for and closes ``hub``'s servers, and offers
    each server's tools as soon as it lists them (none once it fails), and
    again each time it lists them anew. A tool whose name another holds is
    not offered (the first holder keeps it), and its status says why. The
    built-in ``read_resource`` is offered while a server offers resources."""
    registry.attach(hub)

    def offer(server: ServerConnection) -> None:
        origin = _origin(server)
        held = [(tool.origin, name, name) for name in registry.names()
                if (tool := registry.get(name)) is not None and tool.origin != origin]
        refused = refusals([*held, *_named(server)])
        server.status.refused = {tool: why for (holder, tool), why in refused.items() if holder == origin}
        registry.replace(origin, server_tools(server))

    hub.listeners.append(offer)
    offer_reader(registry, hub)  # read_resource, while a connected server offers resources


def open_hub(configs: dict[str, MCPServerConfig], log_dir: Path | None,
             targets: dict[str, Any] | None = None,
             output_limit: int = DEFAULT_LIMITS.tool_output_bytes) -> MCPHub:
    """A hub for the configured servers (``targets`` maps a name to an
    in-memory SDK server, for tests); ``output_limit`` is ``[limits]
    tool_output_bytes``."""
    targets = targets or {}
    return MCPHub([ServerConnection(cfg, log_dir, target=targets.get(name), output_limit=output_limit)
                   for name, cfg in configs.items()])
