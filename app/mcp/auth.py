"""OAuth for HTTP MCP servers, on the ``mcp`` SDK's own client
(``mcp.client.auth``): it does the specification's discovery (a 401's
``WWW-Authenticate`` ``resource_metadata`` hint, then the RFC 9728 well-known
URLs; RFC 8414 and OpenID metadata; the 2025-03-26 fallbacks), the client
identification order (a Client ID Metadata Document, else Dynamic Client
Registration), PKCE S256, the ``resource`` parameter, scope selection and
step-up, refresh, and the token endpoint auth methods; its extensions do the
client-credentials grants (secret and private-key JWT).

What is ours, and why:

- ``SignIn``: the SDK's flow calls a redirect handler and a callback
  handler; ours print the authorization URL, open the browser when there is
  one (``webbrowser``, in a thread: a browser command may wait) and receive
  the code on a 127.0.0.1 loopback (``auth_loopback``). Outside ``mcp
  login`` (or ``--login``) nobody is there to sign in, so the handler raises
  ``SignInNeeded`` naming the 401, the authorization server and the command.
- pre-registration from the config: the SDK has no setting for it
  (``[mcp.NAME.auth] client_id``), so the client is set when tokens load.
- a new process resumes where the last one stopped: the SDK forgets the
  access token's expiry and the authorization server's metadata between
  runs, so a stored expired token would be sent (and its 401 start a whole
  sign-in) and a refresh would go to ``/token`` on the MCP server's origin.
  ``TokenStore`` keeps both; ``_initialize`` puts them back.
- a refresh token the server refuses is forgotten and the reason kept, so
  the next failure says why it is asking again.
- a 2025-03-26 server whose root metadata names an issuer on its own origin
  but with a path (``ORIGIN/oauth``): the SDK holds every issuer to RFC 8414
  §3.3 exactly; ``_legacy_issuer_of`` accepts that one case (see there).
- the enterprise-managed grant (SEP-990): app/mcp/auth_assertion.py.
"""

from __future__ import annotations

import asyncio
import sys
import time
import webbrowser
from collections.abc import Callable
from typing import Any, TextIO
from urllib.parse import urlsplit

from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

from ..files.paths import data_dir
from ..settings.mcp import MCPServerConfig, expand
from ..stream.inert import inert
from ..stream.redact import register_secret
from .auth_loopback import Loopback
from .auth_store import TokenStore

__all__ = ["SignInNeeded", "SignIn", "auth_provider", "token_store"]

#: Where authorization server metadata is asked for (RFC 8414, OpenID discovery).
_AS_METADATA = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
#: Seconds ``mcp login`` waits for the browser to come back.
SIGN_IN_WAIT = 300.0


class SignInNeeded(Exception):
    """A server answered 401 (or 403 insufficient_scope) and nobody is there to sign in.
    Its text is the whole sentence a person reads (``stated``: no class name before it)."""

    stated = True


def token_store(config: MCPServerConfig, environ: dict[str, str] | None = None) -> TokenStore:
    return TokenStore(config.name, expand(config.url or "", environ), data_dir() / "mcp-auth")


class SignIn:
    """A person signing in: the loopback, the URL printed (and the browser)."""

    def __init__(self, out: TextIO | None = None, browser: bool = True,
                 shown: Callable[[str], None] | None = None) -> None:
        """``shown``: who shows the URL instead of printing it (the TUI's card)."""
        self.out = out or sys.stderr
        self.browser = browser
        self.shown = shown
        self.loopback = Loopback()

    async def open(self, port: int = 0) -> None:
        await self.loopback.start(port)

    async def redirect(self, url: str) -> None:
        if self.shown is not None:
            self.shown(url)
        else:
            print(inert(f"Sign in at: {url}"), file=self.out, flush=True)
        if self.browser:
            await asyncio.to_thread(webbrowser.open, url)

    async def callback(self) -> AuthorizationCodeResult:
        query = await self.loopback.wait(SIGN_IN_WAIT)
        return AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"), iss=query.get("iss"))


