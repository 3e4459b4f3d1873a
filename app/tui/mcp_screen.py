"""The MCP servers (``/mcp``, or "MCP servers" in the command palette): each
server's state as it changes — connecting, N tools in X ms, or failed with
the reason and its log file — and the tools it offers. Esc goes back.

A server a person signs in to (OAuth, app/mcp/auth_login.py) is listed above
with its sign-in state: ``l`` signs in to the highlighted one (back in the
conversation, on its sign-in card), ``x`` signs out of it (its tokens
forgotten; it is connected again and asks)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from ..stream.inert import inert
from .frames import SteadyFrames

__all__ = ["McpScreen"]

#: Log messages shown per server (the log file keeps them all).
_SHOWN_MESSAGES = 8


class McpScreen(SteadyFrames[None]):
    DEFAULT_CSS = """
    McpScreen { layout: vertical; }
    McpScreen #heading { padding: 0 1; background: $panel; }
    McpScreen #servers { height: 1fr; padding: 0 1; }
    McpScreen #sign-in { height: auto; max-height: 8; margin: 0 1; }
    """

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", show=True),
                Binding("l", "sign_in", "Sign in", show=True),
                Binding("x", "sign_out", "Sign out", show=True)]

    def __init__(self, hub: Any, signing: Any = None) -> None:
        """``signing``: the chat screen's sign-in desk (None: no sign-in from here)."""
        super().__init__()
        self.hub = hub
        self.signing = signing
        self._body = Static(id="servers-text")
        self._sign_in = OptionList(id="sign-in")

    def compose(self) -> ComposeResult:
        yield Static(Content("MCP servers — Esc goes back"), id="heading")
        yield self._sign_in
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

    def _signable(self) -> list[Any]:
        from ..mcp.auth_login import can_sign_in

        if self.hub is None or self.signing is None:
            return []
        return [server for server in self.hub.servers if can_sign_in(server)]

    def _render_sign_in(self) -> None:
        from ..mcp.auth_login import sign_in_state

        servers = self._signable()
        self._sign_in.display = bool(servers)
        highlighted = self._sign_in.highlighted
        self._sign_in.clear_options()
        self._sign_in.add_options([Option(Content(inert(f"{s.config.name} — sign-in: {sign_in_state(s)['sign_in_line']}"
                                                        "   (l: sign in, x: sign out)")), id=s.config.name)
                                   for s in servers])
        if servers:
            self._sign_in.highlighted = min(highlighted or 0, len(servers) - 1)

    def _chosen(self) -> str | None:
        index = self._sign_in.highlighted
        if index is None or not self._sign_in.option_count:
            return None
        return self._sign_in.get_option_at_index(index).id

    def action_sign_in(self) -> None:
        name = self._chosen()
        if name is not None and self.signing is not None:
            self.app.pop_screen()
            self.signing.sign_in(name)

    def action_sign_out(self) -> None:
        name = self._chosen()
        if name is not None and self.signing is not None:
            self.signing.sign_out(name)
            self.app.notify(f"Signed out of {name}: its tokens are forgotten.", markup=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_sign_in()

    def _render_servers(self) -> None:
        from ..mcp import tool_name

        self._render_sign_in()

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
