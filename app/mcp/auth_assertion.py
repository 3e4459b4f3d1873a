"""Enterprise-managed sign-in (SEP-990, the Identity Assertion
Authorization Grant): the company's identity provider vouches for the person
to the MCP server's authorization server, and nobody opens a browser.

Two legs. The SDK has the second: ``IdentityAssertionOAuthProvider`` presents
the ID-JAG to the authorization server with the RFC 7523 jwt-bearer grant,
its metadata fetched from the configured issuer only. The first leg is left
to the caller ("deployment-specific"), so it is ours: an RFC 8693 token
exchange at the IdP's token endpoint, the person's OpenID Connect ID token
(``id_token`` in the config, from the environment) traded for an ID-JAG
whose audience is the authorization server and whose resource is the MCP
server. It is one form POST, done with httpx.

Also ours: a server configured without ``issuer`` gets the one its protected
resource metadata (RFC 9728, after the first 401) names, checked against the
server's own resource, then pinned in the token store so a later process
does not ask the server again (the SDK's trust model wants the issuer as
configuration: pinning on first use is the nearest a config that omits it
gets, and the IdP still decides which audiences it issues grants for).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import httpx
from mcp.client.auth import OAuthFlowError, OAuthTokenError
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    handle_protected_resource_response,
)
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url

from ..settings.mcp import MCPServerConfig, expand
from ..stream.redact import register_secret
from .auth_store import TokenStore

__all__ = ["assertion_provider", "AssertionRefused", "TOKEN_EXCHANGE", "ID_JAG", "ID_TOKEN"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
#: A stand-in issuer until the server's resource metadata names one (the SDK refuses an empty one).
_UNKNOWN = "https://issuer.not-yet-discovered.invalid"


class AssertionRefused(OAuthTokenError):
    """The IdP would not vouch (or could not be reached): the whole sentence a person reads."""

    stated = True


def assertion_provider(config: MCPServerConfig, store: TokenStore, environ: dict[str, str] | None) -> Any:
    """The ``httpx2.Auth`` for ``grant = "identity_assertion"``."""
    auth = config.auth
    assert auth.client_id and auth.client_secret and auth.idp_token_endpoint and auth.idp_client_id and auth.id_token
    secret = expand(auth.client_secret, environ)
    id_token = expand(auth.id_token, environ)
    idp_secret = expand(auth.idp_client_secret, environ) if auth.idp_client_secret else None
    for value in (secret, id_token, idp_secret):
        register_secret(value)
    issuer = auth.issuer or store.load().get("pinned_issuer")
    method = auth.token_endpoint_auth_method or "client_secret_basic"
    if method not in ("client_secret_basic", "client_secret_post"):
        method = "client_secret_basic"
    exchange = _Exchange(auth.idp_token_endpoint, auth.idp_client_id, idp_secret, id_token, auth.scope)
    return _Assertion(store, store.url, auth.client_id, secret, issuer, exchange, auth.scope, method)


class _Exchange:
    """Leg one: RFC 8693 token exchange at the IdP, ID token for ID-JAG."""

    def __init__(self, endpoint: str, client_id: str, secret: str | None, id_token: str, scope: str | None) -> None:
        self.endpoint, self.client_id, self.secret, self.id_token, self.scope = (endpoint, client_id, secret,
                                                                                 id_token, scope)

    async def __call__(self, audience: str, resource: str) -> str:
        form = {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG, "subject_token": self.id_token,
                "subject_token_type": ID_TOKEN, "audience": audience, "resource": resource,
                "client_id": self.client_id, **({"scope": self.scope} if self.scope else {})}
        basic = httpx.BasicAuth(self.client_id, self.secret) if self.secret else None
        try:
            async with httpx.AsyncClient(timeout=30) as client:
                answer = await client.post(self.endpoint, data=form, auth=basic or httpx.USE_CLIENT_DEFAULT)
        except httpx.HTTPError as exc:
            raise AssertionRefused(f"sign-in failed: the identity provider at {self.endpoint} could not be "
                                   f"reached: {exc}") from None
        try:
            body = answer.json()
        except ValueError:
            body = {}
        if answer.status_code != 200 or not isinstance(body, dict):
            error = body.get("error_description") or body.get("error") if isinstance(body, dict) else None
            raise AssertionRefused("sign-in failed: the identity provider refused the token exchange "
                                   f"(HTTP {answer.status_code}" + (f", {error}" if error else "") + ")")
        grant = body.get("access_token")
        if body.get("issued_token_type") != ID_JAG or not isinstance(grant, str) or not grant:
            raise AssertionRefused("sign-in failed: the identity provider answered the token exchange without an "
                                   f"ID-JAG (issued_token_type {body.get('issued_token_type')!r})")
        register_secret(grant)
        return grant


class _Assertion(IdentityAssertionOAuthProvider):
    """The SDK's leg two, with the issuer found (and pinned) when the config has none."""

    def __init__(self, store: TokenStore, url: str, client_id: str, secret: str, issuer: str | None,
                 exchange: _Exchange, scope: str | None, method: Any) -> None:
        super().__init__(url, store, client_id, secret, issuer or _UNKNOWN, exchange, scope, method)
        self.store = store
        self.server_url = url

    async def _auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
        if self._issuer == _UNKNOWN:
            response = yield request
            if response.status_code != 401:
                return
            hint = extract_resource_metadata_from_www_auth(response)
            for url in build_protected_resource_metadata_discovery_urls(hint, self.server_url):
                prm = await handle_protected_resource_response((yield create_oauth_metadata_request(url)))
                if prm is not None:
                    break
            else:
                raise OAuthFlowError("it names no authorization server (no protected resource metadata): "
                                     "set issuer in its [mcp.NAME.auth]")
            ours = resource_url_from_server_url(self.server_url)
            if prm.resource and not check_resource_allowed(requested_resource=ours,
                                                           configured_resource=str(prm.resource)):
                raise OAuthFlowError(f"Protected resource {prm.resource} does not match expected {ours}")
            self._issuer = str(prm.authorization_servers[0])
            self._client.issuer = self._issuer
            self.store.update(pinned_issuer=self._issuer)
        inner = super()._auth_flow(request)
        try:
            outgoing = await inner.__anext__()
            while True:
                outgoing = await inner.asend((yield outgoing))
        except StopAsyncIteration:
            return
        finally:
            await inner.aclose()
