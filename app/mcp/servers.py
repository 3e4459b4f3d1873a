"""MCP servers, connected through the official SDK's ``Client``.

One ``ServerConnection`` per ``[mcp.NAME]``: a task that owns the SDK client
(enters and leaves its context in the same task, as anyio requires), lists the
tools (following ``nextCursor``), then waits to be closed. Its state is what
``/mcp`` and ``callstream mcp list`` show: ``connecting`` → ``ready`` (N tools
in X ms) or ``failed`` (the reason, and the log file). A stdio server that
dies is restarted once, on the next call to it.

``MCPHub`` starts every server at once and never waits for one on behalf of
another; each server's tools are added to the registry the moment they are
listed, so typing is never blocked and a slow server delays only itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..settings.mcp import MCPConfigError, MCPServerConfig, expand, named_secrets
from ..stream.redact import redact, register_secret
from .logs import ServerLog

__all__ = ["ServerConnection", "ServerStatus", "MCPHub", "TransportLost", "ListedTool", "MAX_TOOLS", "IDEMPOTENCY_META"]

#: The ``_meta`` key that carries a call's idempotency key downstream.
IDEMPOTENCY_META = "callstream/idempotency-key"
#: Tools advertised per server at most (OpenAI takes 128 in a request).
MAX_TOOLS = 128
#: tools/list pages followed at most (a paginator that never ends cannot hang start-up).
MAX_PAGES = 100


class TransportLost(Exception):
    """The server went away (or stopped answering) while a call was in flight."""


@dataclass(slots=True)
class ListedTool:
    """A server's tool as listed (the SDK's ``Tool``, reduced to what we use)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool
    title: str | None = None


@dataclass(slots=True)
class ServerStatus:
    name: str
    state: str = "connecting"  # connecting | ready | failed | disabled
    transport: str = "stdio"
    tools: list[ListedTool] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    started_at: float = 0.0
    ready_ms: float | None = None
    reason: str | None = None
    log: Path | None = None
    protocol: str | None = None
    restarts: int = 0

    def line(self) -> str:
        if self.state == "ready":
            extra = f"; {len(self.dropped)} not advertised (over the cap of {MAX_TOOLS})" if self.dropped else ""
            return f"{self.name}: {len(self.tools)} tools in {self.ready_ms:.0f} ms ({self.protocol}){extra}"
        if self.state == "failed":
            log = f" (log: {self.log})" if self.log else ""
            return f"{self.name}: failed: {self.reason}{log}"
        return f"{self.name}: {self.state}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "state": self.state, "transport": self.transport,
                "tools": [t.name for t in self.tools], "dropped": list(self.dropped), "ready_ms": self.ready_ms,
                "reason": self.reason, "log": str(self.log) if self.log else None, "protocol": self.protocol,
                "restarts": self.restarts}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        if inner:
            return _reason(inner[0])
    text = str(exc).strip()
    name = type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"cannot start it: {exc.strerror or 'not found'}: {exc.filename or text}"
    return f"{name}: {text}" if text else name


