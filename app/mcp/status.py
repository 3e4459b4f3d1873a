"""What a server is, as ``/mcp``, ``callstream mcp list`` and ``mcp doctor``
show it: its state, its listed tools and what was not offered, and why.

Why its own module: the connection (``servers.py``) changes it and the
registry's MCP tools (``tools.py``) read it, but neither the state's words nor
its JSON depend on how a connection is kept.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MAX_TOOLS", "ListedTool", "ServerStatus"]

#: Tools advertised per server at most (OpenAI takes 128 in a request).
MAX_TOOLS = 128


@dataclass(slots=True)
class ListedTool:
    """A server's tool as listed (the SDK's ``Tool``, reduced to what we use)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool
    title: str | None = None
    #: What is wrong with its schema that it is offered anyway (``$ref``s too many to inline for Gemini).
    note: str | None = None
    #: Why it is listed but never offered (``capabilities.unsupported``: it requires tasks).
    unsupported: str | None = None


@dataclass(slots=True)
class ServerStatus:
    name: str
    state: str = "connecting"  # connecting | ready | failed | disabled
    transport: str = "stdio"
    tools: list[ListedTool] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    #: Listed tools not offered, by name, and why (a name another tool holds).
    refused: dict[str, str] = field(default_factory=dict)
    started_at: float = 0.0
    ready_ms: float | None = None
    reason: str | None = None
    log: Path | None = None
    protocol: str | None = None
    restarts: int = 0
    #: Its latest log messages, as lines (``notifications.ServerMessages``).
    messages: deque[str] = field(default_factory=deque)

    def line(self) -> str:
        if self.state == "ready":
            extra = f"; {len(self.dropped)} not advertised (over the cap of {MAX_TOOLS})" if self.dropped else ""
            extra += f"; {len(self.refused)} refused (a name already taken)" if self.refused else ""
            unsupported = sum(1 for t in self.tools if t.unsupported)
            extra += f"; {unsupported} not offered (callstream cannot call them as they require)" if unsupported else ""
            extra += f"; {self.reason}" if self.reason else ""
            return f"{self.name}: {len(self.tools)} tools in {self.ready_ms:.0f} ms ({self.protocol}){extra}"
        if self.state == "failed":
            log = f" (log: {self.log})" if self.log else ""
            return f"{self.name}: failed: {self.reason}{log}"
        return f"{self.name}: {self.state}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "state": self.state, "transport": self.transport,
                "tools": [t.name for t in self.tools], "dropped": list(self.dropped), "refused": dict(self.refused),
                "ready_ms": self.ready_ms,
                "reason": self.reason, "log": str(self.log) if self.log else None, "protocol": self.protocol,
                "restarts": self.restarts,
                "unsupported": {t.name: t.unsupported for t in self.tools if t.unsupported}}
