"""The chat TUI: ``callstream`` / ``callstream chat``.

``make_app`` builds everything from the config and the command line (the
demo model when nothing is configured) so tests can build the same app with
their own endpoint.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from ..chat.providers import Endpoint, open_endpoint
from ..chat.session import ChatSession
from ..config import Config, load_config
from ..net.stream import Timeouts
from ..paths import data_dir
from ..tools.ledger import Ledger
from ..tools.registry import Registry
from .chat_screen import ChatScreen

__all__ = ["CallstreamApp", "make_app", "DEMO_WELCOME"]

DEMO_WELCOME = (
    "You are talking to the demo model (offline, scripted) through the built-in support tools. Try:\n"
    "  Ada Lovelace says her order is late. Check her open and late orders and open a ticket.\n"
    "  Show me order A-1042\n"
    "  /demo   (the failure scenarios: cutoff, malformed, error, truncated, slow, …)\n"
    "Enter sends · Ctrl+J new line · Esc cancels a turn · Ctrl+R retries a failed one · Ctrl+Q quits"
)


class CallstreamApp(App[None]):
    TITLE = "callstream"
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, session: ChatSession, endpoint: Endpoint, welcome: str | None = None,
                 cursor_blink: bool = True) -> None:
        super().__init__()
        self.session = session
        self.endpoint = endpoint
        self.welcome = welcome
        #: Off in snapshot tests, so two renders of one screen are identical.
        self.cursor_blink = cursor_blink

    def on_mount(self) -> None:
        self.push_screen(ChatScreen(self.session, self.welcome))

    def display_specs(self, name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """A tool's allow-lists for its arguments and its result ([] for an unknown tool: show nothing)."""
        tool = self.session.registry.get(name)
        if tool is None:
            return [], []
        return [(f.path, f.label) for f in tool.display], [(f.path, f.label) for f in tool.result_display]

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, ChatScreen):
            yield SystemCommand("Cancel the running turn", "Esc: stop streaming; nothing is half-dispatched",
                                screen.action_cancel_turn)
            yield SystemCommand("Retry the failed turn", "Ctrl+R: run it again; the ledger stops repeats",
                                screen.action_retry)
            yield SystemCommand("Jump to the latest output", "End", screen.action_jump_to_latest)

    async def on_unmount(self) -> None:
        if self.session.busy:
            self.session.cancel()
        await self.session.aclose()
        self.session.ledger.close()
        self.endpoint.close()


def make_app(provider: str | None = None, model: str | None = None, base_url: str | None = None,
             config: Config | None = None, endpoint: Endpoint | None = None) -> CallstreamApp:
    """Raises ConfigError (shown as one line by the CLI) when it cannot start."""
    config = config if config is not None else load_config()
    profile = config.profile(provider=provider, model=model, base_url=base_url)
    endpoint = endpoint or open_endpoint(profile)
    home = data_dir()
    session = ChatSession(
        endpoint, Registry.default(home, config), Ledger(home / "callstream.db"), uuid.uuid4().hex,
        retries=profile.retries, max_rounds=profile.max_rounds, options=profile.options,
        timeouts=Timeouts(profile.connect_timeout, profile.read_timeout, profile.deadline))
    welcome = DEMO_WELCOME if profile.provider == "demo" else None
    return CallstreamApp(session, endpoint, welcome)
