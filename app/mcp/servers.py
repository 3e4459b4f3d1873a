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
from pathlib import Path
from typing import Any, TextIO

from ..settings.mcp import MCPConfigError, MCPServerConfig, expand, named_secrets
from ..stream.dialects.schemas import inline_problem
from ..stream.limits import DEFAULT_LIMITS
from ..stream.redact import redact, register_secret
from ..tools.base import NotSent
from .capabilities import client_options, unsupported
from .elicitation import Asker, Elicit
from .logs import ServerLog, quiet_sdk
from .notifications import ServerMessages
from .sampling import Sample, Sampler
from .status import MAX_TOOLS, ListedTool, ServerStatus
from .wire import UNREADABLE

__all__ = ["ServerConnection", "ServerStatus", "MCPHub", "TransportLost", "ListedTool", "MAX_TOOLS", "IDEMPOTENCY_META"]

#: The ``_meta`` key that carries a call's idempotency key downstream.
IDEMPOTENCY_META = "callstream/idempotency-key"
#: tools/list pages followed at most (a paginator that never ends cannot hang start-up).
MAX_PAGES = 100


class TransportLost(Exception):
    """The call was sent but its answer was lost: the server went away or
    stopped answering mid-call, a gateway answered 5xx, or the answer could
    not be read. For a side effect the server may have acted."""


def _reason(exc: BaseException) -> str:
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):  # the server's own words (or the wire's: an answer too deep to read)
        return exc.message or f"error {exc.code}"
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        if inner:
            return _reason(inner[0])
    text = str(exc).strip()
    if text and getattr(exc, "stated", False):  # its words are already the sentence (auth.SignInNeeded)
        return text
    name = type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"cannot start it: {exc.strerror or 'not found'}: {exc.filename or text}"
    return f"{name}: {text}" if text else name


