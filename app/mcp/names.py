"""The name a model is shown for a server's tool: ``server__tool``.

Every wire format accepts ``^[A-Za-z0-9_-]{1,64}$`` (OpenAI's limit is the
strictest; Gemini's character set is wider). The plain form is kept only
when it can be read back one way: the server part holds no ``__`` and does
not end in ``_``, and the tool part does not start with ``_`` (so the first
``__`` is the separator). Anything else — a character outside the alphabet
(``_`` instead), a split that could be read two ways (server ``a`` with tool
``b__c`` and server ``a__b`` with tool ``c``), a name past 64 — keeps its
head and gets a short hash of the (server, tool) pair, so two pairs never
share a name by construction.

What a hash cannot rule out (a tool a server names after another's hashed
name, or after a command tool) ``refusals`` catches: the first holder of a
name keeps it, and the second is not offered, with the reason stated.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["tool_name", "refusals", "MAX_NAME", "SEPARATOR"]

MAX_NAME = 64
SEPARATOR = "__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def _plain(server: str, tool: str) -> bool:
    return SEPARATOR not in server and not server.endswith("_") and not tool.startswith("_")


def tool_name(server: str, tool: str) -> str:
    raw = f"{server}{SEPARATOR}{tool}"
    name = _BAD.sub("_", raw)
    if len(name) <= MAX_NAME and name == raw and _plain(server, tool):
        return name
    pair = f"{server}\x00{tool}".encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(pair).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}_{digest}"


def refusals(offered: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
    """``(holder, tool, name)`` in order of precedence (built-in and command
    tools first, then the servers in config order) → for each one that is
    not offered because its name is taken, why (as a user reads it)."""
    held: dict[str, tuple[str, str]] = {}
    refused: dict[tuple[str, str], str] = {}
    for holder, tool, name in offered:
        first = held.get(name)
        if first is None:
            held[name] = (holder, tool)
        elif first[0] == holder:
            refused[(holder, tool)] = f"not offered: the name {name} is already taken by its tool {first[1]!r}"
        else:
            refused[(holder, tool)] = f"not offered: the name {name} is already taken by {_words(*first)}"
    return refused


def _words(holder: str, tool: str) -> str:
    if holder.startswith("mcp:"):
        return f"the tool {tool!r} of server {holder[4:]}"
    return f"the {holder} tool {tool}"
