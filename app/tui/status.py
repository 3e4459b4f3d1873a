"""The status line's driver: the turn's state, how long it has taken, what it cost.

The screen says what happens ("streaming…", "running tools…"); this keeps the
clock: elapsed seconds while a turn runs, "waiting N s for the provider" when
a request has been silent for ``QUIET_AFTER`` seconds, "took N s" at the end.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.timer import Timer
from textual.widget import Widget

from widgets.status_line import StatusLine

from ..chat.window import Room, room_words
from .tally import Tally

__all__ = ["Status", "QUIET_AFTER", "STATUS"]

#: What the status line says once an exchange ended.
STATUS = {"done": "ready", "failed": "failed — Ctrl+R retries", "cancelled": "cancelled — Ctrl+R retries",
          "round_limit": "stopped (round limit)", "needs_approval": "waiting for approval"}

#: Seconds without a byte from the provider before the status line says "waiting N s".
QUIET_AFTER = 3.0


class Status:
    def __init__(self, owner: Widget, clock: Callable[[], float], busy: Callable[[], bool]) -> None:
        #: The screen: where the status line is, and whose timer ticks.
        self._owner = owner
        self._clock = clock
        #: A turn is running (ticks say nothing otherwise).
        self._busy = busy
        self._started = 0.0
        self._last_byte = 0.0
        self._ticker: Timer | None = None
        #: The next request against the model's window (set by the screen once it has a session).
        self.room: Callable[[], Room | None] | None = None

    @property
    def line(self) -> StatusLine:
        return self._owner.query_one(StatusLine)

    @property
    def state(self) -> str:
        return self.line.state

    def set_provider(self, label: str) -> None:
        self.line.provider = label
        self.show_room()  # another model: another window

    def begin(self) -> None:
        self._started = self._last_byte = self._clock()
        self.line.detail = ""
        if self._ticker is None:
            self._ticker = self._owner.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        if not self._busy():
            return
        now = self._clock()
        quiet = now - self._last_byte
        elapsed = now - self._started
        if elapsed < 1:  # nothing to say yet (and a frozen clock in a snapshot says nothing)
            return
        detail = f"{elapsed:.0f} s"
        if quiet >= QUIET_AFTER and self.awaiting_provider():
            detail += f" · waiting {quiet:.0f} s for the provider"
        self.line.detail = detail

    def end(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        elapsed = self._clock() - self._started
        self.line.detail = f"took {elapsed:.1f} s"

    def heard(self) -> None:
        """A byte from the provider: the silence counts from now."""
        self._last_byte = self._clock()

    def awaiting_provider(self) -> bool:
        """Only a request being streamed waits for the provider: while a call
        awaits the user's answer or tools run, the silence is not the provider's."""
        return self.line.state.startswith("streaming")

    def set_state(self, state: str) -> None:
        if state.startswith("streaming") and not self.awaiting_provider():
            self._last_byte = self._clock()  # a new request: its silence counts from now
        self.line.state = state

    def ended(self, status: str) -> None:
        """An exchange's end, in words (``STATUS``)."""
        self.set_state(STATUS.get(status, status))

    def show_spent(self, tally: Tally) -> None:
        self.line.usage = tally.words()
        self.show_room()

    def show_room(self) -> None:
        """The context meter: the next request against the model's window (quiet below
        ``window.WARN_AT``, a warning from there)."""
        room = self.room() if self.room is not None else None
        self.line.meter, self.line.meter_warning = room_words(room), room is not None and room.warning
