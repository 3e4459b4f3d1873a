"""A screen's next frame drawn as soon as it is asked for, and never sooner than a frame's time after the last.

Textual (8.2.8) draws a screen from a repeating timer (``Screen._update_timer``, at most 60 frames a
second) that pauses itself after each frame and is resumed when something asks for a redraw. When it
wakes after a pause its next tick is counted on the grid of its first one, with one tick too many
(``Timer._run`` skips to the tick after the next): a key pressed just after a frame waited one to two
frame periods (17–33 ms) before anything was drawn, on top of the frame's own 10–15 ms at 120×40. The
input box's cursor blinks twice a second, a frame each time, so one key in thirty or so landed there:
that was the tail of ``make bench-long``'s scroll keys (End and Home p95 34–37 ms against a median of
about 15 ms at 100 and 1,000 exchanges; traced, a PageUp's redraw was asked for 1.5 ms after the key and
drawn from 28.9 ms). The person sees the same wait on any key.

``FrameTimer`` keeps Textual's one rule that matters, no two frames closer than a period, and drops the
grid: a frame asked for a period or more after the last one began is drawn at once, one asked for sooner
waits out the rest of the period.

After a frame, the next waits at least twice as long as it took (``OVERRUN_WAIT``), so frames take at most
a third of a busy event loop; the stream, the dispatcher and the requests have the rest. Under the
period rule alone a frame that took most of a period (10–16 ms here, a live exchange's cards and
replies) was followed by another at once, and the drawing took nearly all of the loop whenever it came
out just under the period: a live sitting of the demo at full speed drew 2 frames an exchange at 10
exchanges and 4 at 450, each landing inside a request's flight, and Enter → ready went from 75 to
129 ms (median of a hundred exchanges; with this rest, 71 and 101 ms). A slow frame's next waited two
periods before, and now twice its time.

Except for what the person is waiting for: a widget with focus (the input box as a key lands in it, a
card waiting for approval) asking to be drawn ``hurry``-s the timer (``SteadyFrames``), which ends such
a rest and keeps only the period's: a key is drawn as soon as under the period rule alone. Without
that, ``make bench-tui``'s key → screen p95 while a reply streams went from 27 to 57 ms.

``SteadyFrames`` gives a screen this timer in place of Textual's (the one property ``Screen`` reads it
through). Every screen of the app is one, the modals too (a test finds them all); Textual is pinned,
and ``tests/test_frames.py`` says when its timer no longer needs this (it checks the wait it replaces
is still there).
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

from textual import _time, messages
from textual.screen import UPDATE_PERIOD, Screen
from textual.timer import EventTargetGone, Timer

__all__ = ["FrameTimer", "SteadyFrames"]

Result = TypeVar("Result")

#: A frame is followed by at least this many times its own time without one (unless ``hurry``-ed).
OVERRUN_WAIT = 2


class FrameTimer(Timer):
    """A repeating timer for a screen's frames: a tick as soon as it is resumed, once ``interval`` has
    passed since the last tick began and twice the last tick's time since it ended (``hurry``: the
    interval only)."""

    #: Something the person waits for was asked to be drawn since the last tick began.
    _hurried = False
    #: Set by ``hurry`` to end the rest under way (None when not resting).
    _woken: asyncio.Event | None = None

    def hurry(self) -> None:
        """The next frame draws what the person is waiting for: it comes a period after the last began."""
        self._hurried = True
        if self._woken is not None:
            self._woken.set()

    async def _run(self) -> None:
        interval = self._interval
        count = 0
        while True:
            await self._active.wait()
            began = _time.get_time()
            count += 1
            self._hurried = False  # (what asked for this frame is drawn by it)
            try:
                await self._tick(next_timer=began, count=count)
            except EventTargetGone:
                return
            ended = _time.get_time()
            if not self._hurried:
                await self._rest(OVERRUN_WAIT * (ended - began))
            left = began + interval - _time.get_time()
            if left > 0:
                await _time.sleep(left)
            else:
                await asyncio.sleep(0)  # (Textual's sleep does not yield for less than half a millisecond)

    async def _rest(self, seconds: float) -> None:
        """``seconds`` without a frame, or less if ``hurry`` is called meanwhile."""
        woken = self._woken = asyncio.Event()
        sleeper = asyncio.ensure_future(_time.sleep(seconds))
        waiter = asyncio.ensure_future(woken.wait())
        try:
            await asyncio.wait((sleeper, waiter), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._woken = None
            sleeper.cancel()
            waiter.cancel()


class SteadyFrames(Screen[Result]):
    """A screen drawn by a ``FrameTimer`` (see the module's docstring)."""

    _frames: FrameTimer | None = None

    @property
    def _update_timer(self) -> Timer:
        # the same timer Textual's property makes (name, period, callback, started paused, stopped
        # with the screen's other timers), of the class that draws a frame when it is asked for
        if self._frames is None:
            self._frames = FrameTimer(self, UPDATE_PERIOD, name="screen_update", callback=self._on_timer_update,
                                      pause=True)
            self._frames._start()
            self._timers.add(self._frames)
        return self._frames

    def _hurry_for(self, widget: object) -> None:
        if getattr(widget, "has_focus", False):
            timer = self._update_timer
            if isinstance(timer, FrameTimer):
                timer.hurry()

    async def _on_update(self, message: messages.Update) -> None:
        self._hurry_for(message.widget)
        await super()._on_update(message)

    async def _on_layout(self, message: messages.Layout) -> None:
        self._hurry_for(message.widget)
        await super()._on_layout(message)
