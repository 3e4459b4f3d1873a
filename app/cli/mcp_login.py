"""``callstream mcp login NAME`` / ``mcp logout NAME`` (the sign-in state
``mcp list`` shows is app/mcp/auth_login.py's ``sign_in_state``). Login
forgets the access and refresh tokens (the client registration stays) and
connects with someone there to sign in: the server's 401 starts the SDK's
flow, the URL is printed (and opened in the browser), and the code comes
back to a loopback listener on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from ..stream.inert import inert
from .common import fail

__all__ = ["login", "logout"]


def _server(name: str) -> Any:
    from ..settings.config import load_config

    config = load_config()
    server = config.mcp.get(name)
    if server is None:
        known = ", ".join(sorted(config.mcp)) or "none are configured"
        raise LookupError(f"no MCP server named {name!r} in the config ({known})")
    if server.url is None:
        raise LookupError(f"{name} is a stdio server ({server.command}): it has no sign-in")
    return config, server


async def login(name: str, browser: bool = True) -> int:
    from ..files.paths import data_dir
    from ..mcp.auth import SIGN_IN_WAIT, token_store
    from ..mcp.auth_login import begin_sign_in, forget_tokens, signed_in_line
    from ..mcp.tools import open_hub

    try:
        config, server = _server(name)
    except LookupError as exc:
        return fail(str(exc))
    store = token_store(server)
    sign_in = None
    if server.auth.grant == "authorization_code":
        sign_in = await begin_sign_in(store, browser)
    else:
        forget_tokens(store)  # a machine grant: tokens anew
    patient = dataclasses.replace(server, startup_timeout=SIGN_IN_WAIT + 30)
    hub = open_hub({name: patient}, data_dir() / "mcp-logs", output_limit=config.limits.tool_output_bytes)
    hub.servers[0].sign_in = sign_in
    try:
        hub.start()
        await hub.wait_settled()
        status = hub.statuses()[0]
    finally:
        await hub.close()
        if sign_in is not None:
            await sign_in.loopback.close()
    said = signed_in_line(name, store)
    if said is None:
        if status.state == "ready":
            print(inert(f"{name} did not ask for sign-in: it is ready without it."))
            return 0
        return fail(inert(f"{name}: not signed in: {status.reason}"))
    print(inert(said))
    if status.state != "ready":
        print(inert(f"but {status.line()}"), file=sys.stderr)
        return 1
    return 0


def logout(name: str) -> int:
    from ..mcp.auth import token_store
    from ..mcp.auth_login import forget_tokens

    try:
        _, server = _server(name)
    except LookupError as exc:
        return fail(str(exc))
    had = forget_tokens(token_store(server))
    print(f"Signed out of {name}: its tokens are forgotten." if had else f"{name} had no tokens to forget.")
    return 0
