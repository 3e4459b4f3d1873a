"""Replay a recorded conversation through the very same pipeline.

The recorded chunks go back in through an httpx transport, at the recorded
timing divided by the speed, into an ordinary ``ChatSession`` — SSE decoder,
dialect, assembler, finaliser, events, widgets — with one part swapped: the
dispatcher is a ``ReplayDispatcher`` that reports the recorded outcome of
each call and runs nothing. The tools it knows are rebuilt from the recorded
requests, with a ``run`` that refuses.

A ``switch`` marker (``/model``, ``/provider``) moves the session to the
dialect the conversation went on in, as the live one moved.

Controls (``ReplayClock``): pause and resume, a speed from 0.25× to 64× or
instant, a step of one event while paused, a jump to the next marker, and an
idle limit that caps any silence. A speed change applies mid-wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from ..chat.events import ExchangeDone
from ..chat.session import ChatSession
from ..demo.dialects import PARSERS
from ..net.endpoint import Endpoint
from ..rules.pacing import REPLAY_SPEEDS
from ..store.recording import Recording
from ..stream import assemble
from ..stream.blocks import not_run_words
from ..stream.dialects import DIALECTS, detect
from ..stream.history import ToolSpec
from ..stream.sse import SSEDecoder
from ..tools.base import Tool, ToolContext
from ..tools.dispatcher import CallUpdate, Dispatcher
from ..tools.registry import Registry

__all__ = ["ReplayClock", "Replayer", "SPEEDS"]

#: The speed steps + and - move through; ``math.inf`` is "instant" (``app/rules/pacing.py``: the one range).
SPEEDS = REPLAY_SPEEDS


class ReplayClock:
    """Recording time, advancing at ``speed`` × real time unless paused."""

    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        self.paused = False
        self._anchor_pos = 0.0
        self._anchor_real = time.monotonic()
        self._changed = asyncio.Event()

    @property
    def instant(self) -> bool:
        return math.isinf(self.speed)

    def now(self) -> float:
        if self.paused:
            return self._anchor_pos
        if self.instant:
            return math.inf
        return self._anchor_pos + (time.monotonic() - self._anchor_real) * self.speed

    def _rebase(self, position: float | None = None) -> None:
        current = self.now()
        self._anchor_pos = position if position is not None else (current if math.isfinite(current) else
                                                                  self._anchor_pos)
        self._anchor_real = time.monotonic()
        self._changed.set()

    def set_speed(self, speed: float) -> None:
        self._rebase()
        self.speed = speed
        self._changed.set()

    def faster(self) -> None:
        self.set_speed(next((s for s in SPEEDS if s > self.speed), SPEEDS[-1]))

    def slower(self) -> None:
        self.set_speed(next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0]))

    def toggle_pause(self) -> None:
        self._rebase()
        self.paused = not self.paused
        self._changed.set()

    def seek(self, position: float) -> None:
        """Move recording time forward to ``position`` (a step, or a marker)."""
        if position > self._anchor_pos or not self.paused:
            self._rebase(max(position, self._anchor_pos if self.paused else min(self.now(), position)))

    async def wait_until(self, position: float) -> None:
        while True:
            current = self.now()
            if current >= position:
                return
            self._changed.clear()
            if self.paused:
                await self._changed.wait()
                continue
            delay = (position - current) / self.speed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=delay)


class _Cursor:
    """The recording's events with their replay times (the idle limit applied)."""

    def __init__(self, recording: Recording, idle_limit: float | None) -> None:
        self.events: list[tuple[float, str, Any]] = []
        previous_real = 0.0
        previous_replay = 0.0
        for at, kind, data in recording.events:
            gap = at - previous_real
            if idle_limit is not None:
                gap = min(gap, idle_limit)
            previous_real = at
            previous_replay += gap
            self.events.append((previous_replay, kind, data))
        self.index = 0

    @property
    def duration(self) -> float:
        return self.events[-1][0] if self.events else 0.0

    def peek(self) -> tuple[float, str, Any] | None:
        return self.events[self.index] if self.index < len(self.events) else None

    def take(self) -> tuple[float, str, Any]:
        event = self.events[self.index]
        self.index += 1
        return event

    def next_marker_time(self) -> float | None:
        for at, kind, _ in self.events[self.index:]:
            if kind == "m":
                return at
        return None


