"""What callstream tells an MCP server about itself, and what it cannot do.

``clientInfo`` names callstream and its version (the SDK's default would say
``mcp 0.1.0``). The capabilities the SDK declares follow the callbacks it is
handed: elicitation (form and URL: ``elicitation.Asker``), roots
(``roots.Roots``) and sampling (``sampling.Sampler``, text only, no ``sampling.tools``) — except for a
server configured ``sampling = "deny"``, so it never sends a request we would only refuse. What callstream
does handle without a capability — progress (a token on every call), log
messages, list changes — needs none declared.

A tool that *requires* task augmentation (``execution.taskSupport:
"required"``) fails every call made without it; callstream does not
implement tasks, so such a tool is listed with the reason and never offered.
"""

from __future__ import annotations

from typing import Any

from .. import __version__
from .notifications import ServerMessages
from .roots import Roots

__all__ = ["CLIENT_NAME", "client_info", "client_options", "unsupported", "TASKS_REQUIRED"]

CLIENT_NAME = "callstream"

#: Why a tool that requires task augmentation is not offered (``mcp list``, ``mcp doctor``).
TASKS_REQUIRED = ("requires task augmentation (execution.taskSupport \"required\"), which callstream does not "
                  "implement: not offered")


def client_info() -> Any:
    """The ``Implementation`` callstream introduces itself with."""
    from mcp_types import Implementation

    return Implementation(name=CLIENT_NAME, title="callstream", version=__version__)


def client_options(server: Any) -> dict[str, Any]:
    """The SDK ``Client``'s keyword arguments for ``server`` (a ``ServerConnection``): who we are,
    and a callback for each thing callstream handles — which declares that capability, and only
    that: its log messages (``messages``; on a 2026-07-28 connection its level is the opt-in the
    SDK stamps on each request, an earlier era sends them unasked), its requests for the person
    (``asker``: elicitation, form and URL), its requests to the model (``sampler``, unless its
    ``sampling`` is "deny"), and the roots it is told of (``roots.Roots``)."""
    messages: ServerMessages = server.messages
    options: dict[str, Any] = {"client_info": client_info(), "logging_callback": messages,
                               "elicitation_callback": server.asker,
                               "list_roots_callback": Roots(server.config.roots, server.environ)}
    if server.config.sampling != "deny":
        options["sampling_callback"] = server.sampler
    if messages.level != "off":
        options["log_level"] = messages.level
    return options


def unsupported(tool: Any) -> str | None:
    """Why a listed SDK ``Tool`` cannot be offered, or None."""
    execution = getattr(tool, "execution", None)
    if getattr(execution, "task_support", None) == "required":
        return TASKS_REQUIRED
    return None
