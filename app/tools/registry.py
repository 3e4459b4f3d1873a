"""The tools on offer: the built-ins, the config file's command tools, and
the tools of its MCP servers (added as each server lists them, removed if it
fails to start)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..settings.config import Config
from ..stream.history import ToolSpec
from .base import Tool
from .builtin import builtin_tools
from .command import command_tool

__all__ = ["Registry"]


class Registry:
    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.add(tool)
        #: The MCP servers (app/mcp), started once from a running event loop.
        self.mcp: Any = None
        self._mcp_started = False

    @classmethod
    def default(cls, data_dir: Path, config: Config | None = None) -> Registry:
        registry = cls(builtin_tools(data_dir))
        for tool_config in (config.tools.values() if config else []):
            # a config tool may replace a built-in of the same name
            registry.add(command_tool(tool_config, config.limits.tool_output_bytes))
        if config is not None and config.mcp:
            from ..mcp import open_hub

            registry.attach(open_hub(config.mcp, data_dir / "mcp-logs"))
        return registry

    def attach(self, hub: Any) -> None:
        """Offer ``hub``'s servers' tools, each server's as soon as it lists them."""
        self.mcp = hub
        hub.listeners.append(self._server_changed)

    def _server_changed(self, server: Any) -> None:
        from ..mcp import server_tools

        origin = f"mcp:{server.config.name}"
        for name in [n for n, t in self._tools.items() if t.origin == origin]:
            del self._tools[name]
        for tool in server_tools(server):
            self.add(tool)

    def start_servers(self) -> None:
        """Start every MCP server (in parallel, in the background); call from the event loop."""
        if self.mcp is not None and not self._mcp_started:
            self._mcp_started = True
            self.mcp.start()

    async def settled(self) -> None:
        """Until every MCP server is ready or has failed (each within its startup_timeout)."""
        if self.mcp is not None:
            self.start_servers()
            await self.mcp.wait_settled()

    async def aclose(self) -> None:
        if self.mcp is not None and self._mcp_started:
            self._mcp_started = False
            await self.mcp.close()

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def display_specs(self, name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """A tool's allow-lists for its arguments and its result, as (path,
        label) pairs ([] for an unknown tool: show nothing) — for cards, the
        Markdown export and the search index alike."""
        tool = self.get(name)
        if tool is None:
            return [], []
        return [(f.path, f.label) for f in tool.display], [(f.path, f.label) for f in tool.result_display]

    def scoped(self, offered: Callable[[str], bool]) -> Registry:
        """A live view of these tools narrowed to the names ``offered`` accepts
        (what one conversation offers): tools an MCP server lists later appear
        in it too, and a tool outside it is unknown to the finaliser."""
        return _Scoped(self, offered)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def __len__(self) -> int:
        return len(self._tools)


class _Scoped(Registry):
    def __init__(self, parent: Registry, offered: Callable[[str], bool]) -> None:
        super().__init__()
        self.parent = parent
        self.offered = offered
        self.mcp = parent.mcp

    def add(self, tool: Tool) -> None:
        self.parent.add(tool)

    def get(self, name: str) -> Tool | None:
        return self.parent.get(name) if self.offered(name) else None

    def names(self) -> list[str]:
        return [name for name in self.parent.names() if self.offered(name)]

    def specs(self) -> list[ToolSpec]:
        return [tool.spec for name in self.names() if (tool := self.parent.get(name)) is not None]

    def __len__(self) -> int:
        return len(self.names())

    def start_servers(self) -> None:
        self.parent.start_servers()

    async def settled(self) -> None:
        await self.parent.settled()

    async def aclose(self) -> None:
        await self.parent.aclose()