class ReplayDispatcher(Dispatcher):
    """Reports each call's recorded outcome (by its idempotency key); runs nothing."""

    def __init__(self, *args: Any, recorded: dict[str, dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.recorded = recorded

    async def _admit(self, ref: Any, name: str, arguments: dict[str, Any], key: str) -> CallUpdate:
        """The recorded outcome is the call's end: nothing is looked up, asked or run."""
        outcome = self.recorded.get(key)
        if outcome is None:
            reason = "the recording holds no outcome for this call (a replay runs nothing)"
            return CallUpdate(ref, "not run", not_run_words(reason), True, key=key, not_run=reason)
        self._emit(CallUpdate(ref, "running", key=key))
        state = outcome.get("state", "ran")
        return CallUpdate(ref, state, outcome.get("result"), state != "ran", bool(outcome.get("reused")), key=key)


class _Transport(httpx.AsyncBaseTransport):
    """Answers each request with the next recorded attempt, at recorded pace."""

    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        replayer = self.replayer
        cursor = replayer.cursor
        # everything up to and including the marker that starts this attempt
        while (event := cursor.peek()) is not None:
            if event[1] == "m" and event[2].get("kind") in ("user", "retry", "http"):
                break  # no attempt left for this request: the body below ends at once
            await replayer.clock.wait_until(event[0])
            cursor.take()
            if event[1] == "m" and event[2].get("kind") == "attempt":
                break
        event = cursor.peek()
        if event is not None and event[1] == "m" and event[2].get("kind") == "http":
            await replayer.clock.wait_until(event[0])
            cursor.take()
            marker = event[2]
            status = int(marker.get("status") or 500)
            message = str(marker.get("message") or "")
            text = message.split(": ", 1)[1] if message.startswith("HTTP ") and ": " in message else message
            return httpx.Response(status, json={"error": {"message": text}})
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Body(replayer))


class _Body(httpx.AsyncByteStream):
    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer

    async def __aiter__(self) -> AsyncIterator[bytes]:
        replayer = self.replayer
        cursor = replayer.cursor
        while (event := cursor.peek()) is not None:
            at, kind, data = event
            if kind == "m" and data.get("kind") in ("user", "retry", "turn", "attempt", "results", "http"):
                return  # the stream ended with no end marker (a torn recording): EOF
            await replayer.clock.wait_until(at)
            cursor.take()
            if kind == "o":
                replayer.events_replayed += 1
                yield data
            elif data.get("kind") == "cancel":
                replayer.session.cancel()
            elif data.get("kind") == "end":
                cause = data.get("cause")
                if cause == "disconnect":
                    raise httpx.RemoteProtocolError("peer closed connection (as recorded)")
                if cause == "timeout":
                    raise httpx.ReadTimeout("no data (as recorded)")
                return


def _refuse(name: str) -> Callable[[dict[str, Any], ToolContext], Any]:
    async def run(arguments: dict[str, Any], ctx: ToolContext) -> str:
        raise AssertionError(f"a replay tried to run the tool {name!r}: replays never run tools")

    return run


class Replayer:
    """One recording, one replay session, one clock."""

    def __init__(self, recording: Recording, speed: float = 1.0, idle_limit: float | None = None,
                 display_registry: Registry | None = None) -> None:
        self.recording = recording
        self.clock = ReplayClock(speed)
        self.cursor = _Cursor(recording, idle_limit)
        self.events_replayed = 0
        self.dialect = self._dialect()
        header = recording.header
        recorded: dict[str, dict[str, Any]] = {}
        tools: dict[str, ToolSpec] = {}
        first_turn: int | None = None
        dialect = self.dialect  # a /model or /provider switch changes it from its marker on
        for _, kind, data in recording.events:
            if kind != "m":
                continue
            if data.get("kind") == "results":
                for call in data.get("calls", []):
                    if call.get("key"):
                        recorded[call["key"]] = call
            elif data.get("kind") == "switch" and data.get("dialect") in DIALECTS:
                dialect = data["dialect"]
            elif data.get("kind") == "turn":
                first_turn = data.get("turn") if first_turn is None else first_turn
                request = data.get("request")
                if isinstance(request, dict):
                    with contextlib.suppress(Exception):
                        for spec in PARSERS[dialect](request).tools:
                            tools[spec.name] = spec
        if recording.raw:
            # a capture from the wild: no requests, so no schemas; accept every call it makes
            body = b"".join(data for _, kind, data in recording.events if kind == "o")
            for call in assemble([body], self.dialect).calls:
                tools.setdefault(call.name, ToolSpec(call.name, "", {"type": "object"}))
        registry = Registry([Tool(s.name, s.description, s.parameters, _refuse(s.name)) for s in tools.values()])
        for name in registry.names():
            shown = display_registry.get(name) if display_registry else None
            tool = registry.get(name)
            if shown is not None and tool is not None:
                tool.display, tool.result_display, tool.read_only = shown.display, shown.result_display, \
                    shown.read_only
        self.registry = registry
        endpoint = self._endpoint(self.dialect, header)
        self.session = ChatSession(
            endpoint, registry, None,  # type: ignore[arg-type]  # the replay dispatcher keeps no ledger
            str(header.get("conversation", "replay")), retries=0 if recording.raw else int(header.get("retries", 3)),
            max_rounds=1 if recording.raw else int(header.get("max_rounds", 8)), backoff=0.0, first_turn=first_turn,
            http=httpx.AsyncClient(transport=_Transport(self)),
            dispatcher_class=functools.partial(ReplayDispatcher, recorded=recorded),
            team=header.get("team") if isinstance(header.get("team"), str) else None)
        self.session.timeouts.read = 24 * 3600.0  # pauses are the viewer's, not the network's
        self.session.timeouts.deadline = 24 * 3600.0

    @staticmethod
    def _endpoint(dialect: str, said: dict[str, Any]) -> Endpoint:
        """The endpoint the recording talked to (its header, or a switch marker), answered by the replay."""
        model = str(said.get("model") or "")
        return Endpoint(dialect, "http://replay.invalid", model,
                        f"replay · {said.get('provider') or 'recording'} · {model}".strip(" ·"))

    def _switch(self, marker: dict[str, Any]) -> None:
        """A ``/model`` or ``/provider`` switch: the requests and streams after
        it are in the new dialect, so the session reads them in it, as the live
        session did (``Runtime.switch`` wrote the marker)."""
        dialect = marker.get("dialect")
        if dialect in DIALECTS and isinstance(dialect, str):
            self.dialect = dialect
            self.session.endpoint = self._endpoint(dialect, marker)

    def _dialect(self) -> str:
        dialect = self.recording.dialect
        if dialect in DIALECTS:
            return dialect
        decoder = SSEDecoder()
        for _, kind, data in self.recording.events:
            if kind == "o":
                for frame in decoder.feed(data):
                    found = detect(frame)
                    if found:
                        return found
        return "openai-chat"

    @property
    def duration(self) -> float:
        return self.cursor.duration

    def next_marker(self) -> None:
        position = self.cursor.next_marker_time()
        if position is not None:
            self.clock.seek(position)

    def step(self) -> None:
        event = self.cursor.peek()
        if event is not None:
            self.clock.seek(event[0])

    async def run(self) -> ExchangeDone:
        """Drive the session through the recording; returns the last exchange's end."""
        done = ExchangeDone("done")
        try:
            while (event := self.cursor.peek()) is not None:
                at, kind, data = event
                await self.clock.wait_until(at)
                self.cursor.take()
                if kind != "m":
                    continue  # leftovers of an attempt the session stopped reading
                if data.get("kind") == "user":
                    done = await self.session.send(str(data.get("text", "")))
                elif data.get("kind") == "retry":
                    done = await self.session.retry_last()
                elif data.get("kind") == "switch":
                    self._switch(data)
        finally:
            await self.session.aclose()
        return done
