"""``callstream mcp login NAME`` / ``mcp logout NAME``, and the sign-in
state ``mcp list`` shows. Login forgets the access and refresh tokens (the
client registration stays) and connects with someone there to sign in: the
server's 401 starts the SDK's flow, the URL is printed (and opened in the
browser), and the code comes back to a loopback listener on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from ..stream.inert import inert
from .common import fail

__all__ = ["login", "logout", "sign_in_state"]


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
    from urllib.parse import urlsplit

    from ..files.paths import data_dir
    from ..mcp.auth import SIGN_IN_WAIT, SignIn, signed_in_as, token_store
    from ..mcp.auth_store import store_kind
    from ..mcp.tools import open_hub

    try:
        config, server = _server(name)
    except LookupError as exc:
        return fail(str(exc))
    store = token_store(server)
    record = store.load()
    sign_in = None
    if server.auth.grant == "authorization_code":
        sign_in = SignIn(browser=browser)
        uris = (record.get("client") or {}).get("redirect_uris") or []
        port = urlsplit(uris[0]).port if uris else None
        await sign_in.open(port or 0)
        if uris and uris[0] != sign_in.loopback.redirect_uri:
            record.pop("client", None)  # registered for a port that is taken now: register again
    record.pop("tokens", None)
    record.pop("refused", None)
    record.pop("expires_at", None)
    store.save(record)
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
    who = signed_in_as(store)
    if who is None:
        if status.state == "ready":
            print(inert(f"{name} did not ask for sign-in: it is ready without it."))
            return 0
        return fail(inert(f"{name}: not signed in: {status.reason}"))
    issuer = (store.load().get("as") or {}).get("issuer") or "its authorization server"
    print(inert(f"Signed in to {name}: {who} (authorization server {issuer}; tokens kept in the "
                f"{store_kind()})."))
    if status.state != "ready":
        print(inert(f"but {status.line()}"), file=sys.stderr)
        return 1
    return 0


def logout(name: str) -> int:
    from ..mcp.auth import token_store

    try:
        _, server = _server(name)
    except LookupError as exc:
        return fail(str(exc))
    store = token_store(server)
    record = store.load()
    had = bool(record.get("tokens"))
    record.pop("tokens", None)
    record.pop("expires_at", None)
    if record.get("client") is None and not record.get("as"):
        store.forget()
    else:
        store.save(record)  # the client registration stays: the next login need not register again
    print(f"Signed out of {name}: its tokens are forgotten." if had else f"{name} had no tokens to forget.")
    return 0


def sign_in_state(server: Any) -> dict[str, str]:
    """``sign_in`` (not needed | needed | signed in | client credentials | identity assertion), a line
    for people, and where tokens are."""
    from ..mcp.auth import signed_in_as, token_store
    from ..mcp.auth_store import store_kind

    config = server.config
    if config.url is None or server.auth is None:
        return {"sign_in": "not needed", "sign_in_line": "not needed"}
    where = store_kind()
    if getattr(server.auth, "asked", False):
        return {"sign_in": "needed", "sign_in_line": f"needed: run callstream mcp login {config.name}",
                "tokens_in": where}
    who = signed_in_as(token_store(config))
    if who is None:
        return {"sign_in": "not needed", "sign_in_line": "not needed", "tokens_in": where}
    kind = {"client_credentials": "client credentials", "identity_assertion": "identity assertion"}.get(
        config.auth.grant, "signed in")
    return {"sign_in": kind, "sign_in_line": f"{kind}: {who} (tokens in the {where})", "tokens_in": where}
