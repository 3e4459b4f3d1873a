"""Signing in and out, as ``mcp login`` / ``mcp logout`` and the TUI's
sign-in card and ``/mcp`` panel all do it: one definition of each step.

- ``begin_sign_in``: the loopback listening (on the port the stored client
  registration names, when it is free: a registration is for its redirect
  URI; else a fresh port and the registration is dropped so the flow
  registers again), the old tokens and the refusal reason forgotten.
- ``sign_in_again``: a running server connected again with someone there to
  sign in (its start-up allowed the time a person needs), then left as it
  was, with nobody there.
- ``forget_tokens``: the access and refresh tokens gone, the client
  registration and metadata kept (the next sign-in need not register).
- ``signed_in_line``: "Signed in to NAME: as …", what each of them says;
  ``sign_in_state``: what ``mcp list`` and the ``/mcp`` panel say of a server.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from .auth import SIGN_IN_WAIT, SignIn, signed_in_as, token_store
from .auth_store import TokenStore, store_kind

__all__ = ["begin_sign_in", "sign_in_again", "forget_tokens", "signed_in_line", "needs_sign_in", "can_sign_in",
           "sign_in_state"]


async def begin_sign_in(store: TokenStore, browser: bool = True, shown: Callable[[str], None] | None = None
                        ) -> SignIn:
    record = store.load()
    sign_in = SignIn(browser=browser, shown=shown)
    uris = (record.get("client") or {}).get("redirect_uris") or []
    port = urlsplit(uris[0]).port if uris else None
    await sign_in.open(port or 0)
    if uris and uris[0] != sign_in.loopback.redirect_uri:
        record.pop("client", None)  # registered for a port that is taken now: register again
    for key in ("tokens", "refused", "expires_at"):
        record.pop(key, None)
    store.save(record)
    return sign_in


async def sign_in_again(server: Any, sign_in: SignIn) -> None:
    """Connect ``server`` (a ``ServerConnection``) again, ``sign_in`` there to
    answer its 401; its state says how it went."""
    config = server.config
    server.sign_in = sign_in
    server.config = dataclasses.replace(config, startup_timeout=SIGN_IN_WAIT + 30)
    try:
        await server.close()
        server.start()
        await server.wait_settled()
    finally:
        server.config = config
        server.sign_in = None
        if hasattr(server.auth, "sign_in"):  # nobody is there any more: a later 401 is asked again, not waited on
            server.auth.sign_in = None
        await sign_in.loopback.close()


def forget_tokens(store: TokenStore) -> bool:
    """Forget the tokens; True if there were any."""
    record = store.load()
    had = bool(record.get("tokens"))
    record.pop("tokens", None)
    record.pop("expires_at", None)
    if record.get("client") is None and not record.get("as"):
        store.forget()
    else:
        store.save(record)  # the client registration stays: the next login need not register again
    return had


def signed_in_line(name: str, store: TokenStore) -> str | None:
    """What a sign-in that worked says (None: no tokens are held)."""
    who = signed_in_as(store)
    if who is None:
        return None
    issuer = (store.load().get("as") or {}).get("issuer") or "its authorization server"
    return f"Signed in to {name}: {who} (authorization server {issuer}; tokens kept in the {store_kind()})."


def can_sign_in(server: Any) -> bool:
    """An HTTP server signed in to by a person (not a static header, not a machine grant)."""
    config = server.config
    return (config.url is not None and config.auth.grant == "authorization_code"
            and not any(k.lower() == "authorization" for k in config.headers))


def needs_sign_in(server: Any) -> bool:
    """The server asked for sign-in and nobody was there (at start or on a call)."""
    return bool(getattr(server.auth, "asked", False))


def store_of(server: Any) -> TokenStore:
    return token_store(server.config, server.environ)


def sign_in_state(server: Any) -> dict[str, str]:
    """``sign_in`` (not needed | needed | signed in | client credentials | identity assertion), a line
    for people, and where tokens are."""
    config = server.config
    if config.url is None or server.auth is None:
        return {"sign_in": "not needed", "sign_in_line": "not needed"}
    where = store_kind()
    if needs_sign_in(server):
        return {"sign_in": "needed", "sign_in_line": f"needed: run callstream mcp login {config.name}",
                "tokens_in": where}
    who = signed_in_as(token_store(config))
    if who is None:
        return {"sign_in": "not needed", "sign_in_line": "not needed", "tokens_in": where}
    kind = {"client_credentials": "client credentials", "identity_assertion": "identity assertion"}.get(
        config.auth.grant, "signed in")
    return {"sign_in": kind, "sign_in_line": f"{kind}: {who} (tokens in the {where})", "tokens_in": where}
