"""Waiting for a state, never for a time.

A test that needs something to have happened polls for it with a generous
deadline (a loaded machine is slow, not wrong), and on timeout fails saying
what it waited for and what it saw. Three shapes of the one rule:

- ``wait_for(pilot, ...)``: under Textual's Pilot; each poll is a
  ``pilot.pause()``, which lets the app handle what is pending first;
- ``wait_until(...)``: in an asyncio test without an app;
- ``wait_until_sync(...)``: in plain blocking code (a child process, a file).

``quiet(pilot)`` waits for a screen with nothing left to do, for comparing
two screens or taking a snapshot. ``next_turn()`` is not a wait at all: it lets
the other ready tasks run once, as real I/O would.
"""

from __future__ import annotations

import asyncio
import html
import inspect
import re
import time
import types
from collections.abc import Callable, Generator
from typing import Any


@types.coroutine
def next_turn() -> Generator[None, None, None]:
    """One turn of the event loop for the other ready tasks (a bare yield to the loop, which is all
    asyncio's zero-second sleep does): concurrent coroutines interleave here, and no time passes."""
    yield


#: How long a state may take to arrive: far more than any test needs on an
#: idle machine, so only a state that never comes fails.
DEADLINE = 30.0
#: How often a condition is looked at outside an app.
POLL = 0.02


def _what(condition: Callable[[], object]) -> str:
    name = getattr(condition, "__name__", "")
    if name and name != "<lambda>":
        return name
    try:
        return inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return repr(condition)


def _timed_out(condition: Callable[[], object], what: str | None, seen: Callable[[], object] | None,
               timeout: float) -> AssertionError:
    message = f"waited {timeout:g} s for {what or _what(condition)}"
    if seen is not None:
        message += f"; saw: {seen()!r}"
    return AssertionError(message)


def wait_until_sync(condition: Callable[[], object], what: str | None = None, *,
                    seen: Callable[[], object] | None = None, timeout: float = DEADLINE) -> None:
    """Block until ``condition()`` is true; ``what`` and ``seen()`` go into the failure."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise _timed_out(condition, what, seen, timeout)
        time.sleep(POLL)


async def wait_until(condition: Callable[[], object], what: str | None = None, *,
                     seen: Callable[[], object] | None = None, timeout: float = DEADLINE) -> None:
    """``wait_until_sync`` for a coroutine: the loop runs while it waits."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise _timed_out(condition, what, seen, timeout)
        await asyncio.sleep(POLL)


def screen_lines(app: Any) -> list[str]:
    """What the screen shows, row by row, as plain text (for a failure message)."""
    svg = app.export_screenshot()
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in re.findall(r'<text[^>]*x="([^"]+)" y="([^"]+)"[^>]*>(.*?)</text>', svg):
        rows.setdefault(float(y), []).append((float(x), html.unescape(text)))
    lines = ("".join(t for _, t in sorted(runs)).rstrip() for _, runs in sorted(rows.items()))
    return [line for line in lines if line]


async def wait_for(pilot: Any, condition: Callable[[], object], what: str | None = None, *,
                   seen: Callable[[], object] | None = None, timeout: float = DEADLINE) -> None:
    """Under Pilot: pause (the app handles what is pending) until ``condition()``
    holds. Without ``seen``, a failure shows the screen as text."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        await pilot.pause()
        if condition():
            return
        if loop.time() > end:
            raise _timed_out(condition, what, seen or (lambda: screen_lines(pilot.app)), timeout)


def _pending(app: Any, running: tuple[str, ...] = ()) -> list[str]:
    """What the app still has to do: running workers (but those of the groups in
    ``running``) and one-shot timers not yet fired (a prose flush, a card's
    redraw, a deferred focus) anywhere on the screen; not the timer of work the
    app does only once the person has been idle for a second or more (pages
    mounted ahead, exchanges drawn light: a test that needs them waits for them)."""
    from app.tui.stillness import IDLE_TIMER as IDLE  # (here: not imported by every test that waits)

    busy = [f"worker {w.name or w.group}" for w in app.workers if not w.is_finished and w.group not in running]
    for node in (app, *app.screen.walk_children(with_self=True)):
        for timer in list(node._timers):
            task = timer._task
            if timer.name == IDLE:
                continue
            if timer._repeat == 0 and task is not None and not task.done():
                busy.append(f"timer on {type(node).__name__}")
    return busy


async def quiet(pilot: Any, running: tuple[str, ...] = (), timeout: float = DEADLINE) -> None:
    """Wait for a screen with nothing left to do: no worker running, no one-shot
    timer pending, and the same picture on two looks in a row (a widget mounted
    by the last message has drawn itself too). ``running``: worker groups that
    stay running meanwhile (``("chat",)`` for a turn waiting for the user)."""
    app = pilot.app
    last: list[str | None] = [None]

    def still() -> bool:
        if _pending(app, running):
            last[0] = None
            return False
        picture = app.export_screenshot()
        same, last[0] = picture == last[0], picture
        return same

    await wait_for(pilot, still, "a quiet screen (no worker running, no timer pending, the picture unchanged)",
                   seen=lambda: _pending(app, running) or screen_lines(app), timeout=timeout)
