"""From a profile to something to send requests to: a base URL, headers, a
dialect. The demo provider starts the embedded server on a free loopback
port, in a process of its own (``demo/process.py``), and stops it when
closed. Every key read here is registered with ``redact`` first, so no sink
can keep it."""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from ..net.endpoint import Endpoint
from ..settings.checks import ConfigError
from ..settings.config import Config
from ..settings.mcp import named_secrets
from ..settings.profiles import PROVIDER_NAMES, ProviderProfile
from ..stream.dialects import AUTH_HEADERS
from ..stream.redact import register_secret

__all__ = ["open_endpoint", "register_configured_keys", "is_loopback"]


def register_configured_keys(config: Config) -> None:
    """Redact every key the config could use, not only the one in use: a
    conversation may quote another profile's error, a proxy any header."""
    profiles = [ProviderProfile(name=p, provider=p) for p in PROVIDER_NAMES] + list(config.providers.values())
    names = {p.key_variable() for p in profiles}
    for name in names:
        if name:
            register_secret(os.environ.get(name))
    for server in config.mcp.values():  # a token an [mcp.*] table takes from the environment
        for secret in named_secrets(server):
            register_secret(secret)


def is_loopback(url: str) -> bool:
    """Whether a base URL points at this machine (127.0.0.0/8, ::1, localhost)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def open_endpoint(profile: ProviderProfile) -> Endpoint:
    dialect = profile.dialect
    if profile.provider == "demo":
        from ..demo.process import start_demo  # the demo's dialects and model: only when it is used

        server = start_demo(profile.demo_speed)
        base = server.base_url + ("/v1" if dialect.startswith("openai") else "")
        return Endpoint(dialect, base, profile.model, profile.label, AUTH_HEADERS[dialect]("demo"), server.stop)
    base_url = profile.default_base_url()
    if not base_url:
        raise ConfigError(f"profile {profile.name!r} needs a base_url")
    variable = profile.key_variable()
    key = os.environ.get(variable) if variable else None
    register_secret(key)
    # a server of one's own needs no key: any OpenAI-compatible base URL, and a loopback one in every dialect
    local = profile.base_url is not None and (profile.provider == "openai-chat" or is_loopback(profile.base_url))
    if not key and not local:
        raise ConfigError(f"{profile.provider} needs an API key: set {variable} in the environment"
                          + (f" (or key_env in the profile {profile.name!r})" if profile.name != profile.provider
                             else ""))
    return Endpoint(dialect, base_url, profile.model, profile.label, AUTH_HEADERS[dialect](key))
