"""The tools on offer: the built-ins, the config file's command tools, and
tools that arrive later from an attached source (the config's MCP servers,
which ``app.mcp`` attaches: each server's tools are replaced as it lists
them, removed if it fails to start). The registry knows such a source only
as something to start, wait for and close."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..settings.config import Config
from ..stream.history import ToolSpec
from .base import Tool
from .builtin import builtin_tools
from .command import command_tool

__all__ = ["Registry", "ToolSource"]


class ToolSource(Protocol):
    """Where tools come from after start-up (``app.mcp.MCPHub``): started once
    from a running event loop, waited for until it settles (each part ready
    or failed), closed at the end. It hands its tools over with
    ``Registry.replace`` as they change."""

    def start(self) -> None: ...

    async def wait_settled(self) -> None: ...

    async def close(self) -> None: ...


class Registry:
    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.add(tool)
        self.source: ToolSource | None = None
        self._started = False

    @classmethod
    def default(cls, data_dir: Path, config: Config | None = None) -> Registry:
        """The built-ins and the config's command tools (a source, if any, is attached by whoever opens it)."""
        registry = cls(builtin_tools(data_dir))
        if config is not None:
            for tool_config in config.tools.values():  # a config tool may replace a built-in of the same name
                registry.add(command_tool(tool_config, config.limits.tool_output_bytes))
        return registry

    def attach(self, source: ToolSource) -> None:
        """Start, wait for and close ``source`` with this registry."""
        self.source = source

    def replace(self, origin: str, tools: list[Tool]) -> None:
        """``origin``'s tools are now ``tools`` (none: it failed or went away)."""
        for name in [n for n, t in self._tools.items() if t.origin == origin]:
            del self._tools[name]
        for tool in tools:
            self.add(tool)

    def start_servers(self) -> None:
        """Start the source (every MCP server, in parallel, in the background); call from the event loop."""
        if self.source is not None and not self._started:
            self._started = True
            self.source.start()

    async def settled(self) -> None:
        """Until the source has settled (every MCP server ready or failed, each within its startup_timeout)."""
        if self.source is not None:
            self.start_servers()
            await self.source.wait_settled()

    async def aclose(self) -> None:
        if self.source is not None and self._started:
            self._started = False
            await self.source.close()

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
