"""The MCP servers (``/mcp``, or "MCP servers" in the command palette): each
server's state as it changes — connecting, N tools in X ms, or failed with
the reason and its log file — and the tools it offers. Esc goes back."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..stream.inert import inert

__all__ = ["McpScreen"]

#: Log messages shown per server (the log file keeps them all).
_SHOWN_MESSAGES = 8


class McpScreen(Screen[None]):
    DEFAULT_CSS = """
    McpScreen { layout: vertical; }
    McpScreen #heading { padding: 0 1; background: $panel; }
    McpScreen #servers { height: 1fr; padding: 0 1; }
    """

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", show=True)]

    def __init__(self, hub: Any) -> None:
        super().__init__()
        self.hub = hub
        self._body = Static(id="servers-text")

    def compose(self) -> ComposeResult:
        yield Static(Content("MCP servers — Esc goes back"), id="heading")
        with VerticalScroll(id="servers"):
            yield self._body
        yield Footer()

    def on_mount(self) -> None:
        if self.hub is not None:
            self.hub.listeners.append(self._changed)
            for server in self.hub.servers:
                server.messages.listeners.append(self._logged)
        self._render_servers()

    def on_unmount(self) -> None:
        if self.hub is not None and self._changed in self.hub.listeners:
            self.hub.listeners.remove(self._changed)
        for server in self.hub.servers if self.hub is not None else []:
            if self._logged in server.messages.listeners:
                server.messages.listeners.remove(self._logged)

    def _logged(self) -> None:
        self.call_later(self._render_servers)

    def _changed(self, _server: Any) -> None:
        self.call_later(self._render_servers)

    def _render_servers(self) -> None:
        from ..mcp import tool_name

        if self.hub is None or not self.hub.servers:
            self._body.update(Content("No MCP servers are configured. Add [mcp.NAME] tables to the config file, "
                                      "or run: callstream mcp import FILE"))
            return
        lines: list[str] = []
        for status in self.hub.statuses():
            lines.append(status.line())
            for tool in status.tools:
                kind = "read-only" if tool.read_only else "side effect: asks first"
                note = f"  ⚠ {tool.note}" if tool.note else ""
                if tool.unsupported:
                    kind, note = "not offered", f": {tool.unsupported}"
                lines.append(f"    {tool_name(status.name, tool.name)}  ({kind}){note}")
            if status.dropped:
                lines.append(f"    not advertised: {', '.join(status.dropped[:20])}"
                             + (" …" if len(status.dropped) > 20 else ""))
            if status.messages:  # its latest log messages, at the level its config sets
                lines.append(f"    log messages (latest {min(len(status.messages), _SHOWN_MESSAGES)}):")
                lines.extend(f"      {line}" for line in list(status.messages)[-_SHOWN_MESSAGES:])
        self._body.update(Content(inert("\n".join(lines))))
