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
waits out the rest of the period. After a frame that took longer than a period (a long reply
streaming at 120×40: 18–20 ms a frame here) the next waits two periods, as it did under Textual's timer:
drawn sooner, a stream's frames took a fifth more of the event loop from the stream itself (30
exchanges of the demo at full speed: 720 frames against 619, 14.3 s of drawing against 10.9 s).

``SteadyFrames`` gives a screen this timer in place of Textual's (the one property ``Screen`` reads it
through). Every screen of the app is one, the modals too (a test finds them all); Textual is pinned,
and ``tests/test_frames.py`` says when its timer no longer needs this (it checks the wait it replaces
is still there).
"""

from __future__ import annotations

from typing import TypeVar

from textual import _time
from textual.screen import UPDATE_PERIOD, Screen
from textual.timer import EventTargetGone, Timer

__all__ = ["FrameTimer", "SteadyFrames"]

Result = TypeVar("Result")

#: Periods waited after a frame that took longer than one.
OVERRUN_WAIT = 2


class FrameTimer(Timer):
    """A repeating timer for a screen's frames: a tick as soon as it is resumed, once ``interval`` has
    passed since the last tick began (``OVERRUN_WAIT`` intervals after it ended, when it took longer)."""

    async def _run(self) -> None:
        interval = self._interval
        count = 0
        while True:
            await self._active.wait()
            began = _time.get_time()
            count += 1
            try:
                await self._tick(next_timer=began, count=count)
            except EventTargetGone:
                return
            # the rest of the period; after a frame that took longer (a long stream's frames), two
            # periods, as Textual's timer waits then (its tick after the next): the stream keeps the
            # share of the event loop it had
            left = began + interval - _time.get_time()
            await _time.sleep(left if left > 0 else OVERRUN_WAIT * interval)


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
