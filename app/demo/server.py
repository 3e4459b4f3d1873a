"""A real HTTP/1.1 server on 127.0.0.1 that speaks every dialect.

Built on asyncio streams from the standard library: the demo must run with
nothing but callstream's own dependencies, and a server this small is easier
to make misbehave on purpose (drop the connection mid-chunk, stall, burst)
than a framework would be. Responses are chunked, so a cut-off looks to a
client exactly like a real one: "peer closed connection without sending
complete message body".

Routes (whatever the model name in the path or body):
  POST /v1/chat/completions                          openai-chat
  POST /v1/responses                                 openai-responses
  POST /v1/messages                                  anthropic
  POST /v1beta/models/M:streamGenerateContent?alt=sse  gemini
  GET  /v1/models                                    the one model, "demo"
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from ..settings.profiles import DEMO_MODEL
from ..stream.limits import loads
from .bodies import Bodies
from .dialects import ENCODERS, PARSERS, Request, RequestError
from .model import LABEL, reply
from .plan import Call, Cut, Pause, Plan, Say, frames

__all__ = ["DemoServer", "MODEL_NAME"]

MODEL_NAME = DEMO_MODEL
#: How long the server remembers that it played a request's transient fault:
#: the client's retry comes well within it (the demo's read timeout is 15 s).
_FAULT_MEMORY = 120.0
_MAX_BODY = 64 * 1024 * 1024
_MAX_HEAD = 64 * 1024


def _route(method: str, path: str) -> str | None:
    if method != "POST":
        return None
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    if ":streamGenerateContent" in path:
        return "gemini"
    return None


def _tokens(chars: int) -> int:
    """A token count estimate (about four characters a token), never zero."""
    return max(1, chars // 4)


def _plan_size(plan: Plan) -> int:
    return sum(len(step.text) if isinstance(step, Say) else len(step.arguments) + len(step.name)
               if isinstance(step, Call) else len(getattr(step, "text", "")) for step in plan.steps)


def _error_body(dialect: str | None, status: int, message: str) -> dict[str, Any]:
    if dialect == "anthropic":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    if dialect == "gemini":
        return {"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}}
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


class DemoServer:
    """The embedded demo model's server.

    ``speed`` scales the pauses between frames (1 is a brisk real model, 10
    ten times faster, 0 sends as fast as the socket allows). A scenario's
    stall is not scaled: it is the fault being shown.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, speed: float = 1.0) -> None:
        self.host = host
        self.port = port
        self.speed = speed
        self._attempts: dict[str, tuple[int, float]] = {}  # request key → (attempts, when last seen)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.requests = 0
        #: The last body read, so the next is read only past what it shares with it (``bodies.py``).
        self._bodies = Bodies()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- lifecycle ------------------------------------------------------------

    async def open(self, sock: socket.socket | None = None) -> None:
        """Listen on the current loop (``serve-demo`` runs it in the foreground), on ``sock`` if given (a
        socket already listening: the demo's own process, ``process.py``)."""
        if sock is not None:
            self._server = await asyncio.start_server(self._handle, sock=sock, limit=_MAX_HEAD)
        else:
            self._server = await asyncio.start_server(self._handle, self.host, self.port, limit=_MAX_HEAD)
        self.host, self.port = self._server.sockets[0].getsockname()[:2]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    def start(self) -> DemoServer:
        """Run in a background thread with its own loop; returns once listening."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.open())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.close())
            loop.close()

        self._thread = threading.Thread(target=run, name="callstream-demo-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop = None
            self._thread = None

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one connection --------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, _ = lines[0].split(" ", 2)
        except ValueError:
            await self._json(writer, 400, {"error": {"message": "bad request line"}})
            return
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                key, value = line.split(":", 1)
                headers[key.strip().lower()] = value.strip()
        url = urlsplit(target)
        length = int(headers.get("content-length") or 0)
        if length > _MAX_BODY:
            await self._json(writer, 413, {"error": {"message": "request body too large"}})
            return
        body = await reader.readexactly(length) if length else b""
        self.requests += 1
        if method == "GET" and url.path.rstrip("/").endswith("/models"):
            await self._json(writer, 200, {"object": "list", "data": [
                {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "callstream", "display_name": LABEL}
            ]})
            return
        if method == "GET" and url.path in ("", "/"):
            await self._text(writer, 200, f"callstream {LABEL}: POST /v1/chat/completions, /v1/responses, "
                                          "/v1/messages or /v1beta/models/demo:streamGenerateContent?alt=sse\n")
            return
        dialect = _route(method, url.path)
        if dialect is None:
            await self._json(writer, 404, _error_body(None, 404, f"no route for {method} {url.path}"))
            return
        try:
            payload = self._bodies.read(body or b"{}")
            if not isinstance(payload, dict):
                raise RequestError("the request body must be a JSON object")
            request = PARSERS[dialect](payload)
        except (ValueError, RequestError) as exc:
            await self._json(writer, 400, _error_body(dialect, 400, f"bad request: {exc}"))
            return
        if dialect == "gemini":
            request.stream = "alt=sse" in url.query
            request.model = url.path.rsplit("/", 1)[-1].split(":", 1)[0]
        # the request as sent (a retry sends the same bytes): re-writing it in a canonical form first took as
        # long as parsing it, the whole conversation each request of a long sitting
        key = hashlib.sha256(url.path.encode() + b"\0" + (body or b"")).hexdigest()
        attempt = self._attempt(key)
        plan = reply(request.history, request.tools, attempt, dialect)
        usage = (_tokens(len(body)), _tokens(_plan_size(plan)))
        if not request.stream:
            await self._whole(writer, dialect, request, plan, usage)
            return
        if dialect == "gemini":
            encoder = ENCODERS[dialect](request.model or MODEL_NAME, partial_args=request.stream_arguments)
        elif dialect == "openai-chat":
            encoder = ENCODERS[dialect](request.model or MODEL_NAME, include_usage=request.include_usage)
        else:
            encoder = ENCODERS[dialect](request.model or MODEL_NAME)
        encoder.usage = usage
        await self._stream(writer, frames(plan, encoder, key), key)

    def _attempt(self, key: str) -> int:
        """Which attempt at this very request this is. A transient fault plays
        on the first; the retry (the same body again, soon) recovers, and is
        then forgotten, so the same request in another conversation — or
        after a while — meets the fault again: once per conversation, not
        once per server lifetime."""
        now = time.monotonic()
        with self._lock:
            if len(self._attempts) > 512:
                self._attempts = {k: v for k, v in self._attempts.items() if now - v[1] <= _FAULT_MEMORY}
            count, seen = self._attempts.get(key, (0, now))
            attempt = 1 if now - seen > _FAULT_MEMORY else count + 1
            if attempt > 1:
                del self._attempts[key]
            else:
                self._attempts[key] = (attempt, now)
        return attempt

    # -- writing -------------------------------------------------------------

    async def _stream(self, writer: asyncio.StreamWriter, items: Iterator[bytes | Pause | Cut], seed: str) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\nX-Demo-Model: " + LABEL.encode() + b"\r\n\r\n"
        )
        await writer.drain()
        rng = random.Random(seed + "net")
        pending: list[bytes] = []

        async def flush() -> None:
            data = b"".join(pending)
            pending.clear()
            if data:
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()

        for item in items:
            if isinstance(item, Cut):
                await flush()
                writer.transport.abort()  # no final chunk: the connection just drops
                return
            if isinstance(item, Pause):
                if item.fixed:
                    await flush()
                    await asyncio.sleep(item.seconds)
                elif item.seconds > 0:
                    await flush()
                    if self.speed > 0:
                        await asyncio.sleep(item.seconds / self.speed)
                continue
            if len(item) > 48 and rng.random() < 0.15:
                # a frame split across two network writes, as TCP may deliver it
                cut = rng.randint(1, len(item) - 1)
                pending.append(item[:cut])
                await flush()
                pending.append(item[cut:])
            else:
                pending.append(item)
        await flush()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def _whole(self, writer: asyncio.StreamWriter, dialect: str, request: Request, plan: Plan,
                     usage: tuple[int, int]) -> None:
        """A non-streaming reply (clients use it for titles and the like)."""
        if plan.ending in ("cut", "error"):
            status = 529 if plan.ending == "error" else 503
            await self._json(writer, status, _error_body(dialect, status, plan.error))
            return
        text = "".join(step.text for step in plan.steps if isinstance(step, Say))
        calls = [step for step in plan.steps if isinstance(step, Call)]
        if dialect == "openai-chat":
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls
                ]
            await self._json(writer, 200, {
                "id": "chatcmpl-demo", "object": "chat.completion", "created": int(time.time()),
                "model": request.model or MODEL_NAME,
                "choices": [{"index": 0, "message": message, "finish_reason": plan.ending}],
                "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
            })
        elif dialect == "anthropic":
            content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            for c in calls:
                try:
                    arguments = loads(c.arguments)
                except ValueError:
                    arguments = {}
                content.append({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments})
            reason = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}[plan.ending]
            await self._json(writer, 200, {
                "id": "msg_demo", "type": "message", "role": "assistant", "model": request.model or MODEL_NAME,
                "content": content, "stop_reason": reason, "stop_sequence": None,
                "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
            })
        else:
            await self._json(writer, 400, _error_body(dialect, 400, "the demo model streams only: ask with "
                                                      "stream: true (or :streamGenerateContent?alt=sse)"))

    async def _json(self, writer: asyncio.StreamWriter, status: int, payload: Any) -> None:
        await self._send(writer, status, "application/json", json.dumps(payload).encode())

    async def _text(self, writer: asyncio.StreamWriter, status: int, text: str) -> None:
        await self._send(writer, status, "text/plain; charset=utf-8", text.encode())

    async def _send(self, writer: asyncio.StreamWriter, status: int, kind: str, data: bytes) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large",
                  503: "Service Unavailable", 529: "Overloaded"}.get(status, "Error")
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {len(data)}\r\n"
                     f"Connection: close\r\n\r\n".encode() + data)
        await writer.drain()