class ServerConnection:
    def __init__(self, config: MCPServerConfig, log_dir: Path | None, environ: dict[str, str] | None = None,
                 target: Any = None) -> None:
        """``target`` replaces what the config says to connect to (tests pass an
        in-memory SDK server object)."""
        self.config = config
        self.environ = environ
        self.target = target
        transport = "memory" if target is not None else ("stdio" if config.command else config.transport)
        self.status = ServerStatus(config.name, transport=transport)
        self.log = ServerLog(log_dir / f"{config.name}.log") if log_dir is not None and config.command else None
        self.status.log = self.log.path if self.log else None
        self.client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._close = asyncio.Event()
        self._broken = False
        self._lock = asyncio.Lock()
        self.on_change: Callable[[ServerConnection], None] | None = None

    # -- connecting ------------------------------------------------------------

    def _target(self, errlog: TextIO | None) -> Any:
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        if self.target is not None:
            return self.target
        cfg, env = self.config, self.environ
        for secret in named_secrets(cfg, env):  # before the server can echo one
            register_secret(secret)
        if cfg.command:
            params = StdioServerParameters(
                command=expand(cfg.command, env), args=[expand(a, env) for a in cfg.args],
                env={k: expand(v, env) for k, v in cfg.env.items()} or None,
                cwd=expand(cfg.cwd, env) if cfg.cwd else None)
            return stdio_client(params, errlog=errlog) if errlog is not None else params
        import httpx2

        url = expand(cfg.url or "", env)
        headers = {k: expand(v, env) for k, v in cfg.headers.items()}
        if cfg.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(url, headers=headers)
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=cfg.tool_timeout + 5))
        return streamable_http_client(url, http_client=http)

    def start(self) -> None:
        """Begin connecting in the background (returns at once)."""
        if self._task is None or self._task.done():
            self._settled.clear()
            self._close.clear()
            self._task = asyncio.create_task(self._serve(), name=f"mcp:{self.config.name}")

    async def wait_settled(self) -> None:
        """Until the server is ready or failed (bounded by its start-up timeout)."""
        await self._settled.wait()

    def _changed(self) -> None:
        if self.on_change is not None:
            with contextlib.suppress(Exception):
                self.on_change(self)

    async def _serve(self) -> None:
        from mcp import Client

        status = self.status
        status.state, status.reason, status.started_at = "connecting", None, time.perf_counter()
        self._changed()
        errlog: TextIO | None = None
        try:
            try:
                errlog = self.log.open() if self.log is not None else None
                target = self._target(errlog)
            except MCPConfigError as exc:
                raise _StartFailed(str(exc)) from None
            client = Client(target, read_timeout_seconds=self.config.tool_timeout)
            async with asyncio.timeout(self.config.startup_timeout):
                await client.__aenter__()
        except BaseException as exc:
            if errlog is not None:
                errlog.close()
            if isinstance(exc, TimeoutError):
                self._fail(f"did not start within {self.config.startup_timeout:g} s (startup_timeout)")
            elif isinstance(exc, asyncio.CancelledError):
                self._fail("stopped before it was ready")
                raise
            else:
                self._fail(_reason(exc))
            return
        if errlog is not None:
            errlog.close()  # the child holds its own copy; ours would keep the log's pipe open forever
        try:
            try:
                async with asyncio.timeout(self.config.startup_timeout):
                    listed = await self._list(client)
            except BaseException as exc:
                if isinstance(exc, TimeoutError):
                    self._fail(f"connected, but tools/list did not answer within {self.config.startup_timeout:g} s")
                elif isinstance(exc, asyncio.CancelledError):
                    raise
                else:
                    self._fail(f"connected, but tools/list failed: {_reason(exc)}")
                return
            status.tools, status.dropped = listed
            status.protocol = client.protocol_version
            status.ready_ms = (time.perf_counter() - status.started_at) * 1000
            status.state = "ready"
            self.client = client
            self._broken = False
            self._settled.set()
            self._changed()
            await self._close.wait()
        finally:
            self.client = None
            with contextlib.suppress(BaseException):
                await client.__aexit__(None, None, None)

    def _fail(self, reason: str) -> None:
        status = self.status
        tail = self.log.tail() if self.log is not None else ""
        reason += f" — stderr: {tail.splitlines()[-1]}" if tail else ""
        status.state, status.reason = "failed", redact(reason)
        status.tools = []
        self.client = None
        self._settled.set()
        self._changed()

    async def _list(self, client: Any) -> tuple[list[ListedTool], list[str]]:
        tools: list[ListedTool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                hints = tool.annotations
                tools.append(ListedTool(
                    tool.name, tool.description or "", dict(tool.input_schema or {}),
                    read_only=bool(hints and hints.read_only_hint),
                    destructive=not (hints and hints.destructive_hint is False),
                    title=tool.title or (hints.title if hints else None)))
            cursor = page.next_cursor
            if not cursor:
                break
        wanted = [t for t in tools if self.config.allows(t.name)]
        return wanted[:MAX_TOOLS], [t.name for t in wanted[MAX_TOOLS:]]

    # -- calling ---------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], key: str, timeout: float | None = None) -> Any:
        """One ``tools/call`` with the idempotency key in ``_meta``. A transport
        death or a timeout raises ``TransportLost`` (the caller decides what
        that means: for a side effect, an unknown outcome). A server that died
        earlier is restarted once first."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if self._broken or self._closed_before_send():
            self._broken = True
            await self.restart()
        client = self.client
        if client is None:
            raise TransportLost(f"the {self.config.name} server is not connected"
                                + (f" ({self.status.reason})" if self.status.reason else ""))
        limit = timeout if timeout is not None else self.config.tool_timeout
        try:
            async with asyncio.timeout(limit):
                return await client.call_tool(tool, arguments, read_timeout_seconds=limit,
                                              meta={IDEMPOTENCY_META: key})
        except TimeoutError:
            raise TransportLost(f"no answer within {limit:g} s (tool_timeout)") from None
        except MCPError as exc:
            if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
                self._mark_broken(str(exc))
                raise TransportLost(f"the {self.config.name} server went away during the call: {exc}") from None
            raise
        except (OSError, EOFError) as exc:
            self._mark_broken(_reason(exc))
            raise TransportLost(f"the {self.config.name} server went away during the call: {_reason(exc)}") from None
        except Exception as exc:
            if type(exc).__module__.startswith(("anyio", "httpx")):
                self._mark_broken(_reason(exc))
                raise TransportLost(f"the {self.config.name} server went away during the call: "
                                    f"{_reason(exc)}") from None
            raise

    def _closed_before_send(self) -> bool:
        """The connection closed while no call was in flight (the child died
        between calls): the call we are about to make was never sent, so a
        restart is safe. The SDK has no public flag for it; its dispatcher's
        ``_closed`` is what its own sends check."""
        client = self.client
        if client is None:
            return False
        session = getattr(client, "_session", None)
        return bool(getattr(getattr(session, "_dispatcher", None), "_closed", False))

    def _mark_broken(self, reason: str) -> None:
        self._broken = True
        self.status.state, self.status.reason = "failed", redact(f"crashed: {reason}; restarted on the next call")
        self._changed()

    async def restart(self) -> None:
        async with self._lock:
            if not self._broken and self.client is not None:
                return
            self.status.restarts += 1
            await self.close()
            self.start()
            await self.wait_settled()

    async def close(self) -> None:
        self._close.set()
        task, self._task = self._task, None
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 5)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            except BaseException:
                pass


class _StartFailed(Exception):
    pass


class MCPHub:
    """Every configured server, started together."""

    def __init__(self, servers: list[ServerConnection]) -> None:
        self.servers = servers
        self.listeners: list[Callable[[ServerConnection], None]] = []
        for server in servers:
            server.on_change = self._changed

    def _changed(self, server: ServerConnection) -> None:
        for listener in list(self.listeners):
            listener(server)

    def start(self) -> None:
        for server in self.servers:
            if server.config.enabled:
                server.start()
            else:
                server.status.state = "disabled"
                server._settled.set()

    async def wait_settled(self) -> None:
        await asyncio.gather(*(s.wait_settled() for s in self.servers))

    def statuses(self) -> list[ServerStatus]:
        return [s.status for s in self.servers]

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.servers), return_exceptions=True)
