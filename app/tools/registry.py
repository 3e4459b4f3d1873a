"""The tools on offer: the built-ins plus the config file's command tools."""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from ..conversation import ToolSpec
from .base import Tool
from .builtin import builtin_tools
from .command import command_tool

__all__ = ["Registry"]


class Registry:
    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.add(tool)

    @classmethod
    def default(cls, data_dir: Path, config: Config | None = None) -> Registry:
        registry = cls(builtin_tools(data_dir))
        for tool_config in (config.tools.values() if config else []):
            registry.add(command_tool(tool_config))  # a config tool may replace a built-in of the same name
        return registry

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def __len__(self) -> int:
        return len(self._tools)
