"""Watching a call while it forms (DESIGN.md step 5): the one forming decode everyone reads, and the moment a
call's required fields are stable — when a read-only tool may warm up on
them. Display and warming only: a call is dispatched at its end, with its
final arguments, never from here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from ..stream import ToolCallBlock
from ..stream.preview import FormingPreview
from ..tools.registry import Registry

__all__ = ["FormingWatch"]


class FormingWatch:
    """The forming decode of a session's calls, and the warm-ups it starts."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        #: Warm-ups in flight (kept so none is collected before it finishes).
        self._tasks: set[asyncio.Task[None]] = set()

    def feed(self, call: ToolCallBlock, fragment: str, registry: Registry, warming: bool) -> None:
        """Decode the forming call once, for everyone: the card reads
        ``call.preview``. The moment every required field is stable, note it,
        and (``warming``) let a read-only tool warm up on those fields."""
        if call.provider_executed:
            return
        preview = call.preview
        if preview is None:
            preview = call.preview = FormingPreview()
        preview.feed(fragment)
        if "required" in call.timings:
            return
        tool = registry.get(call.name)
        if tool is None:
            return
        required = tool.parameters.get("required", [])
        stable = preview.stable_names()
        if not all(name in stable for name in required):
            return
        call.timings["required"] = self.clock()
        whole = preview.stable_top()
        if warming and tool.read_only and tool.warm is not None and all(name in whole for name in required):
            # a warm-up gets whole values only (a string too long to hold whole is not warmed on)
            task = asyncio.ensure_future(_warm(tool.warm, dict(whole)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)


async def _warm(warm: Callable[[dict[str, Any]], Awaitable[Any]], partial: dict[str, Any]) -> None:
    with contextlib.suppress(Exception):  # a warm-up that fails costs nothing but itself
        await warm(partial)
