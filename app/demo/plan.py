"""What the demo model decides to send, before any wire format: a plan.

The model (``model.py``) writes a plan; ``frames()`` renders it through a
dialect's encoder into SSE frames with pauses, faults placed where the plan
says. Keeping the two apart means every scenario exists once and comes out
right in all four dialects.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .dialects.base import Encoder

__all__ = ["Say", "Think", "Call", "Stall", "Plan", "Pause", "Cut", "frames", "call_id"]


@dataclass(slots=True)
class Say:
    text: str


@dataclass(slots=True)
class Think:
    text: str


@dataclass(slots=True)
class Call:
    id: str
    name: str
    #: The argument text exactly as the model "writes" it (it may be broken).
    arguments: str
    #: Characters per fragment (varied a little around this).
    fragment: int = 9
    #: Stream only this many characters, then the plan's ending (a fault).
    stop_after: int | None = None


@dataclass(slots=True)
class Stall:
    """Send nothing for this long (not scaled by the speed setting)."""

    seconds: float


Step = Say | Think | Call | Stall


@dataclass(slots=True)
class Plan:
    steps: list[Step] = field(default_factory=list)
    #: stop | tool_calls | length (a finish) | error | cut (faults)
    ending: str = "stop"
    error: str = "Overloaded"


@dataclass(slots=True)
class Pause:
    seconds: float
    #: A stall is a fault in itself and ignores the speed setting.
    fixed: bool = False


class Cut:
    """Drop the connection here."""


def call_id(prefix: str, *parts: object) -> str:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()
    return f"{prefix}{digest[:20]}"


_TOKENS = re.compile(r"\S+\s*|\s+")


def _text_pieces(text: str, rng: random.Random) -> Iterator[str]:
    """Text in token-ish deltas of one to three words, as models stream it."""
    tokens = _TOKENS.findall(text)
    i = 0
    while i < len(tokens):
        take = rng.choice((1, 1, 2, 3))
        yield "".join(tokens[i : i + take])
        i += take


def _arg_pieces(text: str, size: int, rng: random.Random) -> Iterator[str]:
    i = 0
    while i < len(text):
        take = max(1, size + rng.randint(-size // 2, size // 2))
        yield text[i : i + take]
        i += take


def frames(plan: Plan, encoder: Encoder, seed: str) -> Iterator[bytes | Pause | Cut]:
    """The plan as frames and pauses. Pauses are per-frame gaps at speed 1;
    the server scales them (bursts come out as runs of zero-length gaps)."""
    rng = random.Random(seed)

    def gap() -> Pause:
        roll = rng.random()
        if roll < 0.25:
            return Pause(0.0)  # a burst: sent with the previous frame
        if roll < 0.93:
            return Pause(rng.uniform(0.008, 0.03))
        return Pause(rng.uniform(0.12, 0.35))  # the model thinks

    def emit(items: list[bytes]) -> Iterator[bytes | Pause]:
        for item in items:
            yield gap()
            yield item

    yield from emit(encoder.begin())
    slot = 0
    for step in plan.steps:
        if isinstance(step, Say):
            for piece in _text_pieces(step.text, rng):
                yield from emit(encoder.text(piece))
        elif isinstance(step, Think):
            for piece in _text_pieces(step.text, rng):
                yield from emit(encoder.reasoning(piece))
        elif isinstance(step, Stall):
            yield Pause(step.seconds, fixed=True)
        elif isinstance(step, Call):
            yield from emit(encoder.start(slot, step.id, step.name))
            text = step.arguments if step.stop_after is None else step.arguments[: step.stop_after]
            for piece in _arg_pieces(text, step.fragment, rng):
                yield from emit(encoder.args(slot, piece))
            if step.stop_after is not None:
                break  # the fault comes mid-call
            yield from emit(encoder.end(slot))
            slot += 1
    if plan.ending == "cut":
        yield Cut()
    elif plan.ending == "error":
        yield from emit(encoder.error(plan.error))  # then the body ends, as Anthropic's does
    else:
        yield from emit(encoder.finish(encoder.native(plan.ending)))
        yield from emit(encoder.terminal())
