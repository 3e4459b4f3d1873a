"""The body of one turn's request: one place where the history, the tools
offered and the system prompt become what a provider is sent.

Why its own module: the request is assembled from parts several rooms own
(the dialect's builder, the tool images an MCP result left in the history, the
servers' instructions beside the system prompt, the profile's usage switch and
options), and the session's loop only needs the result.
"""

from __future__ import annotations

from typing import Any

from ..net.endpoint import Endpoint
from ..stream.dialects import REQUEST_BUILDERS, USAGE_REQUESTS
from ..stream.history import Entry
from ..tools.registry import Registry
from .attaching import with_tool_images
from .turns import system_prompt

__all__ = ["request_for"]


def request_for(endpoint: Endpoint, history: list[Entry], tools: list[Any], system: str | None,
                registry: Registry, request_usage: bool, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(path, body) of the next request. An MCP image in a tool result goes to
    the model as an image (``with_tool_images``); a profile's ``usage = false``
    drops the fields that ask for usage; the profile's options win last."""
    with_tool_images(history)
    path, body = REQUEST_BUILDERS[endpoint.dialect](endpoint.model, history, tools,
                                                    system_prompt(system, registry, tools))
    if not request_usage:
        for name in USAGE_REQUESTS.get(endpoint.dialect, {}):
            body.pop(name, None)
    body.update(options)
    return path, body
