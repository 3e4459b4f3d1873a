"""Replaying a recording in the TUI: the chat screen, fed by a Replayer,
with asciinema's controls and a progress line."""

from __future__ import annotations

import math

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static

from ..replay.player import Replayer
from ..store.recording import Recording
from ..tools.registry import Registry
from .chat_screen import ChatScreen

__all__ = ["ReplayApp", "ReplayScreen"]


def _clock(seconds: float) -> str:
    minutes, rest = divmod(max(seconds, 0.0), 60)
    return f"{int(minutes):02d}:{rest:04.1f}"


class ReplayProgress(Static):
    DEFAULT_CSS = """
    ReplayProgress { dock: bottom; height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """


class ReplayScreen(ChatScreen):
    BINDINGS = [
        Binding("space", "pause", "Pause/resume", show=True, priority=True),
        Binding("plus,equals_sign", "faster", "Faster", show=True, priority=True),
        Binding("minus", "slower", "Slower", show=True, priority=True),
        Binding("full_stop", "step", "Step", show=True, priority=True),
        Binding("right_square_bracket", "next_marker", "Next marker", show=True, priority=True),
        Binding("end", "jump_to_latest", "Latest", show=False),
        Binding("ctrl+q", "app.quit", "Quit", show=True, priority=True),
    ]

    def __init__(self, replayer: Replayer) -> None:
        super().__init__(replayer.session, None)
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
        self._set_state("replay finished")

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

    def on_mount(self) -> None:
        self.push_screen(ReplayScreen(self.replayer))

    def display_specs(self, name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        return self.display_registry.display_specs(name)

    async def on_unmount(self) -> None:
        await self.replayer.session.aclose()
