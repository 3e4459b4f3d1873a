"""Slash commands: one table, handled by the client, never sent to the model.

Each command is one ``SlashCommand``: its name, what its argument looks like,
one line of help, and a handler taking a ``SlashContext`` (what a command may
touch: the session, the runtime, a note, the clipboard, …) and the rest of
the line. The table is built explicitly where the chat screen is built
(``commands.builtin_commands``); nothing registers itself on import. ``/help``
and Tab completion are generated from the table, so a command added to it
appears in both. ``/demo …`` is not a command: it is the demo model's, and
goes to the model like any prompt.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .context import SlashContext

__all__ = ["SlashCommand", "CommandTable", "Handler", "parse", "PASS_THROUGH"]

Handler = Callable[["SlashContext", str], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    #: How the argument looks in /help ("" when it takes none).
    usage: str
    help: str
    handler: Handler
    #: Refused while a turn runs (switching the provider under a stream, …).
    idle_only: bool = False
    #: Tab on the argument: what is typed → it completed, or None (``/attach``: a path).
    complete_argument: Callable[[str], str | None] | None = None


#: Words that look like commands but belong to the model (the demo's scenarios).
PASS_THROUGH = frozenset({"demo"})

#: A command's word: a built-in's (``model``), or an MCP prompt's ``server:prompt`` (``app/tui/mcp_commands.py``).
_WORD = re.compile(r"^/([a-z][a-z0-9-]*|[A-Za-z0-9_-]{1,40}:[A-Za-z0-9_.-]{1,64})(?:\s+(.*))?$", re.S)


def parse(text: str) -> tuple[str, str] | None:
    """``("model", "gpt-4o")`` for ``/model gpt-4o``; None for a prompt (not a
    slash word, a path such as ``/etc/hosts``, or the demo's ``/demo …``)."""
    match = _WORD.match(text.strip())
    if match is None or match.group(1) in PASS_THROUGH:
        return None
    return match.group(1), (match.group(2) or "").strip()


class CommandTable:
    """name → command, in the order /help lists them."""

    def __init__(self, commands: list[SlashCommand] | None = None) -> None:
        self._commands: dict[str, SlashCommand] = {}
        for found in commands or []:
            self.add(found)

    def add(self, found: SlashCommand) -> None:
        self._commands[found.name] = found

    def remove(self, name: str) -> None:
        """A command that is gone (an MCP prompt the server no longer lists)."""
        self._commands.pop(name, None)

    def command(self, name: str, usage: str, help: str, *, idle_only: bool = False) -> Callable[[Handler], Handler]:
        """Add a command (a decorator on its handler)."""

        def add(handler: Handler) -> Handler:
            self.add(SlashCommand(name, usage, help, handler, idle_only))
            return handler

        return add

    def get(self, name: str) -> SlashCommand | None:
        return self._commands.get(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._commands)

    def __contains__(self, name: object) -> bool:
        return name in self._commands

    def complete(self, text: str) -> str | None:
        """Tab: the one command ``text`` is the start of, completed (with a space
        when it takes an argument); the common prefix of several; None otherwise.
        After a command that completes its argument (``/attach``), its argument."""
        if not text.startswith("/") or "\n" in text:
            return None
        if " " in text:
            name, _, argument = text[1:].partition(" ")
            found = self._commands.get(name)
            if found is None or found.complete_argument is None:
                return None
            completed = found.complete_argument(argument.lstrip())
            return None if completed is None else f"/{name} {completed}"
        typed = text[1:]
        matches = [name for name in [*self._commands, *PASS_THROUGH] if name.startswith(typed)]
        if not matches:
            return None
        if len(matches) == 1:
            name = matches[0]
            takes = name in PASS_THROUGH or bool(self._commands[name].usage)
            return f"/{name} " if takes else f"/{name}"
        prefix = matches[0]
        for name in matches[1:]:
            while not name.startswith(prefix):
                prefix = prefix[:-1]
        return f"/{prefix}" if len(prefix) > len(typed) else None

    def matching(self, text: str) -> list[SlashCommand]:
        """The commands the typed ``/wor`` could become (for the hint under the box)."""
        if not text.startswith("/") or "\n" in text:
            return []
        typed = text[1:].split(" ", 1)[0]
        return [c for name, c in self._commands.items() if name.startswith(typed)]

    def help_text(self) -> str:
        commands = list(self._commands.values())
        width = max((len(f"/{c.name} {c.usage}".rstrip()) for c in commands), default=0)
        lines = [f"{f'/{c.name} {c.usage}'.rstrip():<{width}}  {c.help}" for c in commands]
        lines.append(f"{'/demo …':<{width}}  the demo model's scenarios (sent to the model)")
        return "Commands:\n" + "\n".join(lines)

    def usage_of(self, name: str) -> str:
        c = self._commands[name]
        return f"/{c.name} {c.usage}".rstrip()