class ServerConnection:
    def __init__(self, config: MCPServerConfig, log_dir: Path | None, environ: dict[str, str] | None = None,
                 target: Any = None, output_limit: int = DEFAULT_LIMITS.tool_output_bytes) -> None:
        """``target`` replaces what the config says to connect to (tests pass an
        in-memory SDK server object). ``output_limit``: ``[limits]
        tool_output_bytes``, what one result may bring (the rest is cut)."""
        self.config = config
        self.output_limit = output_limit
        #: What a stdio server printed on stdout that is not JSON-RPC (it ends the connection).
        self.stray: str | None = None
        #: HTTP status of each call (by idempotency key) a server answered with a 5xx.
        self.http_statuses: dict[str, int] = {}
        self._stale = False
        self._relisting: asyncio.Task[None] | None = None
        self.environ = environ
        self.target = target
        transport = "memory" if target is not None else ("stdio" if config.command else config.transport)
        self.status = ServerStatus(config.name, transport=transport)
        self.log = ServerLog(log_dir / f"{config.name}.log") if log_dir is not None and config.command else None
        quiet_sdk(log_dir)
        self.status.log = self.log.path if self.log else None
        #: Its log messages (``notifications/message``): the log file and the /mcp panel.
        self.messages = ServerMessages(config.log_level,
                                       log_dir / f"{config.name}.log" if log_dir is not None else None)
        self.status.messages = self.messages.lines
        #: Its requests for the person (``elicitation/create``), to the call in flight.
        self.asker = Asker(config.name)
        #: Its requests to the model (``sampling/createMessage``), to the call in flight.
        self.sampler = Sampler(config.name, config.sampling)
        self.client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._close = asyncio.Event()
        self._broken = False
        self._lock = asyncio.Lock()
        self.on_change: Callable[[ServerConnection], None] | None = None
        #: Told of every other notification, as (method, params): resources and prompts re-list (``catalog``).
        self.notices: list[Callable[[str, Any], None]] = []
        #: OAuth (app/mcp/auth.py): who signs in when the server asks (None: nobody; it fails saying so), the provider.
        self.sign_in: Any = None
        self.auth: Any = None

    # -- connecting ------------------------------------------------------------

    def _target(self, errlog: TextIO | None) -> Any:
        import sys

        from mcp.client.stdio import StdioServerParameters
        from mcp.client.streamable_http import streamable_http_client

        from .transports import bounded_http, bounded_stdio

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
            return bounded_stdio(params, errlog if errlog is not None else sys.stderr, self.output_limit,
                                 self._on_stray)
        url = expand(cfg.url or "", env)
        headers = {k: expand(v, env) for k, v in cfg.headers.items()}
        if cfg.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(url, headers=headers)
        http = bounded_http(headers, cfg.tool_timeout + 5, self.output_limit, self.http_statuses)
        if not any(k.lower() == "authorization" for k in headers):  # a static token in headers is the config's choice
            from .auth import auth_provider

            self.auth = http.auth = auth_provider(cfg, self.sign_in, env)
        return streamable_http_client(url, http_client=http)

    def _on_stray(self, line: str) -> None:
        self.stray = line

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
        self.stray = None
        self._changed()
        errlog: TextIO | None = None
        try:
            try:
                errlog = self.log.open() if self.log is not None else None
                target = self._target(errlog)
            except MCPConfigError as exc:
                raise _StartFailed(str(exc)) from None
            # no read timeout of the SDK's: a call's own is ours (a server's error -32001 is the server's)
            client = Client(target, message_handler=self._on_message, **client_options(self))
            async with asyncio.timeout(self.config.startup_timeout):
                await client.__aenter__()
        except BaseException as exc:
            if errlog is not None:
                errlog.close()
            if self.stray is not None:
                self._fail(_stray_words(self.stray))
            elif isinstance(exc, TimeoutError):
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
                if self.stray is not None:
                    self._fail(_stray_words(self.stray))
                elif isinstance(exc, TimeoutError):
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
            listening = asyncio.create_task(self._listen(client), name=f"mcp:{self.config.name}:listen")
            try:
                await self._close.wait()
            finally:
                listening.cancel()
                with contextlib.suppress(BaseException):
                    await listening
        finally:
            self.client = None
            with contextlib.suppress(BaseException):
                await client.__aexit__(None, None, None)

    def _fail(self, reason: str) -> None:
        status = self.status
        tail = self.log.tail() if self.log is not None else ""
        reason += f" — stderr: {tail.splitlines()[-1]}" if tail else ""
        reason = " ".join(reason.split())  # one line, whatever the server printed
        status.state, status.reason = "failed", redact(reason)
        status.tools = []
        self.client = None
        self._settled.set()
        self._changed()

    async def _on_message(self, message: Any) -> None:
        """The SDK's message handler: a ``notifications/tools/list_changed``
        marks the tools stale and lists them again (the calls made meanwhile
        wait for it: ``current``)."""
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed":
            self._tools_changed()
        elif isinstance(method, str):
            self._notice(method, getattr(message, "params", None))

    def _notice(self, method: str, params: Any) -> None:
        for listener in list(self.notices):
            with contextlib.suppress(Exception):
                listener(method, params)

    def _tools_changed(self) -> None:
        self._stale = True
        if self._relisting is None or self._relisting.done():
            self._relisting = asyncio.create_task(self._relist(), name=f"mcp:{self.config.name}:relist")

    async def _listen(self, client: Any) -> None:
        """On a 2026-07-28 connection a server tells of changed tools only on a
        ``subscriptions/listen`` stream: open one for the connection's life
        (an earlier era sends the notification unasked: nothing to open)."""
        try:
            async with client.listen(tools_list_changed=True, prompts_list_changed=True,
                                     resources_list_changed=True) as subscription:
                async for event in subscription:
                    method = _EVENT_METHODS.get(type(event).__name__, "notifications/tools/list_changed")
                    if method == "notifications/tools/list_changed":
                        self._tools_changed()
                    else:
                        self._notice(method, event)
        except Exception:  # not offered (an earlier era, no listen handler) or the stream ended: notifications only
            return

    async def _relist(self) -> None:
        """List the tools again until no change is pending: new ones are
        offered, removed ones retired, changed hints judged from now on. A
        list that fails offers none (what they are now cannot be known)."""
        while self._stale and self.client is not None:
            self._stale = False
            try:
                async with asyncio.timeout(self.config.startup_timeout):
                    listed = await self._list(self.client)
            except Exception as exc:
                listed = ([], [])
                self.status.reason = redact(f"its tools changed, and listing them again failed: {_reason(exc)}; "
                                            "none are offered")
            else:
                self.status.reason = None
            self.status.tools, self.status.dropped = listed
            self._changed()

    async def current(self) -> None:
        """Until a tool list the server said changed has been listed again."""
        task = self._relisting
        if task is not None and not task.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(task)

    async def _list(self, client: Any) -> tuple[list[ListedTool], list[str]]:
        tools: list[ListedTool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                hints = tool.annotations
                schema = dict(tool.input_schema or {})
                tools.append(ListedTool(
                    tool.name, tool.description or "", schema,
                    read_only=bool(hints and hints.read_only_hint),
                    destructive=not (hints and hints.destructive_hint is False),
                    title=tool.title or (hints.title if hints else None), note=inline_problem(schema),
                    unsupported=unsupported(tool)))
            cursor = page.next_cursor
            if not cursor:
                break
        wanted = [t for t in tools if self.config.allows(t.name)]
        self.status.refused = {}  # judged anew by whoever offers them (``tools.attach_servers``)
        return wanted[:MAX_TOOLS], [t.name for t in wanted[MAX_TOOLS:]]

    # -- calling ---------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], key: str, timeout: float | None = None,
                   progress: Any = None, elicit: Elicit | None = None, sample: Sample | None = None) -> Any:
        """One ``tools/call`` with the idempotency key in ``_meta``. A transport
        death or a timeout raises ``TransportLost`` (the caller decides what
        that means: for a side effect, an unknown outcome). A server that died
        earlier is restarted once first. ``progress`` (the SDK's async
        ``(progress, total, message)`` callback) sends a progress token with
        the call and hears the server's reports; ``elicit`` answers its
        requests for the person meanwhile, ``sample`` its requests to the model."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, INTERNAL_ERROR, PARSE_ERROR
        from pydantic import ValidationError

        name = self.config.name
        if self._broken or self._closed_before_send():
            self._broken = True
            await self.restart()
        client = self.client
        if client is None:  # it was never sent: nothing can have happened
            raise NotSent(f"the {name} server is not running, so the call was never sent"
                          + (f" ({self.status.reason})" if self.status.reason else ""))
        limit = timeout if timeout is not None else self.config.tool_timeout
        try:
            async with asyncio.timeout(limit):
                with self.asker.during(elicit), self.sampler.during(sample):
                    return await client.call_tool(tool, arguments, meta={IDEMPOTENCY_META: key},
                                                  progress_callback=progress)
        except TimeoutError:
            raise TransportLost(f"no answer within {limit:g} s (tool_timeout)") from None
        except MCPError as exc:
            status = self.http_statuses.pop(key, None)
            data = exc.data if isinstance(exc.data, dict) else {}
            if UNREADABLE in data:
                raise TransportLost(f"the {name} server answered, but {exc.message}") from None
            if exc.code == PARSE_ERROR and exc.message.startswith(_SDK_PARSE_ERROR):
                raise TransportLost(f"the {name} server answered, but not with JSON-RPC callstream can read") from None
            if status is not None and exc.code == INTERNAL_ERROR and exc.message == _SDK_HTTP_ERROR:
                raise TransportLost(f"the {name} server answered HTTP {status} with no result") from None
            if exc.code == CONNECTION_CLOSED and self._closed_before_send():  # the SDK's, not the server's
                self._mark_broken(str(exc))
                raise TransportLost(f"the {name} server went away during the call: {exc}") from None
            if getattr(self.auth, "asked", False):  # its 401 and nobody to sign in (app/mcp/auth.py)
                raise NotSent(self.auth.needed()) from None
            raise  # the server's own error answer: a failed call, in its words
        except ValidationError as exc:
            errors = exc.errors()
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
            why = f" ({where or 'result'}: {errors[0]['msg']})" if errors else ""
            raise TransportLost(f"the {name} server answered with a result callstream cannot read{why}") from None
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


#: A ``subscriptions/listen`` event as the notification an earlier era sends for it.
_EVENT_METHODS = {"PromptsListChanged": "notifications/prompts/list_changed",
                  "ResourcesListChanged": "notifications/resources/list_changed",
                  "ResourceUpdated": "notifications/resources/updated"}


class _StartFailed(Exception):
    pass


#: What the SDK's Streamable HTTP client says for an HTTP error status with no JSON-RPC error in the body.
_SDK_HTTP_ERROR = "Server returned an error response"
#: What it says for an answer whose body it could not parse (the server may have acted first).
_SDK_PARSE_ERROR = "Failed to parse JSON response"


def _stray_words(line: str) -> str:
    """Why a stdio server that wrote something other than JSON-RPC on stdout failed."""
    shown = line if len(line) <= 80 else line[:79] + "…"
    return (f"it printed {shown!r} on stdout, where a stdio MCP server may write only JSON-RPC messages "
            "(a banner or a log line belongs on stderr)")


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
