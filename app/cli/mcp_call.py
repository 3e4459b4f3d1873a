"""``callstream mcp call NAME TOOL [JSON] [--approve] [--json]``: one tool of
one configured server, without a model, through the path a session's call
takes: the server's own connection (sign-in included), the dispatcher (the
approval rules, ``--approve`` being the answer given in advance, as ``ask
--approve`` is), the ledger (the call is claimed and recorded under a fresh
conversation, so a repeat runs again rather than replaying), the output limit
and the result as a card's line shows it. ``--json`` prints the outcome as one
object for machines. The exit status is 0 only when the tool ran."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..stream.inert import inert, inert_json
from .common import fail

__all__ = ["call"]


def _arguments(text: str | None) -> dict[str, Any] | str:
    """The JSON object of arguments, or why it is not one."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"the arguments are not JSON ({exc}); give one object, e.g. '{{\"a\": 1}}'"
    if not isinstance(value, dict):
        return "the arguments must be one JSON object, e.g. '{\"a\": 1}'"
    return value


async def call(server: str, tool: str, raw: str | None, approve: bool, as_json: bool, login: bool = False,
               elicit_defaults: bool = False) -> int:
    import asyncio
    import uuid

    from ..chat.asking import AcceptingDefaults, Declining
    from ..files.paths import data_dir
    from ..ledger import open_ledger
    from ..mcp import tool_name
    from ..mcp.tools import attach_servers, open_hub
    from ..settings.config import load_config
    from ..stream import TERMINAL_STATES, ToolCallBlock
    from ..tools.approvals import Approvals
    from ..tools.dispatcher import CallUpdate, Dispatcher
    from ..tools.registry import Registry
    from .printer import call_line

    arguments = _arguments(raw)
    if isinstance(arguments, str):
        return fail(arguments)
    config = load_config()
    if server not in config.mcp:
        known = ", ".join(sorted(config.mcp)) or "none are configured"
        return fail(f"no MCP server named {server!r} in the config ({known})")
    home = data_dir()
    registry = Registry.default(home, config)
    hub = open_hub({server: config.mcp[server]}, home / "mcp-logs", output_limit=config.limits.tool_output_bytes)
    attach_servers(registry, hub)
    sign_in = None
    if login:
        from ..mcp.auth import SignIn

        sign_in = SignIn()
        await sign_in.open()
        hub.servers[0].sign_in = sign_in
    ledger = open_ledger(config, home / "callstream.db")
    # nobody is asked here: a server's request for the person is declined, or answered with its defaults
    asking = AcceptingDefaults() if elicit_defaults else Declining()
    try:
        hub.start()
        await hub.wait_settled()
        status = hub.statuses()[0]
        if status.state != "ready":
            return fail(inert(status.line()))
        name = tool_name(server, tool)
        if registry.get(name) is None:
            offered = ", ".join(t.name for t in status.tools) or "none"
            why = status.refused.get(tool)
            return fail(inert(f"{server} offers no tool {tool!r}" + (f" ({why})" if why else "")
                              + f"; its tools: {offered}"))
        block = ToolCallBlock(id="cli", name=name, arguments=arguments, ended=True, final=True)
        done = asyncio.Event()

        def update(change: CallUpdate) -> None:
            block.state = change.state  # type: ignore[assignment]
            if change.result is not None:
                block.result = change.result
            block.not_run, block.reused, block.key = change.not_run, change.reused, change.key or block.key
            if change.state in TERMINAL_STATES:
                done.set()

        dispatcher = Dispatcher(registry, ledger, uuid.uuid4().hex, 0, update)
        dispatcher.approvals = Approvals.from_config(config, interactive=False, approve=name if approve else None)
        dispatcher.elicitor = asking.ask
        dispatcher.submit(0, name, arguments)
        await dispatcher.wait()
    finally:
        await hub.close()
        ledger.close()
        if sign_in is not None:
            await sign_in.loopback.close()
    if as_json:
        sys.stdout.write(inert_json({"server": server, "tool": tool, "name": name, "state": block.state,
                                     "result": block.result, "is_error": block.state != "ran", "key": block.key}))
        sys.stdout.write("\n")
    else:
        print(call_line(registry, block))
        if block.result and block.state == "ran":
            print(inert(block.result))
    for asked in asking.declined:  # the answer the server got was not a person's: say so
        print(inert(f"callstream: {asked.server} asked for input ({asked.message}): declined — {asked.reason}"),
              file=sys.stderr)
    return 0 if block.state == "ran" else 1
