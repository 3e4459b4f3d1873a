"""What the MCP servers add to the composer, beside their tools: their prompts as slash commands,
``@server:uri`` resources, and ``/resource``.

- Each prompt a server lists is ``/server:prompt`` in the screen's command table (so ``/help``,
  the hint and Tab know it), made again whenever the catalog lists anew (``prompts/list_changed``).
  Running one asks the server for its messages and shows them — a note on the transcript, the
  text in the input box, its images and resources as the next message's attachments — so the
  person reads (and may edit) what will be sent and sends it with Enter, or clears the box.
- ``@server:uri`` in a message attaches that resource when the message is sent (read then, with
  the attachments' checks: ``mcp.resources.as_attachments``); Tab completes the URI from the
  server's resources, and a template's last variable from ``completion/complete``.
- ``/resource`` lists the resources; ``/resource server:uri`` attaches one; ``/resource open``
  reads the resources the last card with links names and shows each on that card (inert), again
  when a subscribed one changes.

Everything shown from a server goes through ``inert``.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Callable, Coroutine
from dataclasses import replace
from os.path import commonprefix
from typing import TYPE_CHECKING, Any

from ..mcp.catalog import Catalog, Prompt, catalog_of
from ..stream.inert import inert
from ..stream.resource_lines import resource_refs
from .slash import CommandTable, SlashCommand

if TYPE_CHECKING:
    from ..mcp.servers import MCPHub
    from ..stream import ToolCallBlock
    from ..stream.attachments import Attachment
    from .context import SlashContext

__all__ = ["McpCommands", "MENTION"]

#: ``@server:uri`` where a word starts (an e-mail address is not one: its ``@`` follows a letter).
MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_-]{1,40}):(\S+)")
#: Lines of a resource shown on a card (the rest: ``mcp read``).
SHOWN_LINES = 40
_TEMPLATE_VARIABLE = re.compile(r"\{([^}]+)\}")


class McpCommands:
    def __init__(self, table: CommandTable, hub: MCPHub) -> None:
        self.table = table
        self.catalog: Catalog = catalog_of(hub)
        self._prompt_names: list[str] = []
        #: Resources shown on cards, by (server, uri): the calls whose cards show them.
        self.opened: dict[tuple[str, str], list[ToolCallBlock]] = {}
        self._show: Callable[[ToolCallBlock, str, str], None] | None = None
        #: Where a server-side completion lands (the input box's text setter, given by the screen).
        self.set_text: Callable[[str, str], None] | None = None
        table.add(SlashCommand("resource", "[server:uri | open]", "MCP resources: list them; attach one to your "
                               "next message (or type @server:uri); open those the last card links to", self._resource))
        self.catalog.listeners.append(self.sync_prompts)
        self.catalog.updates.append(self._updated)
        self.sync_prompts()

    def close(self) -> None:
        """The screen is gone (``/new``): the catalog stops telling this one (nor keeps it alive)."""
        with contextlib.suppress(ValueError):
            self.catalog.listeners.remove(self.sync_prompts)
        with contextlib.suppress(ValueError):
            self.catalog.updates.remove(self._updated)

    # -- prompts as commands -----------------------------------------------------------

    def sync_prompts(self) -> None:
        from ..mcp.prompts import usage

        for name in self._prompt_names:
            self.table.remove(name)
        self._prompt_names = []
        for server, prompt in self.catalog.prompts():
            name = f"{server}:{prompt.name}"
            if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", prompt.name) or name in self.table:
                continue  # a name a command line cannot hold, or one already taken: not offered
            words = usage(server, prompt).split(" ", 1)
            about = inert(prompt.description or prompt.title or "a prompt")[:120]
            self.table.add(SlashCommand(name, words[1] if len(words) > 1 else "", f"{about} (from {server})",
                                        self._prompt_handler(server, prompt)))
            self._prompt_names.append(name)

    def _prompt_handler(self, server: str, prompt: Prompt) -> Callable[[SlashContext, str], Any]:
        async def run(context: SlashContext, argument: str) -> None:
            from ..mcp.prompts import PromptError, expand, parse_arguments

            try:
                expanded = await expand(self.catalog, server, prompt, parse_arguments(server, prompt, argument))
            except PromptError as exc:
                context.note(inert(str(exc)), "error")
                return
            for item in expanded.attachments:
                context.attach(item)
            shown = "\n\n".join(f"[{role}] {inert(text)}" for role, text in expanded.messages)
            attached = f" and {len(expanded.attachments)} attachment(s)" if expanded.attachments else ""
            context.note(f"/{server}:{prompt.name} expanded to {len(expanded.messages)} message(s){attached}; "
                         f"they are in the input box: Enter sends them, or edit or clear it.\n{shown}")
            context.propose(inert(expanded.text()))

        return run

    # -- @server:uri ---------------------------------------------------------------------

    def mentions(self, text: str) -> list[tuple[str, str]]:
        """The ``@server:uri`` of ``text`` naming a server with resources, each once."""
        servers = set(self.catalog.with_resources())
        return list(dict.fromkeys((m.group(1), _unpunctuated(m.group(2))) for m in MENTION.finditer(text)
                                  if m.group(1) in servers))

    async def read_mentions(self, text: str) -> list[Attachment]:
        """The attachments ``text``'s mentions name (raises ``ResourceError`` for one that cannot be read)."""
        from ..mcp.resources import as_attachments, read

        items: list[Attachment] = []
        for server, uri in self.mentions(text):
            items += as_attachments(await read(self.catalog, server, uri))
        return items

    async def prepare(self, text: str) -> list[Attachment] | str:
        """What a message's mentions attach, or why it is not sent (``Exchanges.prepare``)."""
        from ..mcp.resources import ResourceError

        if not self.mentions(text):
            return []
        try:
            return await self.read_mentions(text)
        except ResourceError as exc:
            return f"Not sent: {inert(str(exc))}. Your message is back in the input box."

    def complete(self, text: str) -> str | None:
        """Tab after ``@ser`` or ``@server:ur``: the one server or resource URI it is the start of,
        else the common start of several. After a template's variable (``…/text/1``), the
        server's suggestion arrives later (``set_text``)."""
        match = re.search(r"(?<!\S)@([A-Za-z0-9_-]*)(?::(\S*))?$", text)
        if match is None:
            self._complete_prompt_argument(text)
            return None
        head = text[:match.start()]
        server, typed = match.group(1), match.group(2)
        if typed is None:
            names = [n for n in self.catalog.with_resources() if n.startswith(server)]
            common = commonprefix(names)
            return f"{head}@{names[0]}:" if len(names) == 1 else (
                f"{head}@{common}" if common and len(common) > len(server) else None)
        offered = self.catalog.offered.get(server)
        if offered is None:
            return None
        uris = [r.uri for r in offered.resources if r.uri.startswith(typed)]
        uris += [t.uri_template.split("{", 1)[0] for t in offered.templates
                 if t.uri_template.split("{", 1)[0].startswith(typed) and t.uri_template.split("{", 1)[0] != typed]
        uris = list(dict.fromkeys(uris))
        common = commonprefix(uris)
        if common and len(common) > len(typed):
            return f"{head}@{server}:{common}"
        self._complete_template(text, head, server, typed)
        return None

    def _complete_prompt_argument(self, text: str) -> None:
        """``/server:prompt … name=Par`` + Tab: the server's suggestion for that argument (given the
        ones typed before it), where it offers completion; it arrives later (``set_text``)."""
        from mcp_types import PromptReference

        from ..mcp.prompts import PromptError, parse_arguments
        from ..mcp.resources import complete

        match = re.fullmatch(r"/([A-Za-z0-9_-]{1,40}):(\S+) (.*?)(\S*)", text, re.S)
        found = next((p for s, p in self.catalog.prompts() if match and (s, p.name) == match.group(1, 2)), None)
        if match is None or found is None or self.set_text is None:
            return
        server, before, word = match.group(1), match.group(3), match.group(4)
        name, equals, value = word.partition("=")
        try:
            context = parse_arguments(server, replace(found, arguments=tuple(
                replace(a, required=False) for a in found.arguments)), before)
        except PromptError:
            return
        if not equals:  # by position: the first argument not yet given
            name, value = next((a.name for a in found.arguments if a.name not in context), ""), word
        if not name:
            return
        head = text[:len(text) - len(word)] + (f"{name}=" if equals else "")

        async def ask(set_text: Callable[[str, str], None] = self.set_text) -> None:
            values = await complete(self.catalog, server, PromptReference(name=found.name), name, value, context)
            common = commonprefix(values)
            if common and len(common) >= len(value):
                set_text(text, head + (shlex.quote(common) if len(values) == 1 else common))

        self._spawn(ask())

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        with contextlib.suppress(RuntimeError):
            import asyncio

            task = asyncio.get_running_loop().create_task(work)
            _TASKS.add(task)
            task.add_done_callback(_TASKS.discard)

    def _complete_template(self, text: str, head: str, server: str, typed: str) -> None:
        """Ask the server to complete a template's variable (the one after the template's fixed start)."""
        from mcp_types import ResourceTemplateReference

        from ..mcp.resources import complete

        offered = self.catalog.offered.get(server)
        for template in offered.templates if offered is not None else []:
            start = template.uri_template.split("{", 1)[0]
            variables = _TEMPLATE_VARIABLE.findall(template.uri_template)
            if not typed.startswith(start) or not variables or self.set_text is None:
                continue
            value = typed[len(start):]

            async def ask(template_uri: str = template.uri_template, variable: str = variables[0],
                          value: str = value, start: str = start,
                          set_text: Callable[[str, str], None] = self.set_text) -> None:
                values = await complete(self.catalog, server, ResourceTemplateReference(uri=template_uri),
                                        variable, value)
                common = commonprefix(values)
                if common and len(common) >= len(value):
                    set_text(text, f"{head}@{server}:{start}{common}")

            self._spawn(ask())
            return

    # -- /resource -------------------------------------------------------------------------

    async def _resource(self, context: SlashContext, argument: str) -> None:
        from ..mcp.resources import ResourceError, as_attachments, read
        from ..stream.attachments import describe

        argument = argument.strip()
        if not argument:
            context.note(self._listing())
            return
        if argument == "open":
            await self._open(context)
            return
        match = re.fullmatch(r"@?([A-Za-z0-9_-]{1,40}):(\S+)", argument) or re.fullmatch(
            r"([A-Za-z0-9_-]{1,40})\s+(\S+)", argument)
        if match is None:
            context.note("Usage: /resource, /resource server:uri (or @server:uri in a message), /resource open",
                         "warning")
            return
        try:
            items = as_attachments(await read(self.catalog, match.group(1), match.group(2)))
        except ResourceError as exc:
            context.note(inert(str(exc)), "error")
            return
        for item in items:
            context.attach(item)
        context.note(f"Attached {inert(', '.join(describe(i) for i in items))}: it goes with your next message.")

    def _listing(self) -> str:
        lines: list[str] = []
        for name, offered in self.catalog.offered.items():
            for resource in offered.resources:
                lines.append(f"@{name}:{resource.uri}  {resource.name}")
            for template in offered.templates:
                lines.append(f"@{name}:{template.uri_template}  (template) {template.name}")
            if offered.problem:
                lines.append(f"{name}: {offered.problem}")
        waiting = [s.config.name for s in self.catalog.hub.servers if s.status.state == "connecting"]
        later = f"Still connecting: {', '.join(waiting)} (/resource again lists theirs)." if waiting else ""
        if not lines:
            return later or "No connected MCP server offers resources."
        return ("Resources (@server:uri in a message attaches one; Tab completes):\n" + inert("\n".join(lines))
                + (f"\n{later}" if later else ""))

    async def _open(self, context: SlashContext) -> None:
        from ..mcp.resources import subscribe

        for call in reversed(context.calls()):
            links = resource_refs(call.result or "") if call.state == "ran" else []
            if links:
                break
        else:
            context.note("No card shown links to a resource.", "warning")
            return
        server = str((call.arguments or {}).get("server", "")) if "__" not in call.name else call.name.split("__")[0]
        self._show = context.show_resource
        for uri in links:
            self.opened.setdefault((server, uri), []).append(call)
            await self._read_onto(server, uri)
            await subscribe(self.catalog, server, uri)

    async def _read_onto(self, server: str, uri: str) -> None:
        from ..mcp.resources import ResourceError, as_text, read

        try:
            text = as_text(await read(self.catalog, server, uri), 64 * 1024)
        except ResourceError as exc:
            text = f"cannot be read: {exc}"
        lines = text.splitlines()
        shown = "\n".join(lines[:SHOWN_LINES]) + (f"\n… {len(lines) - SHOWN_LINES} more lines (callstream mcp read "
                                                  f"{server} {uri})" if len(lines) > SHOWN_LINES else "")
        for call in self.opened.get((server, uri), []):
            if self._show is not None:
                self._show(call, uri, inert(shown))

    def _updated(self, server: str, uri: str) -> None:
        """A subscribed resource changed: the cards that show it read it again."""
        if (server, uri) not in self.opened:
            return
        self._spawn(self._read_onto(server, uri))


_TASKS: set[Any] = set()


def _unpunctuated(uri: str) -> str:
    """A mention's URI without the sentence's punctuation after it ("… @ev:a://b." names a://b)."""
    return uri.rstrip(".,;:!?)]}'\"") or uri
