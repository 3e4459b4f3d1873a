"""How fast a replay or the demo model may go: the one range each setting
takes, checked where it arrives (``replay --speed`` / ``--idle-limit``, the
replay's + and - keys, ``serve-demo --speed``, a demo profile's ``speed``)
and quoted in the errors and the ``--help`` that name it. Kept apart from the
replay (httpx) and the config so ``--help`` can quote it cheaply."""

from __future__ import annotations

import math

__all__ = ["REPLAY_SPEEDS", "REPLAY_SPEED_RANGE", "IDLE_LIMIT_RANGE", "DEMO_SPEED_RANGE", "parse_replay_speed",
           "check_idle_limit", "check_demo_speed"]

#: The speeds a replay's + and - keys step through; ``math.inf`` is "instant".
REPLAY_SPEEDS = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, math.inf]
REPLAY_SPEED_RANGE = "0.25 to 64, or instant"
#: The longest silence a replay plays, in seconds (``--idle-limit``): from 0 (none) to an hour.
IDLE_LIMIT_RANGE = (0.0, 3600.0)
#: The demo model's pacing: 0 sends without pauses, 1 is a brisk real model, 1000 the fastest.
DEMO_SPEED_RANGE = (0.0, 1000.0)

_INSTANT = ("instant", "inf", "max")


def parse_replay_speed(text: str) -> float:
    """``--speed``: a number from 0.25 to 64, or ``instant`` (``math.inf``); a
    ``ValueError`` whose message names the range otherwise."""
    if text.strip().lower() in _INSTANT:
        return math.inf
    try:
        speed = float(text)
    except ValueError:
        speed = math.nan
    if not REPLAY_SPEEDS[0] <= speed <= REPLAY_SPEEDS[-2]:
        raise ValueError(f"--speed must be from {REPLAY_SPEED_RANGE} (got {text[:40]!r})")
    return speed


def check_idle_limit(value: float) -> float:
    low, high = IDLE_LIMIT_RANGE
    if not low <= value <= high:  # NaN fails both
        raise ValueError(f"--idle-limit must be from {low:g} to {high:g} seconds (got {value:g})")
    return value


def check_demo_speed(value: object, where: str) -> float:
    """A demo speed (``where`` names the setting: ``--speed``, ``providers.demo.speed``)."""
    low, high = DEMO_SPEED_RANGE
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"{where} must be a number from {low:g} (no pauses) to {high:g}, like 1 or 2.5 "
                         f"(got {str(value)[:40]!r})")
    return float(value)
