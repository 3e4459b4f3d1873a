"""``[mcp.NAME.auth]``: each bad table is a sentence naming where and why."""

from __future__ import annotations

import pytest

from app.settings.mcp import MCPConfigError, parse_server

URL = "http://127.0.0.1:9/mcp"


def _auth(table: object) -> object:
    return parse_server("s", {"url": URL, "auth": table}, "config.toml: mcp.s").auth


def test_auth_absent_means_the_specifications_own_order() -> None:
    auth = parse_server("s", {"url": URL}, "here").auth
    assert auth.grant == "authorization_code" and auth.client_id is None


def test_auth_pre_registered_client_is_kept_as_written() -> None:
    auth = _auth({"client_id": "abc", "client_secret": "${SECRET}", "scope": "read"})
    assert (auth.client_id, auth.client_secret, auth.scope) == ("abc", "${SECRET}", "read")  # type: ignore[attr-defined]


def test_auth_unknown_key_is_named() -> None:
    with pytest.raises(MCPConfigError, match=r"mcp\.s\.auth: unknown key 'token'"):
        _auth({"token": "x"})


def test_auth_not_a_table_is_a_sentence() -> None:
    with pytest.raises(MCPConfigError, match=r"mcp\.s\.auth must be a table"):
        _auth("yes")


def test_auth_unknown_grant_names_the_choices() -> None:
    with pytest.raises(MCPConfigError, match="authorization_code, client_credentials"):
        _auth({"grant": "password"})


def test_auth_client_credentials_without_a_secret_says_what_it_needs() -> None:
    with pytest.raises(MCPConfigError, match="needs client_id and client_secret or private_key"):
        _auth({"grant": "client_credentials", "client_id": "bot"})


def test_auth_client_metadata_url_must_be_https() -> None:
    with pytest.raises(MCPConfigError, match="https://"):
        _auth({"client_metadata_url": "http://example.org/c.json"})


ASSERTION = {"grant": "identity_assertion", "client_id": "c", "client_secret": "${S}",
             "idp_token_endpoint": "https://idp.example/token", "idp_client_id": "i", "id_token": "${ID}"}


def test_auth_identity_assertion_is_kept_as_written() -> None:
    auth = _auth(ASSERTION)
    assert auth.grant == "identity_assertion" and auth.id_token == "${ID}" and auth.issuer is None  # type: ignore[attr-defined]


def test_auth_identity_assertion_names_every_missing_key() -> None:
    with pytest.raises(MCPConfigError, match="identity_assertion\" needs idp_token_endpoint, id_token"):
        _auth({key: value for key, value in ASSERTION.items() if key not in ("idp_token_endpoint", "id_token")})


def test_auth_identity_assertion_endpoint_must_be_a_url() -> None:
    with pytest.raises(MCPConfigError, match=r"idp_token_endpoint must be an http\(s\):// URL"):
        _auth({**ASSERTION, "idp_token_endpoint": "idp.example/token"})
