"""How a resource reads as text: one definition for a tool result's links and embedded resources
(``mcp.results``), what ``read_resource`` returns (``mcp.resources``) and what a card finds in a
result to open (``resource_refs``).

A resource is named by its URI and type on one bracketed line; an embedded or read text follows
that line. The card and ``/resource open`` find the URIs again from these lines alone, so a
stored result (reopened, replayed) offers the same links as a live one.
"""

from __future__ import annotations

import re

__all__ = ["link_line", "resource_head", "binary_line", "resource_refs", "RESOURCE_REF"]

#: A resource line: ``[resource link URI: type]`` or ``[resource URI: type, size]`` (the URI has no spaces).
RESOURCE_REF = re.compile(r"^\[resource (?:link )?(\S+): [^\]\n]*\]", re.M)


def link_line(uri: str, mime: str | None) -> str:
    return f"[resource link {_one(uri)}: {mime or 'unknown type'}]"


def resource_head(uri: str, mime: str | None, size: str) -> str:
    return f"[resource {_one(uri)}: {mime or 'unknown type'}, {size}]"


def binary_line(uri: str, mime: str | None, size: str) -> str:
    """A binary resource no provider takes as what it is: a stated summary, never its bytes."""
    return f"{resource_head(uri, mime, size)} (binary content, not shown to the model)"


def resource_refs(text: str) -> list[str]:
    """The resource URIs a result names, each once, in order."""
    seen: dict[str, None] = {}
    for match in RESOURCE_REF.finditer(text or ""):
        seen.setdefault(match.group(1), None)
    return list(seen)


def _one(uri: str) -> str:
    """A URI from a server as one token (a space or a line break would break the line's shape)."""
    return "".join(uri.split()) or "?"
