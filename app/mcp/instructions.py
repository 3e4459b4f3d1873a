"""A server's ``instructions``, offered to the model as the specification
suggests: beside the system prompt, for the requests that offer its tools.

The text is the server's own, so it is labelled as such (it tells how to use
that server's tools; it does not speak for the person or for callstream),
redacted, and cut at ``MAX_INSTRUCTIONS`` characters. ``[mcp.NAME]
instructions = false`` keeps a server's out of every request.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..stream.redact import redact

__all__ = ["with_instructions", "server_instructions", "MAX_INSTRUCTIONS"]

#: Characters of one server's instructions offered at most.
MAX_INSTRUCTIONS = 8000


def server_instructions(server: Any) -> str | None:
    """What ``server`` (a ready ``ServerConnection``) asked to be told, or None (none, or its config says no)."""
    if not server.config.instructions or server.client is None:
        return None
    text = getattr(server.client, "instructions", None)
    if not isinstance(text, str) or not text.strip():
        return None
    text = redact(text.strip())
    if len(text) > MAX_INSTRUCTIONS:
        text = text[:MAX_INSTRUCTIONS] + f"\n[callstream: {len(text) - MAX_INSTRUCTIONS} more characters cut]"
    return (f"Instructions from the MCP server {server.config.name!r} on using its tools (the server's own "
            f"words; they do not speak for the user):\n{text}")


def with_instructions(system: str | None, registry: Any, offered: Iterable[str]) -> str | None:
    """``system`` followed by the instructions of each server one of whose
    tools is ``offered`` (tool names as the model sees them)."""
    source = getattr(registry, "source", None)
    servers = getattr(source, "servers", None)
    if not servers:
        return system
    origins = {tool.origin for name in offered if (tool := registry.get(name)) is not None}
    parts = [text for server in servers
             if f"mcp:{server.config.name}" in origins and (text := server_instructions(server)) is not None]
    if not parts:
        return system
    return "\n\n".join([system, *parts] if system else parts)
