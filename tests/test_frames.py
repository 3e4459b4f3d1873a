"""A screen's frame comes as soon as it is asked for (``app/tui/frames.py``).

The timers run on a fake clock: each test says when a redraw is asked for and reads when the frame
came, so nothing here waits for real time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import textual._time
import textual.timer
from textual.timer import Timer

from app.tui.app import make_app
from app.tui.frames import FrameTimer
from tests.test_tui import demo_config
from widgets.prompt_input import PromptInput

PERIOD = 1 / 60
#: What drawing a frame costs on the fake clock.
FRAME = 0.004
#: The fake clock's step.
STEP = 0.0005


class Clock:
    """Textual's clock and sleep, moved on only by ``advance``."""

    def __init__(self) -> None:
        self.now = 100.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await one_turn()
            return
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + seconds, woken))
        await woken

    async def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end - 1e-9:
            self.now = min(self.now + STEP, end)
            for deadline, woken in [s for s in self._sleepers if s[0] <= self.now + 1e-9]:
                self._sleepers.remove((deadline, woken))
                if not woken.done():  # (a rest that ``hurry`` ended cancels its sleep)
                    woken.set_result(None)
            await settle()

    async def until(self, done: Callable[[], bool], limit: float = 0.2) -> None:
        end = self.now + limit
        await settle()
        while not done() and self.now < end:
            await self.advance(STEP)
        assert done(), "no frame came"


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(textual._time, "get_time", clock.time)
    monkeypatch.setattr(textual._time, "sleep", clock.sleep)
    monkeypatch.setattr(textual.timer, "sleep", clock.sleep)  # Textual's timer imports it by name
    return clock


class Target:
    """What a timer ticks for (held weakly by it)."""


def drawn_by(kind: type[Timer], clock: Clock, cost: float = FRAME) -> tuple[Timer, list[float]]:
    """A timer of ``kind`` that records when each tick came and pauses itself, as a screen's does."""
    ticks: list[float] = []

    class Recording(kind):  # type: ignore[valid-type,misc]
        async def _tick(self, *, next_timer: float, count: int) -> None:
            ticks.append(clock.now)
            self.pause()
            clock.now += cost

    target = Target()
    timer = Recording(target, PERIOD, name="screen_update", pause=True)
    timer._keep = target
    return timer, ticks


async def one_turn() -> None:
    """One turn of the event loop (a zero-second sleep): the tasks ready now run, no time passes."""
    loop = asyncio.get_running_loop()
    turned: asyncio.Future[None] = loop.create_future()
    loop.call_soon(turned.set_result, None)
    await turned


async def settle() -> None:
    """The timer's task has run as far as it can without the fake clock moving (it waits on an event or
    a fake sleep after a few turns)."""
    for _ in range(10):
        await one_turn()


async def key_after_blink(kind: type[Timer], clock: Clock) -> tuple[float, float]:
    """A frame, half a second of nothing, a frame (the input box's cursor blinks), and 2 ms later a key
    asks for another: the seconds from the blink's frame to the key's, and from the blink's ask to its
    frame."""
    timer, ticks = drawn_by(kind, clock)
    timer._start()
    try:
        timer.resume()
        await clock.until(lambda: len(ticks) == 1)
        await clock.advance(0.5)
        asked = clock.now
        timer.resume()
        await clock.until(lambda: len(ticks) == 2)
        idle_wait = ticks[1] - asked
        await clock.advance(0.002)
        timer.resume()
        await clock.until(lambda: len(ticks) == 3)
    finally:
        await Timer._stop_all([timer])
    return ticks[2] - ticks[1], idle_wait


async def test_a_frame_asked_for_after_a_pause_comes_at_once(clock: Clock) -> None:
    between, idle_wait = await key_after_blink(FrameTimer, clock)
    assert idle_wait == 0.0
    assert between == pytest.approx(PERIOD, abs=STEP)  # a frame's time after the last, no more


async def test_textuals_own_timer_waits_more_than_a_period_after_a_pause(clock: Clock) -> None:
    """Why ``FrameTimer`` exists: when this fails, Textual's timer no longer skips a tick after a pause
    and ``SteadyFrames`` can go."""
    between, _ = await key_after_blink(Timer, clock)
    assert between > PERIOD + STEP


