"""Provider profiles (``[providers.NAME]``): which provider and model a
conversation talks to, with what timeouts, retries and request options, and
each provider's defaults (base URL, model, the environment variable that
holds its key). A profile names that variable; the key itself never lives in
the config file."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..rules.pacing import check_demo_speed
from ..rules.prices import OwnPrices, PriceBook
from ..stream import DIALECT_NAMES, jsonwrite
from .checks import ConfigError, check_keys, positive_float, string_list

__all__ = ["PROVIDER_NAMES", "PROVIDER_KEYS", "DEMO_MODEL", "DEMO_READ_TIMEOUT", "ProviderProfile", "bare_profile",
           "parse_provider", "price_book"]

#: What ``provider =`` (and ``--provider``) may name: a wire format, or the
#: embedded demo model (openai-chat on loopback, or the wire format it is told).
PROVIDER_NAMES = (*DIALECT_NAMES, "demo")

#: The keys a ``[providers.NAME]`` table may hold; anything else gets a warning naming it.
PROVIDER_KEYS = {"provider", "model", "base_url", "key_env", "connect_timeout", "read_timeout", "deadline",
                 "retries", "max_rounds", "options", "dialect", "speed", "tools", "system", "usage",
                 "prices", "context_window"}
#: The keys only the demo model reads (``_demo``).
DEMO_KEYS = ("dialect", "speed")

_DEFAULT_KEY_ENV = {
    "openai-chat": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
}

_DEFAULT_BASE_URL = {
    "openai-chat": "https://api.openai.com/v1",
    "openai-responses": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}

#: The embedded demo model's own name (what its server answers with when asked no other).
DEMO_MODEL = "demo"

_DEFAULT_MODEL = {
    "openai-chat": "gpt-4o-mini",
    "openai-responses": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "demo": DEMO_MODEL,
}

#: The demo model never pauses longer than a second or two on its own, so its
#: read timeout is short enough for ``/demo slow`` to show one firing.
DEMO_READ_TIMEOUT = 15.0


@dataclass(slots=True)
class ProviderProfile:
    name: str
    #: One of PROVIDER_NAMES; "demo" is the embedded model (openai-chat on loopback).
    provider: str = "demo"
    model: str = DEMO_MODEL
    base_url: str | None = None
    key_env: str | None = None
    connect_timeout: float = 10.0
    #: Longest silence between two chunks. Slow local models think for a while.
    read_timeout: float = 120.0
    #: The whole turn, so a trickle that never goes quiet still ends.
    deadline: float = 600.0
    retries: int = 3
    max_rounds: int = 8
    #: For "demo": which wire format the loopback model speaks.
    demo_dialect: str = "openai-chat"
    demo_speed: float = 1.0
    #: Extra request fields (``[providers.NAME.options]``: temperature, top_p…).
    options: dict[str, Any] = field(default_factory=dict)
    #: The tools this profile offers, by name; None: the demo's support tools
    #: with the demo provider, else only the config's own ``[tools.*]``.
    tools: list[str] | None = None
    #: This profile's system prompt (the config's top-level ``system`` otherwise).
    system: str | None = None
    #: Ask for token usage where the wire needs asking (OpenAI chat's
    #: ``stream_options.include_usage``); ``usage = false`` for a server that refuses the field.
    usage: bool = True
    #: This profile's own prices for its model (``[providers.NAME.prices]``), over the table's.
    prices: OwnPrices | None = None
    #: This profile's model's input limit in tokens, over the table's (a local server's ``--ctx-size``).
    context_window: int | None = None

    @property
    def dialect(self) -> str:
        return self.demo_dialect if self.provider == "demo" else self.provider

    @property
    def label(self) -> str:
        if self.provider == "demo":
            if self.demo_dialect != "openai-chat":
                return f"demo model (offline, scripted; speaking {self.demo_dialect})"
            return "demo model (offline, scripted)"
        return f"{self.provider} · {self.model}"

    def default_base_url(self) -> str | None:
        return self.base_url or _DEFAULT_BASE_URL.get(self.provider)

    def key_variable(self) -> str | None:
        return self.key_env or _DEFAULT_KEY_ENV.get(self.provider)

    def copy(self) -> ProviderProfile:
        """A copy whose options and tool list can change without changing this one."""
        profile = ProviderProfile(**{f: getattr(self, f) for f in ProviderProfile.__slots__})
        profile.options = dict(self.options)
        profile.tools = list(self.tools) if self.tools is not None else None
        return profile


def bare_profile(provider: str) -> ProviderProfile:
    """The profile ``--provider NAME`` (one of PROVIDER_NAMES) means when no
    ``[providers.NAME]`` is configured."""
    profile = ProviderProfile(name=provider, provider=provider, model=_DEFAULT_MODEL[provider])
    if provider == "demo":
        profile.read_timeout = DEMO_READ_TIMEOUT
    return profile


def parse_provider(name: str, table: Any, where: str, warnings: list[str]) -> ProviderProfile:
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    check_keys(table, PROVIDER_KEYS, where, warnings)
    provider = table.get("provider", "openai-chat")
    if provider not in PROVIDER_NAMES:
        raise ConfigError(f"{where}.provider must be one of {', '.join(PROVIDER_NAMES)}")
    for key in DEMO_KEYS:
        if key in table and provider != "demo":  # (``[providers.demo]`` alone is an OpenAI-compatible profile)
            warnings.append(f"{where}.{key} is the demo model's own setting, and this profile's provider is "
                            f"{provider!r}; it is ignored (add provider = \"demo\")")
    for key in ("api_key", "key"):
        if key in table:
            raise ConfigError(f"{where}.{key}: keys do not go in the config file; set key_env to the name of an "
                              "environment variable that holds it")
    profile = ProviderProfile(name=name, provider=provider, model=str(table.get("model", _DEFAULT_MODEL[provider])))
    if "base_url" in table:
        profile.base_url = str(table["base_url"])
    if "key_env" in table:
        profile.key_env = str(table["key_env"])
    profile.connect_timeout = positive_float(table, "connect_timeout", profile.connect_timeout, where)
    default_read = DEMO_READ_TIMEOUT if provider == "demo" else profile.read_timeout
    profile.read_timeout = positive_float(table, "read_timeout", default_read, where)
    profile.deadline = positive_float(table, "deadline", profile.deadline, where)
    retries = table.get("retries", profile.retries)
    if not isinstance(retries, int) or isinstance(retries, bool) or not 0 <= retries <= 10:
        raise ConfigError(f"{where}.retries must be a whole number from 0 to 10")
    profile.retries = retries
    rounds = table.get("max_rounds", profile.max_rounds)
    if not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= 100:
        raise ConfigError(f"{where}.max_rounds must be a whole number from 1 to 100")
    profile.max_rounds = rounds
    profile.options = _options(table.get("options", {}), where)
    if "usage" in table:
        if not isinstance(table["usage"], bool):
            raise ConfigError(f"{where}.usage must be true or false (whether to ask the server for token usage)")
        profile.usage = table["usage"]
    if "tools" in table:
        profile.tools = string_list(table["tools"], f"{where}.tools")
    if "system" in table:
        if not isinstance(table["system"], str):
            raise ConfigError(f"{where}.system must be a string")
        profile.system = table["system"]
    if "prices" in table:
        profile.prices = _prices(table["prices"], f"{where}.prices")
    if "context_window" in table:
        window = table["context_window"]
        if not isinstance(window, int) or isinstance(window, bool) or not 1 <= window <= 100_000_000:
            raise ConfigError(f"{where}.context_window must be a whole number of tokens from 1 to 100000000")
        profile.context_window = window
    if provider == "demo":
        _demo(profile, table, where)
    return profile


def _prices(table: Any, where: str) -> OwnPrices:
    """``{input = 2.5, output = 10, cached = 1.25}``: dollars per million tokens."""
    if not isinstance(table, dict) or not {"input", "output"} <= table.keys():
        raise ConfigError(f"{where} must be a table with input and output (dollars per million tokens; "
                          "cached optional), e.g. {{ input = 2.5, output = 10 }}")
    rates: dict[str, Decimal] = {}
    for key, value in table.items():
        if key not in ("input", "output", "cached"):
            raise ConfigError(f"{where}.{key} is not a price (input, output, cached)")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e6:
            raise ConfigError(f"{where}.{key} must be a number of dollars per million tokens, from 0")
        rates[key] = Decimal(str(value))
    return OwnPrices(rates["input"], rates["output"], rates.get("cached"))


def price_book(profiles: Iterable[ProviderProfile], current: ProviderProfile) -> PriceBook:
    """The prices and windows a conversation is shown with: every profile's own (the current one's
    first, for a model two profiles name), the table for the rest, looked up under the provider the
    current profile's base URL names."""
    ordered = [current, *(p for p in profiles if p is not current)]
    own = {p.model: p.prices for p in reversed(ordered) if p.prices is not None}
    windows = {p.model: p.context_window for p in reversed(ordered) if p.context_window is not None}
    # the embedded model under its own name is nobody's (told another name, it is priced as that model)
    demo = {DEMO_MODEL} if any(p.provider == "demo" and p.model == DEMO_MODEL for p in ordered) else set()
    return PriceBook(own, windows, current.default_base_url(), untabled=demo)


def _options(options: Any, where: str) -> dict[str, Any]:
    if not isinstance(options, dict):
        raise ConfigError(f"{where}.options must be a table of request fields")
    for name, value in options.items():
        try:  # the writer that will send them (TOML has nan, inf and dates; JSON has none)
            jsonwrite.encode(value)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}.options.{name} cannot be sent as JSON ({exc}): use a finite number, "
                              "a string, true/false, or an array or table of those") from None
    return dict(options)


def _demo(profile: ProviderProfile, table: dict[str, Any], where: str) -> None:
    """The demo model's own keys: the wire format it speaks and how fast."""
    profile.demo_dialect = str(table.get("dialect", "openai-chat"))
    if profile.demo_dialect not in DIALECT_NAMES:
        raise ConfigError(f"{where}.dialect must be one of {', '.join(DIALECT_NAMES)}")
    try:
        profile.demo_speed = check_demo_speed(table.get("speed", 1.0), f"{where}.speed")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if profile.demo_dialect == "gemini":
        # the demo streams Gemini calls as partialArgs only when asked, as Vertex does: ask
        from ..stream.dialects.gemini import STREAM_ARGUMENTS

        for name, value in STREAM_ARGUMENTS.items():
            profile.options.setdefault(name, value)
