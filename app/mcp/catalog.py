"""What each MCP server offers besides tools: its resources, resource templates and prompts.

Listed when a server is ready (following ``nextCursor``), and again when it says a list changed
(``notifications/resources/list_changed``, ``notifications/prompts/list_changed``, or their
``subscriptions/listen`` events: ``ServerConnection.notices``). The lists are what the composer
completes ``@server:uri`` from, what ``/resource`` and ``mcp resources`` show, and what the
prompts' slash commands are made of; each is read where it is needed, so a list that changes is
in force at the next key press. A ``notifications/resources/updated`` goes to ``updates``
(a card showing that resource reads it again).

One ``Catalog`` per hub (``catalog_of``), made before the hub starts so no server's first
listing is missed. Everything here is from the server: shown through ``inert``, never trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..stream.redact import redact
from .servers import MAX_PAGES, MCPHub, ServerConnection

__all__ = ["Catalog", "catalog_of", "Resource", "Template", "Prompt", "PromptArgument", "Offered", "MAX_ENTRIES"]

#: Entries kept per list and server (a server listing more cannot fill the memory or the menus).
MAX_ENTRIES = 1000


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class Template:
    uri_template: str
    name: str
    description: str = ""
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    title: str = ""
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(slots=True)
class Offered:
    """One server's lists as last listed (empty before, and after it failed)."""

    resources: list[Resource] = field(default_factory=list)
    templates: list[Template] = field(default_factory=list)
    prompts: list[Prompt] = field(default_factory=list)
    #: Why a list could not be had (one line), or None.
    problem: str | None = None


def _capability(server: ServerConnection, name: str) -> Any:
    client = server.client
    capabilities = getattr(client, "server_capabilities", None) if client is not None else None
    return getattr(capabilities, name, None)


