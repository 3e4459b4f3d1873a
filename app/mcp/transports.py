"""The two transports callstream hands the SDK's ``Client``, each reading
through ``wire`` (bounded messages, stray stdout, answers too deep).

- ``bounded_stdio``: the SDK's ``stdio_client`` with its line reader
  replaced (spawning and stopping the child are the SDK's own functions).
  Written here because the SDK's reader is quadratic in a line's length and
  logs a traceback on the terminal for a line it cannot parse; neither has a
  setting.
- ``bounded_http``: an ``httpx2`` client whose transport bounds each answer
  the same way, and notes the HTTP status of a ``tools/call`` the server
  answered with a 5xx (the SDK turns it into a bare "Server returned an
  error response", losing whether the server may have acted).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, TextIO

from ..stream.jsonwrite import chunks
from .wire import DEEP, TAIL, LineCutter, classify, message_id, salvage, unreadable

__all__ = ["bounded_stdio", "bounded_http", "message_cap", "GATEWAY"]

#: The ``_meta`` key carrying a call's idempotency key (as ``servers.IDEMPOTENCY_META``).
_KEY = "callstream/idempotency-key"
#: HTTP statuses of a call after which the server may have acted: its own failure, or a gateway's.
GATEWAY = range(500, 600)


def message_cap(limit: int) -> int:
    """The longest message handed to the SDK whole (4 × the output limit, at
    least 4 MiB): a longer one is salvaged to ``limit`` bytes of its text."""
    return max(4 * limit, 4 << 20)


def _parsed(line: bytes, on_stray: Callable[[str], None]) -> Any:
    """A line as the SDK's message, an error answering its request, or None
    (the line ended the connection: ``on_stray`` was told)."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        pass
    why = classify(line)
    if why == "stray":
        on_stray(line[:200].decode("utf-8", "replace").strip())
        return None
    ident = message_id(line[:1 << 16], line[-TAIL:])
    text = DEEP if why == "deep" else "its answer is not a JSON-RPC message callstream can read"
    if ident is None:  # nothing to answer: the session hears of it as the SDK's own reader would say it
        return ValueError(f"the server sent a message callstream cannot read: {text}")
    return SessionMessage(types.jsonrpc_message_adapter.validate_python(unreadable(ident, text)))


@contextlib.asynccontextmanager
async def bounded_stdio(params: Any, errlog: TextIO, limit: int,
                        on_stray: Callable[[str], None]) -> AsyncGenerator[Any, None]:
    import anyio
    import mcp_types as types
    from mcp.client import stdio as sdk
    from mcp.shared.message import SessionMessage

    command = await sdk._get_executable_command(params.command)
    process = await sdk._create_platform_compatible_process(
        command=command, args=params.args, env=sdk.get_default_environment() | (params.env or {}),
        errlog=errlog, cwd=params.cwd)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    cap = message_cap(limit)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        cutter = LineCutter(cap, limit + TAIL)
        try:
            async with read_writer:
                try:
                    async for chunk in process.stdout:
                        for item in cutter.feed(chunk):
                            if isinstance(item, tuple):
                                salvaged = salvage(*item, limit)
                                message: Any = (SessionMessage(types.jsonrpc_message_adapter.validate_python(salvaged))
                                                if salvaged is not None else None)
                                if message is None:
                                    on_stray("an answer too long to read, with no id to answer")
                                    await read_writer.aclose()  # before the drain below: the session ends now
                                    return
                            elif not item.strip():
                                continue
                            else:
                                message = _parsed(item, on_stray)
                                if message is None:  # the session sees the connection end; the server fails
                                    await read_writer.aclose()  # now, not after the drain below
                                    return
                            await read_writer.send(message)
                finally:
                    await sdk._drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for session_message in write_reader:
                    # the message as Python values (its strings the call's own, not copied), written as
                    # JSON 64 KB at a time: the SDK's ``model_dump_json`` then ``+ "\n"`` then
                    # ``.encode()`` made three copies of a 10 MB argument
                    message = session_message.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
                    for chunk in chunks(message):
                        await process.stdin.send(chunk)
                    await process.stdin.send(b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(0.5):
            await writer_done.wait()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            group.cancel_scope.cancel()


def bounded_http(headers: dict[str, str], read_timeout: float, limit: int, statuses: dict[str, int]) -> Any:
    """An ``httpx2.AsyncClient`` for the SDK's Streamable HTTP client whose
    answers are bounded; ``statuses`` gets the key of each call answered 5xx."""
    import httpx2

    cap = message_cap(limit)

    class Bounded(httpx2.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            cutter = LineCutter(cap, limit + TAIL)
            async for chunk in self.inner:
                for item in cutter.feed(chunk):
                    yield _rewritten(item) + b"\n"
            for item in cutter.close():
                yield _rewritten(item)

        async def aclose(self) -> None:
            await self.inner.aclose()

    def _rewritten(item: bytes | tuple[bytes, bytes, int]) -> bytes:
        if isinstance(item, bytes):
            return item
        head, tail, size = item
        prefix = b""
        if head.startswith(b"data:"):  # an SSE line: the message follows the field name
            prefix, head = b"data: ", head[5:].lstrip()
        salvaged = salvage(head, tail, size, limit)
        return prefix + json.dumps(salvaged or unreadable(None, "its answer was too long to read")).encode()

    class Transport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            response = await self.inner.handle_async_request(request)
            if response.status_code in GATEWAY and request.method == "POST":
                key = _call_key(request.content)
                if key is not None:
                    statuses[key] = response.status_code
            kind = response.headers.get("content-type", "").lower()
            if not kind.startswith(("application/json", "text/event-stream")):
                return response
            headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-length"]
            return httpx2.Response(response.status_code, headers=headers, stream=Bounded(response.stream),
                                   extensions=response.extensions)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=read_timeout),
                              transport=Transport())


def _call_key(body: bytes) -> str | None:
    """The idempotency key of a ``tools/call`` request body, or None."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    meta = (message.get("params") or {}).get("_meta") or {}
    key = meta.get(_KEY) if isinstance(meta, dict) else None
    return key if isinstance(key, str) else None
