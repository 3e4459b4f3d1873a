"""A real OAuth authorization server and an OAuth-protected Streamable HTTP
MCP server on 127.0.0.1, built on the ``mcp`` SDK's server auth module, for
tests/test_mcp_oauth.py.

``python -m tests.oauth_server AS_PORT RS_PORT [--resource URL]`` serves:

- the authorization server (``create_auth_routes``: RFC 8414 metadata,
  Dynamic Client Registration, ``/authorize``, ``/token``, ``/revoke``) with an
  in-memory provider that approves every authorization at once (the person
  at the browser said yes), binds each token to the ``resource`` asked for
  (RFC 8707) and issues access tokens that live ``ACCESS_SECONDS``;
- the MCP server (the SDK's ``MCPServer`` with ``AuthSettings``: RFC 9728
  metadata, 401 with ``WWW-Authenticate``, tokens checked for its resource)
  whose ``whoami`` tool echoes the bearer token it was called with, so a
  test can prove callstream never writes it anywhere;
- test controls on the authorization server: ``POST /test/expire`` (every
  access token expires now), ``POST /test/revoke`` (every refresh token is
  forgotten), ``GET /test/counts`` (authorizations, refreshes).

``--open PORT`` also serves the same MCP server without auth on PORT (the
reference of make bench-mcp's OAuth row).

``--legacy`` serves a 2025-03-26 MCP server instead (``legacy_server``)
whose root metadata names the authorization server on its own port.

``--resource PATH`` makes the MCP server's metadata name another resource
on the same host (``/PATH`` instead of ``/mcp``): a server callstream must
refuse (RFC 9728: the metadata's resource must be the server's).
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context
from mcp.shared.auth import OAuthClientInformationFull
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

ACCESS_SECONDS = 3600
SUBJECT = "ada@example.test"


class Provider:
    """An in-memory authorization server that approves at once."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.counts = {"authorize": 0, "refresh": 0, "token": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.counts["authorize"] += 1
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["mcp"], expires_at=time.time() + 300,
            client_id=client.client_id or "", code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri, redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource, subject=SUBJECT)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> Any:
        from mcp.shared.auth import OAuthToken

        access, refresh = "at_" + secrets.token_urlsafe(24), "rt_" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + ACCESS_SECONDS, resource=resource,
                                          subject=SUBJECT)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource,
                                             subject=SUBJECT)
        return OAuthToken(access_token=access, expires_in=ACCESS_SECONDS, scope=" ".join(scopes),
                          refresh_token=refresh)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> Any:
        self.codes.pop(code.code, None)
        self.counts["token"] += 1
        return self._issue(client.client_id or "", code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> Any:
        self.counts["refresh"] += 1
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client.client_id or "", scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def authorization_server(provider: Provider, issuer: str) -> Starlette:
    async def expire(request: Request) -> JSONResponse:
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"expired": len(provider.access)})

    async def revoke(request: Request) -> JSONResponse:
        gone = len(provider.refresh)
        provider.refresh.clear()
        return JSONResponse({"revoked": gone})

    async def counts(request: Request) -> JSONResponse:
        return JSONResponse(provider.counts)

    # the SDK's settings keep a path-less issuer without a trailing slash (RFC 8414 compares it exactly)
    routes = create_auth_routes(provider, AuthSettings(issuer_url=issuer, resource_server_url=None).issuer_url,  # type: ignore[arg-type]
                                client_registration_options=ClientRegistrationOptions(enabled=True,
                                                                                     valid_scopes=["mcp"]),
                                revocation_options=RevocationOptions(enabled=True))
    routes += [Route("/test/expire", expire, methods=["POST"]), Route("/test/revoke", revoke, methods=["POST"]),
               Route("/test/counts", counts, methods=["GET"])]
    return Starlette(routes=routes)


def resource_server(provider: Provider | None, issuer: str, resource: str) -> Any:
    """The MCP server; with no ``provider``, the same server without auth (``--open``)."""
    from mcp.server.mcpserver import MCPServer

    class Verifier:
        async def verify_token(self, token: str) -> AccessToken | None:
            assert provider is not None
            return await provider.load_access_token(token)

    if provider is None:
        server = MCPServer("open")
    else:
        server = MCPServer("protected", token_verifier=Verifier(),
                           auth=AuthSettings(issuer_url=issuer, resource_server_url=resource,  # type: ignore[arg-type]
                                             required_scopes=["mcp"], validate_token_resource=True))

    @server.tool(description="Say who is calling, and with which token (a server that echoes its token).")
    def whoami(ctx: Context) -> str:  # type: ignore[type-arg]
        token = get_access_token()
        if token is None:  # no auth here: whatever bearer token came with the request, echoed
            request = ctx.request_context.request
            header = request.headers.get("authorization") if request is not None else None
            return f"subject=None token={header.removeprefix('Bearer ') if header else None}"
        return f"subject={token.subject} token={token.token}"

    return server.streamable_http_app(host="127.0.0.1")


def legacy_server(issuer: str) -> Starlette:
    """A 2025-03-26 MCP server (no resource metadata; its authorization server
    metadata at its own root) whose metadata names ``issuer``: the real
    authorization server's, on another origin, which callstream must refuse
    (only an issuer on the MCP server's own origin stands for it)."""

    async def mcp(request: Request) -> JSONResponse:
        return JSONResponse({"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})

    async def metadata(request: Request) -> JSONResponse:
        return JSONResponse({"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize",
                             "token_endpoint": f"{issuer}/token", "registration_endpoint": f"{issuer}/register",
                             "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"]})

    return Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
                             Route("/.well-known/oauth-authorization-server", metadata, methods=["GET"])])


async def serve(as_port: int, rs_port: int, resource: str | None, legacy: bool = False,
                open_port: int | None = None) -> None:
    import uvicorn

    provider = Provider()
    issuer = f"http://127.0.0.1:{as_port}"
    mcp_url = f"http://127.0.0.1:{rs_port}/mcp"
    servers = [uvicorn.Server(uvicorn.Config(authorization_server(provider, issuer), host="127.0.0.1",
                                             port=as_port, log_level="warning")),
               uvicorn.Server(uvicorn.Config(legacy_server(issuer) if legacy else
                                             resource_server(provider, issuer, f"http://127.0.0.1:{rs_port}/{resource}"
                                                             if resource else mcp_url),
                                             host="127.0.0.1", port=rs_port, log_level="warning"))]
    if open_port is not None:
        servers.append(uvicorn.Server(uvicorn.Config(resource_server(None, issuer, mcp_url), host="127.0.0.1",
                                                     port=open_port, log_level="warning")))
    await asyncio.gather(*(s.serve() for s in servers))


if __name__ == "__main__":
    args = sys.argv[1:]
    other = args[args.index("--resource") + 1] if "--resource" in args else None
    open_port = int(args[args.index("--open") + 1]) if "--open" in args else None
    asyncio.run(serve(int(args[0]), int(args[1]), other, "--legacy" in args, open_port))
