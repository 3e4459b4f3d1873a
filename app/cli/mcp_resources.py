"""``callstream mcp resources NAME`` and ``callstream mcp read NAME URI``: one server's resources
and resource templates listed, or one resource read, without a model — what ``read_resource``
would hand the model (an image named as kept, a binary one as a stated summary). Everything a
server says is printed inert."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

from ..stream.inert import inert
from .common import fail

__all__ = ["resources", "read"]


async def _started(name: str) -> tuple[Any, Any] | int:
    from ..files.paths import data_dir
    from ..mcp.catalog import catalog_of
    from ..mcp.tools import open_hub
    from ..settings.config import load_config

    config = load_config()
    if name not in config.mcp:
        known = ", ".join(sorted(config.mcp)) or "none are configured"
        return fail(f"no MCP server named {name!r} in the config ({known})")
    hub = open_hub({name: config.mcp[name]}, data_dir() / "mcp-logs", output_limit=config.limits.tool_output_bytes)
    catalog = catalog_of(hub)
    hub.start()
    await hub.wait_settled()
    return hub, catalog


async def _with_ready(name: str, then: Callable[[Any, Any], Awaitable[int]]) -> int:
    """``then(server, catalog)`` once the one server named is started and ready; its failure (no such
    server, not ready) said as a sentence otherwise, and the server closed however it ends."""
    started = await _started(name)
    if isinstance(started, int):
        return started
    hub, catalog = started
    try:
        server = hub.servers[0]
        if server.status.state != "ready":
            return fail(server.status.line())
        return await then(server, catalog)
    finally:
        await hub.close()


async def resources(name: str) -> int:
    async def listed(server: Any, catalog: Any) -> int:
        if not catalog.has_resources(server):
            print(f"{name} offers no resources.")
            return 0
        await catalog.settled()
        offered = catalog.offered[name]
        if offered.problem:
            print(f"callstream: {inert(offered.problem)}", file=sys.stderr)
        for resource in offered.resources:
            about = " — ".join(x for x in (resource.name, resource.mime_type or "", resource.description) if x)
            print(inert(f"{resource.uri}  {about}"))
        for template in offered.templates:
            about = " — ".join(x for x in (template.name, template.mime_type or "", template.description) if x)
            print(inert(f"{template.uri_template}  (template) {about}"))
        if not offered.resources and not offered.templates:
            print(f"{name} lists no resources.")
        return 0 if not offered.problem else 1

    return await _with_ready(name, listed)


async def read(name: str, uri: str) -> int:
    from ..mcp.resources import ResourceError, as_text
    from ..mcp.resources import read as read_resource

    async def shown(server: Any, catalog: Any) -> int:
        try:
            contents = await read_resource(catalog, name, uri)
        except ResourceError as exc:
            print(f"callstream: {inert(str(exc))}", file=sys.stderr)
            return 1
        print(inert(as_text(contents, server.output_limit)))
        return 0

    return await _with_ready(name, shown)
