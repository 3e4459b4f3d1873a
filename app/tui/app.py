"""The chat TUI: ``callstream`` / ``callstream chat`` / ``callstream open``.

``make_app`` builds everything from the config and the command line (the
demo model when nothing is configured) so tests can build the same app with
their own endpoint. ``make_deferred_app`` (the command line's) draws the first
frame from the config alone and opens the rest — the provider (the embedded
demo server), the tools, the ledger, the store, httpx, the dialects — right
after it: those imports and files are most of a cold start, and a person
reads the screen before typing. What is typed meanwhile waits in the queue.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ..rules import prices
from . import collector
from .chat_screen import ChatScreen
from .state import TuiState
from .warmup import warm_up

if TYPE_CHECKING:
    from ..chat.session import ChatSession
    from ..net.endpoint import Endpoint
    from ..runtime.wiring import Runtime
    from ..settings.config import Config

__all__ = ["CallstreamApp", "Deferred", "make_app", "make_deferred_app", "DEMO_WELCOME"]

DEMO_WELCOME = (
    "You are talking to the demo model (offline, scripted) through the built-in support tools. Try:\n"
    "  Ada Lovelace says her order is late. Check her open and late orders and open a ticket.\n"
    "  Show me order A-1042\n"
    "  /demo   (the failure scenarios: cutoff, malformed, error, truncated, slow, …)\n"
    "Enter sends · Ctrl+J new line · Esc cancels · Ctrl+R retries · Ctrl+Y copies · /help"
)


@dataclass(frozen=True)
class Deferred:
    """What the first frame needs (the config, the provider's label), and how
    to open everything else after it."""

    config: Config
    label: str
    open: Callable[[], tuple[Runtime, ChatSession]]


class CallstreamApp(App[None]):
    TITLE = "callstream"
    ENABLE_COMMAND_PALETTE = True

    #: Set at construction, or (deferred) once the first frame is drawn.
    runtime: Runtime
    session: ChatSession

    def __init__(self, runtime: Runtime | Deferred, session: ChatSession | None = None, welcome: str | None = None,
                 cursor_blink: bool = True, start_with_transcripts: bool = False, at: int | None = None) -> None:
        super().__init__()
        self._deferred: Deferred | None = None
        if isinstance(runtime, Deferred):
            self._deferred = runtime
            self.config = runtime.config
        else:
            assert session is not None
            self.runtime, self.session = runtime, session
            self.config = runtime.config
        #: Why a deferred start could not open the provider or the data files (the CLI says it, exit 2).
        self.start_error: str | None = None
        #: The first exchange's modules and HTTP client are loaded (``warmup``).
        self.warmed = False
        self.welcome = welcome
        #: Off in snapshot tests, so two renders of one screen are identical.
        self.cursor_blink = cursor_blink
        self._start_with_transcripts = start_with_transcripts
        self._at = at
        #: The screen's clock (elapsed, "waiting N s"); snapshot tests freeze it.
        self.clock: Callable[[], float] = time.monotonic
        self.state = TuiState()
        #: Up/Down in the input box: the prompts of every earlier run, per data dir.
        self.prompt_history: list[str] = self.state.history
        self._theme_ready = False

    def save_prompt_history(self, history: list[str]) -> None:
        self.state.save_history(history)

    def watch_theme(self, theme: str) -> None:
        """The theme chosen in the palette is remembered for the next run."""
        if self._theme_ready and theme != self.state.theme:
            self.state.theme = theme

    @property
    def endpoint(self) -> Endpoint:
        return self.runtime.endpoint

    def on_mount(self) -> None:
        prices.hold()  # a load the first screen asks for (its money, its meter) starts at the warm-up
        self._apply_settings()
        if self._deferred is not None:
            self.push_screen(ChatScreen(self, None, self.welcome, label=self._deferred.label))
        else:
            self.push_screen(ChatScreen(self, self.session, self.welcome, focus=self._at))
            if self._start_with_transcripts:
                self.action_open_transcripts()
        for warning in self.config.warnings:
            self.notify(warning, title="config", severity="warning", markup=False, timeout=10)

    def on_ready(self) -> None:
        # Ready comes once the start-up batch is over (a refresh inside it draws nothing),
        # so what runs after the next refresh runs after the first frame is on the terminal
        if self._deferred is not None and isinstance(self.screen, ChatScreen):
            self.screen.call_after_refresh(self._open_deferred, self.screen)
        elif self._deferred is None:
            screen = self.screen
            if isinstance(screen, ChatScreen):
                screen.after_first_screen(self._started)
            else:
                screen.call_after_refresh(self._started)

    def _started(self) -> None:
        """Once the first screen is written and painted: the MCP servers start in the background (typing
        never waits for them), the first exchange's modules are loaded, and the price table if the first
        screen asked for it. The first screen waits for none of it: their imports and the table's thread
        took the interpreter from it."""
        self.runtime.registry.start_servers()
        self._warm_up()

    def _open_deferred(self, screen: ChatScreen) -> None:
        """After the first frame: the provider, the tools and the data files."""
        from ..files.dbfile import DataFileError
        from ..settings.checks import ConfigError

        assert self._deferred is not None
        try:
            self.runtime, self.session = self._deferred.open()
        except (ConfigError, DataFileError) as exc:
            self.start_error = str(exc)
            self.exit(return_code=2)
            return
        self._deferred = None
        screen.attach(self.session)
        self.call_after_refresh(self.runtime.registry.start_servers)
        self._warm_up()

    def _warm_up(self) -> None:
        collector.release()  # the first screen is drawn: what start-up left is collected, and collection is on

        def warmed() -> None:
            self.warmed = True

        warm_up(self, self.session, warmed)

    def _apply_settings(self) -> None:
        config = self.config
        theme = self.state.theme or config.theme
        if theme and theme in self.available_themes:
            self.theme = theme
        elif config.theme and config.theme not in self.available_themes:
            config.warnings.append(f"theme {config.theme!r} is not a theme (known: {', '.join(self.available_themes)})")
        self._theme_ready = True
        if config.keys:
            known = {b.id for b in ChatScreen.BINDINGS if isinstance(b, Binding) and b.id}
            for name in config.keys:
                if name not in known:
                    config.warnings.append(f"[keys] {name!r} is not a binding (known: {', '.join(sorted(known))})")
            self.set_keymap({name: keys for name, keys in config.keys.items() if name in known})

    def new_conversation(self) -> None:
        """/new: a fresh conversation on the same provider; the old one stays saved."""
        old = self.session
        self.session = self.runtime.session()
        self.switch_screen(ChatScreen(self, self.session, self.welcome))
        self.run_worker(old.aclose(), group="close-session")

    def display_specs(self, name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """A tool's allow-lists for its arguments and its result ([] for an unknown tool: show nothing)."""
        return self.runtime.registry.display_specs(name)

    def action_mcp_servers(self) -> None:
        from .mcp_screen import McpScreen

        screen = self.screen
        self.push_screen(McpScreen(self.runtime.mcp, getattr(screen, "signing", None)))

    def action_open_transcripts(self) -> None:
        from ..files.paths import recordings_dir
        from ..store.housekeeping import delete_conversation
        from .transcripts_screen import TranscriptsScreen

        def chosen(choice: tuple[str, int | None] | None) -> None:
            from ..files.dbfile import DataFileError
            from ..settings.checks import ConfigError

            if choice:
                try:
                    self.open_conversation(*choice)
                except (ConfigError, DataFileError) as exc:  # a damaged conversation: said, the chat goes on
                    self.notify(str(exc), title="not opened", severity="error", markup=False, timeout=15)

        store = self.runtime.store

        def delete(conversation: str) -> None:
            delete_conversation(store, conversation, recordings_dir())

        def rename(conversation: str, title: str) -> None:
            store.rename(conversation, title)

        self.push_screen(TranscriptsScreen(store.list, store.search, delete, rename, self.session.conversation),
                         chosen)

    def open_conversation(self, conversation: str, at: int | None = None) -> None:
        """Continue a stored conversation in a fresh chat screen (at entry
        ``at``, on its branch, scrolled to it)."""
        old = self.session
        self.session = self.runtime.session(conversation, head=at)
        self.switch_screen(ChatScreen(self, self.session, self.welcome, focus=at))
        if old is not self.session:
            self.run_worker(old.aclose(), group="close-session")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, ChatScreen):
            yield SystemCommand("Cancel the running turn", "Esc: stop streaming; nothing is half-dispatched",
                                screen.action_cancel_turn)
            yield SystemCommand("Retry the failed turn", "Ctrl+R: run it again; the ledger stops repeats",
                                screen.action_retry)
            yield SystemCommand("Open a saved transcript", "Ctrl+O", screen.action_open_transcripts)
            yield SystemCommand("Jump to the latest output", "End", screen.action_jump_to_latest)
            yield SystemCommand("Regenerate the reply", "Ctrl+G: a new version beside the old one",
                                screen.action_regenerate)
            yield SystemCommand("Fork the conversation here", "/fork: a new conversation up to the selected entry",
                                screen.action_fork)
            yield SystemCommand("MCP servers", "each server's state and tools (connecting, ready, failed and why)",
                                self.action_mcp_servers)
            yield SystemCommand("Copy a block", "Ctrl+Y: the last reply, a code block, a card's fields or result",
                                screen.action_copy_picker)
            yield SystemCommand("Edit the prompt in $EDITOR", "Ctrl+E: for a long prompt", screen.action_edit_in_editor)

    async def on_unmount(self) -> None:
        collector.restore()
        prices.release(load=False)  # an app that ended before its warm-up: nothing is held for it
        session: ChatSession | None = getattr(self, "session", None)
        if session is not None:
            if session.busy:
                session.cancel()
            await session.aclose()
        runtime: Runtime | None = getattr(self, "runtime", None)
        if runtime is not None:
            await runtime.registry.aclose()
            runtime.close()


