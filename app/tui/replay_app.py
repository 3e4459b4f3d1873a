"""Replaying a recording in the TUI: the chat screen, fed by a Replayer,
with asciinema's controls and a progress line."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static

from ..replay.player import Replayer
from ..store.recording import Recording
from ..tools.registry import Registry
from .chat_screen import ChatScreen

if TYPE_CHECKING:
    from ..runtime.wiring import Runtime

__all__ = ["ReplayApp", "ReplayScreen"]


def _clock(seconds: float) -> str:
    minutes, rest = divmod(max(seconds, 0.0), 60)
    return f"{int(minutes):02d}:{rest:04.1f}"


class ReplayProgress(Static):
    DEFAULT_CSS = """
    ReplayProgress { dock: bottom; height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """


class ReplayScreen(ChatScreen):
    #: A replay takes no input (its box goes at mount): Textual's default, the first focusable widget.
    AUTO_FOCUS = "*"

    BINDINGS = [
        Binding("space", "pause", "Pause/resume", show=True, priority=True),
        Binding("plus,equals_sign", "faster", "Faster", show=True, priority=True),
        Binding("minus", "slower", "Slower", show=True, priority=True),
        Binding("full_stop", "step", "Step", show=True, priority=True),
        Binding("right_square_bracket", "next_marker", "Next marker", show=True, priority=True),
        Binding("end", "jump_to_latest", "Latest", show=False),
        Binding("ctrl+q", "app.quit", "Quit", show=True, priority=True),
    ]

    def __init__(self, host: ReplayApp, replayer: Replayer) -> None:
        super().__init__(host, replayer.session, None)
        self.replayer = replayer

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield ReplayProgress()

    def on_mount(self) -> None:
        super().on_mount()
        from widgets.prompt_input import PromptInput

        self.query_one(PromptInput).remove()  # a replay takes no input: its keys are the controls
        self.set_focus(None)
        self.set_interval(0.1, self._progress)
        self.run_worker(self._play(), group="replay", exit_on_error=False)

    async def _play(self) -> None:
        await self.replayer.run()
        self.status.set_state("replay finished")

    def _progress(self) -> None:
        clock = self.replayer.clock
        position = min(clock.now(), self.replayer.duration)
        if math.isinf(position):
            position = self.replayer.duration
        speed = "instant" if clock.instant else f"{clock.speed:g}×"
        state = "⏸ paused" if clock.paused else "▶"
        self.query_one(ReplayProgress).update(Content(
            f"{state}  {speed}  {_clock(position)} / {_clock(self.replayer.duration)}   "
            "space pause · + − speed · . step · ] next marker"))

    def action_pause(self) -> None:
        self.replayer.clock.toggle_pause()

    def action_faster(self) -> None:
        self.replayer.clock.faster()

    def action_slower(self) -> None:
        self.replayer.clock.slower()

    def action_step(self) -> None:
        if self.replayer.clock.paused:
            self.replayer.step()

    def action_next_marker(self) -> None:
        self.replayer.next_marker()


class ReplayApp(App[None]):
    TITLE = "callstream replay"

    def __init__(self, recording: Recording, speed: float, idle_limit: float | None, display: Registry) -> None:
        super().__init__()
        self.display_registry = display
        self.replayer = Replayer(recording, speed, idle_limit, display)
        self.cursor_blink = False
        #: A replay's conversation is not stored: the tree's keys and the slash commands have nothing to act on.
        self.runtime: Runtime | None = None
        self.clock: Callable[[], float] = time.monotonic
        #: A replay takes no input: no prompt history.
        self.prompt_history: list[str] | None = None

    def on_mount(self) -> None:
        self.push_screen(ReplayScreen(self, self.replayer))

    def display_specs(self, name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        return self.display_registry.display_specs(name)

    # what the chat screen may ask of a live chat, which a replay has not

    def save_prompt_history(self, history: list[str]) -> None:
        pass

    def _not_here(self, what: str) -> None:
        self.notify(f"A replay cannot {what}.", markup=False, severity="warning")

    def new_conversation(self) -> None:
        self._not_here("start a new conversation")

    def open_conversation(self, conversation: str, at: int | None = None) -> None:
        self._not_here("open a conversation")

    def action_open_transcripts(self) -> None:
        self._not_here("open the saved transcripts")

    def action_mcp_servers(self) -> None:
        self._not_here("show the MCP servers")

    async def on_unmount(self) -> None:
        await self.replayer.session.aclose()