class Catalog:
    def __init__(self, hub: MCPHub) -> None:
        self.hub = hub
        self.offered: dict[str, Offered] = {s.config.name: Offered() for s in hub.servers}
        #: Called after any list changed (the prompts' slash commands are made again).
        self.listeners: list[Callable[[], None]] = []
        #: Called with (server, uri) when a subscribed resource changed.
        self.updates: list[Callable[[str, str], None]] = []
        self._clients: dict[str, Any] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._watching: set[asyncio.Task[None]] = set()
        hub.listeners.append(self._changed)
        for server in hub.servers:
            server.notices.append(functools.partial(self._notice, server))

    # -- what is offered -------------------------------------------------------------

    def server(self, name: str) -> ServerConnection | None:
        return next((s for s in self.hub.servers if s.config.name == name and s.client is not None), None)

    def has_resources(self, server: ServerConnection) -> bool:
        return server.client is not None and _capability(server, "resources") is not None

    def subscribable(self, server: ServerConnection) -> bool:
        return bool(getattr(_capability(server, "resources"), "subscribe", False))

    def completes(self, server: ServerConnection) -> bool:
        return _capability(server, "completions") is not None

    def with_resources(self) -> list[str]:
        return [s.config.name for s in self.hub.servers if self.has_resources(s)]

    def prompts(self) -> list[tuple[str, Prompt]]:
        return [(name, prompt) for name, offered in self.offered.items() for prompt in offered.prompts]

    # -- listing -------------------------------------------------------------------------

    def _changed(self, server: ServerConnection) -> None:
        name, client = server.config.name, server.client
        if server.status.state != "ready" or client is None:
            if self._clients.pop(name, None) is not None:
                self.offered[name] = Offered()
                self._tell()
            return
        if self._clients.get(name) is not client:  # a new connection (a start or a restart): list it all
            self._clients[name] = client
            self._schedule(server, resources=True, prompts=True)

    def _notice(self, server: ServerConnection, method: str, params: Any) -> None:
        if method == "notifications/resources/list_changed":
            self._schedule(server, resources=True, prompts=False)
        elif method == "notifications/prompts/list_changed":
            self._schedule(server, resources=False, prompts=True)
        elif method == "notifications/resources/updated":
            uri = getattr(params, "uri", None)
            for listener in list(self.updates):
                with contextlib.suppress(Exception):
                    listener(server.config.name, str(uri))

    def _schedule(self, server: ServerConnection, *, resources: bool, prompts: bool) -> None:
        task = asyncio.create_task(self._list(server, resources, prompts), name=f"mcp:{server.config.name}:catalog")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def watch(self, server: ServerConnection, uri: str) -> bool:
        """On a 2026-07-28 connection, a ``subscriptions/listen`` stream for ``uri`` for the connection's
        life (its ``ResourceUpdated`` events reach ``updates``), open once this returns True; False on
        an earlier era (``resources.subscribe`` asks those) or when the server refused it."""
        client = server.client
        if client is None or getattr(client, "protocol_version", None) != "2026-07-28":
            return False
        opened = asyncio.Event()

        async def listen() -> None:
            with contextlib.suppress(Exception):  # the stream ends with the connection, or was refused
                async with client.listen(resource_subscriptions=[uri]) as subscription:
                    opened.set()
                    async for event in subscription:
                        self._notice(server, "notifications/resources/updated", event)

        task = asyncio.create_task(listen(), name=f"mcp:{server.config.name}:watch")
        self._watching.add(task)
        task.add_done_callback(self._watching.discard)
        waiting = asyncio.create_task(opened.wait())
        await asyncio.wait([task, waiting], timeout=server.config.tool_timeout, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        return opened.is_set()

    async def settled(self) -> None:
        """Until every listing begun has ended (tests, ``mcp resources``)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _list(self, server: ServerConnection, resources: bool, prompts: bool) -> None:
        client, offered = server.client, self.offered.setdefault(server.config.name, Offered())
        if client is None:
            return
        wanted: list[tuple[str, str, Callable[..., Any], Callable[[Any], Any]]] = []
        if resources and _capability(server, "resources") is not None:
            wanted += [("resources", "resources", client.list_resources,
                        lambda r: Resource(str(r.uri), r.name, r.description or "", r.mime_type)),
                       ("templates", "resource_templates", client.list_resource_templates,
                        lambda t: Template(t.uri_template, t.name, t.description or "", t.mime_type))]
        if prompts and _capability(server, "prompts") is not None:
            wanted.append(("prompts", "prompts", client.list_prompts, _prompt))
        problems: list[str] = []
        for kept, attribute, fetch, make in wanted:  # each list alone: a server without templates still has resources
            try:
                async with asyncio.timeout(server.config.startup_timeout):
                    setattr(offered, kept, [make(item) for item in await _pages(fetch, attribute)])
            except Exception as exc:  # a list that cannot be had offers nothing of it, and says why
                setattr(offered, kept, [])
                if kept != "templates":  # templates/list is optional beside resources/list
                    problems.append(f"listing its {kept} failed: {exc}")
        offered.problem = redact(" ".join("; ".join(problems).split())) or None
        self._tell()

    def _tell(self) -> None:
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):
                listener()


def _prompt(prompt: Any) -> Prompt:
    arguments = tuple(PromptArgument(a.name, a.description or "", bool(a.required)) for a in prompt.arguments or [])
    return Prompt(prompt.name, prompt.title or "", prompt.description or "", arguments)


async def _pages(fetch: Callable[..., Any], attribute: str) -> list[Any]:
    """Every page of a list (``cache_mode="refresh"``: a re-list after a change is never served stale)."""
    found: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor=cursor, cache_mode="refresh")
        found.extend(getattr(page, attribute) or [])
        cursor = page.next_cursor
        if not cursor or len(found) >= MAX_ENTRIES:
            break
    return found[:MAX_ENTRIES]


_CATALOGS: weakref.WeakKeyDictionary[MCPHub, Catalog] = weakref.WeakKeyDictionary()


def catalog_of(hub: MCPHub) -> Catalog:
    """The hub's one catalog (made on first use; make it before the hub starts)."""
    found = _CATALOGS.get(hub)
    if found is None:
        found = _CATALOGS[hub] = Catalog(hub)
    return found