def make_app(provider: str | None = None, model: str | None = None, base_url: str | None = None,
             config: Config | None = None, endpoint: Endpoint | None = None, conversation: str | None = None,
             transcripts: bool = False, system: str | None = None, role: str | None = None,
             at: int | None = None) -> CallstreamApp:
    """Raises ConfigError (shown as one line by the CLI) when it cannot start."""
    runtime, session = _open(provider, model, base_url, config, endpoint, conversation, system, role, at)
    welcome = DEMO_WELCOME if runtime.profile.provider == "demo" else None
    return CallstreamApp(runtime, session, welcome, start_with_transcripts=transcripts, at=at)


def _open(provider: str | None, model: str | None, base_url: str | None, config: Config | None,
          endpoint: Endpoint | None, conversation: str | None, system: str | None, role: str | None,
          at: int | None) -> tuple[Runtime, ChatSession]:
    from ..runtime.wiring import open_runtime

    runtime = open_runtime(provider, model, base_url, config, endpoint, system=system, role=role)
    try:
        return runtime, runtime.session(conversation, head=at)
    except Exception:
        runtime.close()
        raise


def make_deferred_app(provider: str | None = None, model: str | None = None, base_url: str | None = None,
                      system: str | None = None, role: str | None = None) -> CallstreamApp:
    """A new conversation whose first frame needs only the config: the rest
    opens after it (a ConfigError from there ends the app with
    ``start_error`` set). A bad config or an unknown profile still raises
    ConfigError here, before any screen."""
    from ..settings.config import load_config

    config = load_config()
    chosen = config.role(role) if role else None
    profile = config.profile(provider=provider or (chosen.provider if chosen else None), model=model,
                             base_url=base_url)
    welcome = DEMO_WELCOME if profile.provider == "demo" else None
    endpoint = None
    if profile.provider != "demo":  # no I/O, and a missing key is said before any screen
        from ..runtime.endpoint import open_endpoint

        endpoint = open_endpoint(profile)
    deferred = Deferred(config, profile.label,
                        lambda: _open(provider, model, base_url, config, endpoint, None, system, role, None))
    return CallstreamApp(deferred, welcome=welcome)