class _Remembering:
    """What every provider of ours adds to the SDK's (see the module docstring)."""

    store: TokenStore
    context: Any
    _initialized: bool
    _fixed: OAuthClientInformationFull | None = None
    #: A 2025-03-26 server's issuer (see ``_legacy_issuer_of``), once accepted.
    _legacy_issuer: str | None = None

    def _expected_issuer(self) -> str:
        if self.context.auth_server_url is None and self._legacy_issuer:
            return self._legacy_issuer
        expected: str = super()._expected_issuer()  # type: ignore[misc]
        return expected

    async def _initialize(self) -> None:
        await super()._initialize()  # type: ignore[misc]
        record = self.store.load()
        expires = record.get("expires_at")
        if self.context.current_tokens is not None and isinstance(expires, int | float):
            self.context.token_expiry_time = float(expires)
        from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata

        if record.get("as") and self.context.oauth_metadata is None:
            self.context.oauth_metadata = OAuthMetadata.model_validate(record["as"])
            self.context.auth_server_url = record.get("as_url")
        if record.get("prm") and self.context.protected_resource_metadata is None:
            self.context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(record["prm"])
        if self._fixed is not None and self.context.client_info is None:
            self.context.client_info = self._fixed
        if isinstance(record.get("legacy_issuer"), str):
            self._legacy_issuer = record["legacy_issuer"]

    async def _auth_flow(self, request: Any) -> Any:
        """The SDK's flow, except that: a 401 to a token we hold is first
        answered by a refresh (the server may have expired it before the time
        it gave: the SDK would go straight to a new sign-in); a call (not a
        start) that needs sign-in with nobody there ends on the server's 401
        rather than an exception inside the SDK's transport; a 2025-03-26
        server's own-origin issuer is accepted (``_legacy_issuer_of``)."""
        refreshed = False
        legacy: Any = None  # the last answer to a 2025-03-26 root metadata request
        inner = super()._auth_flow(request)  # type: ignore[misc]
        try:
            outgoing = await inner.__anext__()
            while True:
                response = yield outgoing
                if (outgoing is request and response.status_code == 401 and not refreshed
                        and self.context.can_refresh_token()):
                    refreshed = True
                    await inner.aclose()
                    self.context.token_expiry_time = 1.0  # long past: the next flow refreshes first
                    inner = super()._auth_flow(request)  # type: ignore[misc]
                    outgoing = await inner.__anext__()
                    continue
                if self.context.auth_server_url is None and outgoing.url.path.startswith(_AS_METADATA):
                    legacy = response
                try:
                    outgoing = await inner.asend(response)
                except SignInNeeded:
                    if _method(request) == "initialize":
                        raise  # a start that needs sign-in fails saying so (the connection's reason)
                    # a call: raised here it would end the SDK's transport and leave the call waiting
                    # for its answer until tool_timeout; the server's own 401 fails it at once instead
                    # (the connection then says why: ServerConnection.call)
                    await inner.aclose()
                    request.headers.pop("Authorization", None)
                    yield request
                    return
                except OAuthFlowError:
                    issuer = self._legacy_issuer_of(legacy)
                    if issuer is None:
                        raise
                    self._legacy_issuer = issuer  # and the flow again, expecting it
                    self.store.update(legacy_issuer=issuer)
                    legacy = None
                    inner = super()._auth_flow(request)  # type: ignore[misc]
                    outgoing = await inner.__anext__()
        except StopAsyncIteration:
            return
        finally:
            await inner.aclose()

    def _legacy_issuer_of(self, response: Any) -> str | None:
        """The issuer a 2025-03-26 server's root metadata names, when it may be
        trusted although it is not the origin the metadata was fetched from.

        The SDK holds the metadata to RFC 8414 §3.3 (its ``issuer`` must be the
        one its well-known URL was built from); a 2025-03-26 server has no
        protected resource metadata, its authorization server *is* its origin,
        and the suite's back-compat server names ``ORIGIN/oauth``. That is
        accepted only on the legacy path (no resource metadata was found, so
        ``auth_server_url`` is unset: a 2025-11-25 server's named issuer is
        still held exactly), only once per flow, and only for an issuer on the
        very origin (scheme, host, port) of the MCP server the metadata came
        from: the party that answered is the one the issuer names, so no other
        authorization server can be mixed up with it."""
        if self._legacy_issuer is not None or response is None or self.context.auth_server_url is not None:
            return None
        try:
            issuer = response.json().get("issuer")
        except Exception:
            return None
        if not isinstance(issuer, str) or _origin(issuer) != _origin(self.context.server_url):
            return None
        return issuer

    async def _handle_token_response(self, response: Any) -> None:
        await super()._handle_token_response(response)  # type: ignore[misc]
        self._keep_metadata()

    def _keep_metadata(self) -> None:
        meta, prm = self.context.oauth_metadata, self.context.protected_resource_metadata
        self.store.update(**{"as": meta.model_dump(mode="json", exclude_none=True) if meta else None,
                             "as_url": self.context.auth_server_url,
                             "prm": prm.model_dump(mode="json", exclude_none=True) if prm else None,
                             "expires_at": self.context.token_expiry_time})

    async def _handle_refresh_response(self, response: Any) -> bool:
        ok: bool = await super()._handle_refresh_response(response)  # type: ignore[misc]
        if ok:
            self._keep_metadata()
            return True
        error = ""
        try:
            error = str((await response.aread() and response.json()).get("error") or "")
        except Exception:
            error = ""
        record = self.store.load()
        record.pop("tokens", None)
        record["refused"] = (f"the authorization server refused the stored refresh token (HTTP {response.status_code}"
                             + (f", {error}" if error else "") + ")")
        self.store.save(record)
        return False


