"""What the first exchange needs, loaded while the person is still typing.

Measured on the first send of a fresh process: ~200 modules (the widgets of a
reply with Markdown and markdown-it, httpx's connection pool with anyio and
h11, jsonschema for the call's validation), linkify-it's patterns (compiled on
the first parse) and the HTTP client's TLS context
— 150–250 ms of work that otherwise lands on the event loop right when the
reply starts to stream, so the first keys typed then wait behind it.

Each step runs on the event loop (imports in a second thread could meet the
loop's own imports of the same modules) and between steps the loop serves
what is waiting, so a key pressed meanwhile waits one step at most. The
warm-up begins once the first screen is drawn, and the collector is told
first what lives as long as the app (``collector.settle``: the modules and
the first screen), not at the end: pages a key mounts meanwhile (Home) are
not the app's, and frozen they would outlive their removal. What the steps
load is frozen after the first exchange (``collector.between_turns``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ..rules import prices
from . import collector

if TYPE_CHECKING:
    from textual.app import App

    from ..chat.session import ChatSession

__all__ = ["MODULES", "warm_up"]

#: Public modules the first exchange imports, heaviest concerns first: what the
#: reply is drawn with, then the request, then the call's validation.
MODULES = (
    "widgets.prose",
    "widgets.reasoning",
    "widgets.tool_card",
    "httpcore",
    "h11",
    "anyio",
    "anyio._backends._asyncio",  # the backend anyio loads at the first connection
    "jsonschema",
)

#: Between steps: long enough for the loop to run what is ready (a key, a frame).
PAUSE = 0.01


def warm_up(app: App[Any], session: ChatSession, done: Callable[[], None] | None = None) -> None:
    """Start the steps on ``app``'s loop (first the price table if the first screen asked for it, in a
    thread of its own: it competes with the loop for the interpreter, which is why the app holds it until
    the warm-up, that is until the first frame); ``done`` runs after the last."""
    collector.settle()
    steps: list[Callable[[], None]] = [prices.release, *(partial(_load, name) for name in MODULES)]
    steps.insert(1, _warm_parser)
    steps.append(session.prepare)
    if done is not None:
        steps.append(done)

    def step() -> None:
        if not steps:
            return
        steps.pop(0)()
        app.set_timer(PAUSE, step)

    app.set_timer(PAUSE, step)


def _warm_parser() -> None:
    from widgets.prose import warm_parser

    warm_parser()


def _load(name: str) -> None:
    try:
        importlib.import_module(name)
    except ImportError:  # a library that moved a module: the first exchange imports what it needs itself
        pass
