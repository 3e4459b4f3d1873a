"""The roots callstream tells a server about (MCP ``roots/list``).

By default the working directory callstream was started in; ``[mcp.NAME]
roots = ["~/src/app", …]`` names others (``~`` and ``${VAR}`` expanded when
the server starts, like the rest of its table). The list is fixed for a
session — the config is read at start — so no ``roots/list_changed`` is ever
due; a server asks for the list when it wants it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["Roots"]


class Roots:
    """The SDK's ``list_roots_callback`` for one server (its presence declares the capability)."""

    def __init__(self, paths: list[str] | None, environ: dict[str, str] | None = None) -> None:
        from ..settings.mcp import expand

        chosen = paths if paths is not None else [os.getcwd()]
        self.paths = [Path(expand(p, environ)).expanduser().resolve() for p in chosen]

    def uris(self) -> list[str]:
        return [path.as_uri() for path in self.paths]

    async def __call__(self, context: Any) -> Any:
        from mcp_types import ListRootsResult, Root

        return ListRootsResult(roots=[Root.model_validate({"uri": path.as_uri(), "name": path.name or str(path)})
                                      for path in self.paths])