class _CodeProvider(_Remembering, OAuthClientProvider):
    def __init__(self, store: TokenStore, sign_in: SignIn | None, config: MCPServerConfig, url: str,
                 environ: dict[str, str] | None) -> None:
        auth = config.auth
        redirect = sign_in.loopback.redirect_uri if sign_in is not None else "http://127.0.0.1:0/callback"
        method = auth.token_endpoint_auth_method
        metadata = OAuthClientMetadata.model_validate({
            "redirect_uris": [redirect], "client_name": "callstream",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "scope": auth.scope,
            **({"token_endpoint_auth_method": method} if method else {})})
        self.store = store
        self.server = config.name
        self.sign_in = sign_in
        #: The server asked for sign-in and nobody was there (``mcp list`` says "needed").
        self.asked = False
        #: Told when that happens (the TUI puts a sign-in card in the conversation).
        self.on_needed: Callable[[], None] | None = None
        super().__init__(url, metadata, store, self._redirect, self._callback,
                         client_metadata_url=auth.client_metadata_url)
        if auth.client_id:
            secret = expand(auth.client_secret, environ) if auth.client_secret else None
            register_secret(secret)
            self._fixed = OAuthClientInformationFull(
                client_id=auth.client_id, client_secret=secret, redirect_uris=[redirect],  # type: ignore[list-item]
                token_endpoint_auth_method=method or ("client_secret_basic" if secret else "none"))

    async def _redirect(self, url: str) -> None:
        if self.sign_in is None:
            self.asked = True
            if self.on_needed is not None:
                self.on_needed()
            raise SignInNeeded(self.needed())
        await self.sign_in.redirect(url)

    async def _callback(self) -> AuthorizationCodeResult:
        assert self.sign_in is not None
        return await self.sign_in.callback()

    def needed(self) -> str:
        server = self.context.auth_server_url or (str(self.context.oauth_metadata.issuer)
                                                  if self.context.oauth_metadata else "its authorization server")
        why = self.store.load().get("refused")
        return (f"needs sign-in: it answered 401 Unauthorized; authorization server {server}"
                + (f"; {why}" if why else "") + f". Run: callstream mcp login {self.server}")


def auth_provider(config: MCPServerConfig, sign_in: SignIn | None = None,
                  environ: dict[str, str] | None = None) -> Any:
    """The ``httpx2.Auth`` for an HTTP server: the SDK's OAuth client with our
    store and sign-in; a client-credentials provider for machine use."""
    store = token_store(config, environ)
    store.load()  # registers the stored tokens with the redaction before any request
    url = store.url
    auth = config.auth
    if auth.grant == "identity_assertion":
        from .auth_assertion import assertion_provider

        return assertion_provider(config, store, environ)
    if auth.grant == "client_credentials":
        assert auth.client_id is not None
        if auth.private_key:
            key = expand(auth.private_key, environ)
            register_secret(key)
            jwt = SignedJWTParameters(issuer=auth.client_id, subject=auth.client_id, signing_key=key,
                                      signing_algorithm=auth.signing_algorithm)
            return _JWT(store, url, auth.client_id, jwt.create_assertion_provider(), auth.scope, auth.issuer)
        secret = expand(auth.client_secret or "", environ)
        register_secret(secret)
        method = auth.token_endpoint_auth_method or "client_secret_basic"
        return _Secret(store, url, auth.client_id, secret, method, auth.scope, auth.issuer)
    return _CodeProvider(store, sign_in, config, url, environ)


class _Secret(_Remembering, ClientCredentialsOAuthProvider):
    def __init__(self, store: TokenStore, url: str, client_id: str, secret: str, method: Any, scope: str | None,
                 issuer: str | None) -> None:
        self.store = store
        super().__init__(url, store, client_id, secret, method, scope, issuer)


class _JWT(_Remembering, PrivateKeyJWTOAuthProvider):
    def __init__(self, store: TokenStore, url: str, client_id: str, assertion: Any, scope: str | None,
                 issuer: str | None) -> None:
        self.store = store
        super().__init__(url, store, client_id, assertion, scope, issuer)


def signed_in_as(store: TokenStore) -> str | None:
    """Who the stored tokens are for, as far as they say (a JWT's claims, read
    for display only), or None when there are no tokens."""
    record = store.load()
    tokens = record.get("tokens")
    if not tokens:
        return None
    who = _claims(tokens.get("id_token") or tokens.get("access_token") or "")
    scope = tokens.get("scope")
    expires = record.get("expires_at")
    left = f", access token for {int(expires - time.time())} s more" if isinstance(expires, int | float) else ""
    return (f"as {who}" if who else "the server did not say as whom") + (f", scope {scope}" if scope else "") + left


def _method(request: Any) -> str | None:
    """The JSON-RPC method an MCP request carries (None: not one)."""
    import json

    try:
        body = json.loads(request.content or b"null")
    except (ValueError, UnicodeDecodeError):
        return None
    method = body.get("method") if isinstance(body, dict) else None
    return method if isinstance(method, str) else None


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or {"https": 443, "http": 80}.get(parts.scheme)


def _claims(token: str) -> str | None:
    import base64
    import json

    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    if not isinstance(claims, dict):
        return None
    for key in ("email", "preferred_username", "name", "sub"):
        if isinstance(claims.get(key), str):
            return f"{claims[key]}"
    return None
