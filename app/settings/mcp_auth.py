"""``[mcp.NAME.auth]``: how callstream identifies itself to an HTTP server's
OAuth authorization server. Every key is optional: with none, a server that
answers 401 is signed in to with the specification's own order (a Client ID
Metadata Document when ``client_metadata_url`` is set and the server supports
it, else Dynamic Client Registration).

Example::

    [mcp.linear.auth]
    client_id = "abc123"                     # pre-registered (skip registration)
    client_secret = "${LINEAR_CLIENT_SECRET}"
    scope = "read write"                     # absent: what the server asks for

    [mcp.build.auth]                         # machine use: no person, no browser
    grant = "client_credentials"
    client_id = "ci-bot"
    client_secret = "${BUILD_CLIENT_SECRET}" # or private_key = "${BUILD_KEY_PEM}" (private_key_jwt)

    [mcp.tracker.auth]                       # enterprise-managed (SEP-990): the company's IdP vouches
    grant = "identity_assertion"
    client_id = "callstream-at-tracker"      # the client the MCP authorization server issued
    client_secret = "${TRACKER_CLIENT_SECRET}"
    issuer = "https://auth.tracker.example"  # absent: the one the server's resource metadata names, pinned
    idp_token_endpoint = "https://idp.example.com/oauth2/token"
    idp_client_id = "callstream"
    id_token = "${IDP_ID_TOKEN}"             # the person's OpenID Connect ID token from the IdP

Secrets are written as ``${VAR}`` (expanded when the server starts); tokens
are never written here (app/mcp/auth_store.py keeps them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MCPAuthConfig", "parse_auth", "GRANTS"]

GRANTS = ("authorization_code", "client_credentials", "identity_assertion")
#: What ``grant = "identity_assertion"`` cannot go without.
ASSERTION_NEEDS = ("client_id", "client_secret", "idp_token_endpoint", "idp_client_id", "id_token")
_KEYS = frozenset({"grant", "client_id", "client_secret", "private_key", "signing_algorithm", "scope",
                   "client_metadata_url", "token_endpoint_auth_method", "issuer", "idp_token_endpoint",
                   "idp_client_id", "idp_client_secret", "id_token"})


@dataclass(slots=True, frozen=True)
class MCPAuthConfig:
    grant: str = "authorization_code"
    client_id: str | None = None
    client_secret: str | None = None
    private_key: str | None = None
    signing_algorithm: str = "RS256"
    scope: str | None = None
    client_metadata_url: str | None = None
    token_endpoint_auth_method: str | None = None
    issuer: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None
    id_token: str | None = None


def parse_auth(value: Any, where: str, error: type[ValueError]) -> MCPAuthConfig:
    if not isinstance(value, dict):
        raise error(f"{where} must be a table")
    unknown = sorted(set(value) - _KEYS)
    if unknown:
        raise error(f"{where}: unknown key {unknown[0]!r}")
    for key, item in value.items():
        if not isinstance(item, str) or not item:
            raise error(f"{where}.{key} must be a non-empty string")
    grant = value.get("grant", "authorization_code")
    if grant not in GRANTS:
        raise error(f"{where}.grant must be one of {', '.join(GRANTS)}")
    if grant == "client_credentials" and ("client_id" not in value
                                         or not ({"client_secret", "private_key"} & set(value))):
        raise error(f"{where}: grant = \"client_credentials\" needs client_id and client_secret or private_key")
    missing = [key for key in ASSERTION_NEEDS if key not in value] if grant == "identity_assertion" else []
    if missing:
        raise error(f"{where}: grant = \"identity_assertion\" needs {', '.join(missing)}")
    for key in ("issuer", "idp_token_endpoint"):
        if key in value and not value[key].startswith(("https://", "http://")):
            raise error(f"{where}.{key} must be an http(s):// URL")
    url = value.get("client_metadata_url")
    if url is not None and not url.startswith("https://"):
        raise error(f"{where}.client_metadata_url must be an https:// URL")
    return MCPAuthConfig(**value)
