"""Keys and loopback (issue 14, part 7): a server on this machine needs no
key in any dialect; a remote one still asks for its key by name."""

from __future__ import annotations

import pytest

from app.runtime.endpoint import is_loopback, open_endpoint
from app.settings.checks import ConfigError
from app.settings.profiles import ProviderProfile

DIALECTS = ["openai-chat", "openai-responses", "anthropic", "gemini"]
KEYS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("base_url", ["http://127.0.0.1:4000/v1", "http://localhost:8080", "http://[::1]:9000",
                                      "http://127.8.9.10:1234"])
def test_a_loopback_base_url_needs_no_key_in_any_dialect(dialect: str, base_url: str) -> None:
    endpoint = open_endpoint(ProviderProfile(name="p", provider=dialect, model="m", base_url=base_url))
    assert endpoint.base_url == base_url
    assert not {"authorization", "x-api-key", "x-goog-api-key"} & {h.lower() for h in endpoint.headers}


@pytest.mark.parametrize("dialect", ["openai-responses", "anthropic", "gemini"])
def test_a_remote_base_url_without_its_key_is_a_clear_error(dialect: str) -> None:
    with pytest.raises(ConfigError, match="needs an API key: set"):
        open_endpoint(ProviderProfile(name="p", provider=dialect, model="m", base_url="https://llm.example.com/v1"))


def test_a_loopback_key_still_goes_out_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-local")
    endpoint = open_endpoint(ProviderProfile(name="p", provider="anthropic", model="m", base_url="http://127.0.0.1:1"))
    assert endpoint.headers.get("x-api-key") == "sk-local"


@pytest.mark.parametrize("url,expected", [("http://127.0.0.1", True), ("http://localhost:1/v1", True),
                                          ("http://api.localhost", True), ("http://[::1]:2", True),
                                          ("http://10.0.0.1", False), ("https://localhost.example.com", False),
                                          ("not a url", False)])
def test_is_loopback(url: str, expected: bool) -> None:
    assert is_loopback(url) is expected
