"""A programmable HTTP server on 127.0.0.1 for provider tests: each request
takes the next planned reply — a status, headers, a body in chunks of a given
size with delays, a cut after N bytes (the connection just drops), or a TCP
reset. It records the requests it got."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunk: int = 64
    delay: float = 0.0
    #: Drop the connection after this many body bytes (no final chunk).
    cut_at: int | None = None
    #: Reset the TCP connection (RST) instead of closing it.
    reset: bool = False
    #: Sleep this long before any byte of the body (after the headers).
    stall: float = 0.0
    #: Pause ``pause`` seconds once ``pause_at`` body bytes are out.
    pause_at: int | None = None
    pause: float = 0.0
    #: At ``pause_at``, wait until the test sets this (a state, not a time).
    hold: threading.Event | None = None


class FaultServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FaultServer:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._handle, "127.0.0.1", 0), self._loop)
        self._server = future.result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()
            handlers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append({"line": lines[0], "headers": headers, "body": json.loads(body or b"null")})
            reply = self.replies.pop(0) if self.replies else Reply(b"no reply planned", 500)
            extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
            kind = "text/event-stream" if reply.status == 200 else "application/json"
            writer.write(f"HTTP/1.1 {reply.status} X\r\nContent-Type: {kind}\r\nTransfer-Encoding: chunked\r\n"
                         f"Connection: close\r\n{extra}\r\n".encode())
            await writer.drain()
            if reply.stall:
                await asyncio.sleep(reply.stall)
            data = reply.body if reply.cut_at is None else reply.body[: reply.cut_at]
            points = list(range(0, len(data), reply.chunk)) if data else []
            if reply.pause_at is not None and reply.pause_at not in points:
                points = sorted({*points, reply.pause_at})
            for i, end in zip(points, [*points[1:], len(data)][: len(points)], strict=True):
                if i == reply.pause_at:
                    await asyncio.sleep(reply.pause)
                    if reply.hold is not None:
                        await asyncio.to_thread(reply.hold.wait, 30)
                piece = data[i:end]
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
                if reply.delay:
                    await asyncio.sleep(reply.delay)
            if reply.reset:
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return
            if reply.cut_at is not None:
                writer.transport.abort()
                return
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()
