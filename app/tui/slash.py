"""Slash commands: one registry, handled by the client, never sent to the model.

Each command is one ``SlashCommand`` registered with ``@command(...)``: its
name, what its argument looks like, one line of help, and a handler taking
the chat screen and the rest of the line. ``/help`` and Tab completion are
generated from the registry, so a command added anywhere (``/mcp``, ``/fork``)
appears in both. ``/demo …`` is not a command: it is the demo model's, and
goes to the model like any prompt.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .chat_screen import ChatScreen

__all__ = ["SlashCommand", "COMMANDS", "command", "parse", "complete", "help_text", "PASS_THROUGH"]

Handler = Callable[["ChatScreen", str], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    #: How the argument looks in /help ("" when it takes none).
    usage: str
    help: str
    handler: Handler
    #: Refused while a turn runs (switching the provider under a stream, …).
    idle_only: bool = False


#: name → command, in the order /help lists them.
COMMANDS: dict[str, SlashCommand] = {}

#: Words that look like commands but belong to the model (the demo's scenarios).
PASS_THROUGH = frozenset({"demo"})

_WORD = re.compile(r"^/([a-z][a-z0-9-]*)(?:\s+(.*))?$", re.S)


def command(name: str, usage: str, help: str, *, idle_only: bool = False) -> Callable[[Handler], Handler]:
    """Register a slash command (a decorator on its handler)."""

    def register(handler: Handler) -> Handler:
        COMMANDS[name] = SlashCommand(name, usage, help, handler, idle_only)
        return handler

    return register


def parse(text: str) -> tuple[str, str] | None:
    """``("model", "gpt-4o")`` for ``/model gpt-4o``; None for a prompt (not a
    slash word, a path such as ``/etc/hosts``, or the demo's ``/demo …``)."""
    match = _WORD.match(text.strip())
    if match is None or match.group(1) in PASS_THROUGH:
        return None
    return match.group(1), (match.group(2) or "").strip()


def complete(text: str) -> str | None:
    """Tab: the one command ``text`` is the start of, completed (with a space
    when it takes an argument); the common prefix of several; None otherwise."""
    if not text.startswith("/") or " " in text or "\n" in text:
        return None
    typed = text[1:]
    matches = [name for name in [*COMMANDS, *PASS_THROUGH] if name.startswith(typed)]
    if not matches:
        return None
    if len(matches) == 1:
        name = matches[0]
        takes = name in PASS_THROUGH or bool(COMMANDS[name].usage)
        return f"/{name} " if takes else f"/{name}"
    prefix = matches[0]
    for name in matches[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return f"/{prefix}" if len(prefix) > len(typed) else None


def matching(text: str) -> list[SlashCommand]:
    """The commands the typed ``/wor`` could become (for the hint under the box)."""
    if not text.startswith("/") or "\n" in text:
        return []
    typed = text[1:].split(" ", 1)[0]
    return [c for name, c in COMMANDS.items() if name.startswith(typed)]


def help_text() -> str:
    width = max(len(f"/{c.name} {c.usage}".rstrip()) for c in COMMANDS.values())
    lines = [f"{f'/{c.name} {c.usage}'.rstrip():<{width}}  {c.help}" for c in COMMANDS.values()]
    lines.append(f"{'/demo …':<{width}}  the demo model's scenarios (sent to the model)")
    return "Commands:\n" + "\n".join(lines)


def usage_of(name: str) -> str:
    c = COMMANDS[name]
    return f"/{c.name} {c.usage}".rstrip()


