"""MCP tool servers (beside ``app/tools``): config and ``${VAR}`` expansion,
the SDK client's lifecycle per server, ``server__tool`` names, result
mapping, and each server's capped stderr log. Schemas are adapted per wire
format where every tool's are, in ``app/stream/dialects/schemas.py``.

Heavy imports (the SDK) happen when a server starts, not on import; the
submodules themselves load when first named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..stream.lazy import lazy_exports

if TYPE_CHECKING:
    from .names import tool_name
    from .servers import IDEMPOTENCY_META, MCPHub, ServerConnection, ServerStatus
    from .tools import attach_servers, mcp_tool, open_hub, server_tools

#: Where each name lives, imported on first use: a start with no MCP server
#: needs nothing here.
__getattr__ = lazy_exports(__name__, {
    ".names": ("tool_name",),
    ".servers": ("IDEMPOTENCY_META", "MCPHub", "ServerConnection", "ServerStatus"),
    ".tools": ("attach_servers", "mcp_tool", "open_hub", "server_tools"),
})

__all__ = ["tool_name",
           "IDEMPOTENCY_META", "MCPHub", "ServerConnection", "ServerStatus",
           "attach_servers", "mcp_tool", "open_hub", "server_tools"]