async def back_to_back(clock: Clock, cost: float, hurry_after: float | None = None) -> list[float]:
    """Frames asked for again as soon as the last is drawn (a stream at full speed): the seconds between
    their starts. ``hurry_after``: the timer is hurried that long after each frame ends (a key lands in
    the input box)."""
    timer, ticks = drawn_by(FrameTimer, clock, cost)
    timer._start()
    try:
        for count in range(1, 6):
            timer.resume()
            await clock.until(lambda count=count: len(ticks) == count)  # type: ignore[misc]
            if hurry_after is not None and count < 5:
                await clock.advance(hurry_after)
                timer.hurry()
    finally:
        await Timer._stop_all([timer])
    return [later - earlier for earlier, later in zip(ticks, ticks[1:], strict=False)]


async def test_frames_asked_for_without_pause_are_a_period_apart(clock: Clock) -> None:
    assert await back_to_back(clock, FRAME) == pytest.approx([PERIOD] * 4, abs=STEP)


async def test_after_a_frame_of_most_of_a_period_the_next_waits_twice_its_time(clock: Clock) -> None:
    """Frames take at most a third of a busy loop: one that took most of a period is not followed by
    another at once (the period alone would leave a quarter of a period between them)."""
    cost = 0.75 * PERIOD
    assert await back_to_back(clock, cost) == pytest.approx([3 * cost] * 4, abs=2 * STEP)


async def test_after_a_frame_longer_than_a_period_the_next_waits_twice_its_time(clock: Clock) -> None:
    """Slow frames are not drawn back to back: the event loop is the stream's too."""
    slow = 2.5 * PERIOD
    assert await back_to_back(clock, slow) == pytest.approx([3 * slow] * 4, abs=2 * STEP)


async def test_a_hurry_ends_the_rest_and_keeps_the_period(clock: Clock) -> None:
    """A key asks for a frame 2 ms after a frame of most of a period ended: it comes a period after that
    frame began, not twice that frame's time after it ended."""
    cost = 0.75 * PERIOD
    assert await back_to_back(clock, cost, hurry_after=0.002) == pytest.approx([PERIOD] * 4, abs=2 * STEP)


async def test_a_hurry_after_a_slow_frame_brings_the_next_at_once(clock: Clock) -> None:
    slow = 2.5 * PERIOD
    assert await back_to_back(clock, slow, hurry_after=0.002) == pytest.approx([slow + 0.002] * 4, abs=2 * STEP)


async def test_the_chat_screen_is_drawn_by_the_frame_timer() -> None:
    app = make_app(config=demo_config())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timer = app.screen._update_timer
        assert isinstance(timer, FrameTimer)
        assert timer is app.screen._update_timer  # one timer for the screen's life
        await pilot.press("h", "i")
        await pilot.pause()
        assert app.screen.query_one(PromptInput).text == "hi"


async def test_the_focused_widget_asking_to_be_drawn_hurries_the_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key in the input box hurries the next frame; the status line (not focused) changing does not."""
    hurried: list[object] = []
    monkeypatch.setattr(FrameTimer, "hurry", lambda self: hurried.append(self))
    app = make_app(config=demo_config())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = app.screen.query_one(PromptInput)
        assert prompt.has_focus
        status = app.screen.status  # type: ignore[attr-defined]
        prompt.blur()
        await pilot.pause()
        hurried.clear()
        status.set_state("streaming…")
        await pilot.pause()
        assert hurried == []
        prompt.focus()
        await pilot.pause()
        hurried.clear()
        await pilot.press("h")
        await pilot.pause()
        assert hurried and all(timer is app.screen._update_timer for timer in hurried)


def test_every_screen_of_the_app_is_drawn_by_the_frame_timer() -> None:
    """One rule for every screen (the modals too: an input box blinks in the rename dialog)."""
    import importlib
    import inspect
    import pkgutil

    from textual.screen import Screen

    import app.tui
    from app.tui.frames import SteadyFrames

    screens = {}
    for info in pkgutil.iter_modules(app.tui.__path__):
        module = importlib.import_module(f"app.tui.{info.name}")
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, Screen) and value.__module__ == module.__name__:
                screens[name] = value
    assert {"ChatScreen", "TranscriptsScreen", "McpScreen", "CopyPicker", "RenameDialog"} <= set(screens)
    assert [name for name, screen in screens.items() if not issubclass(screen, SteadyFrames)] == []
