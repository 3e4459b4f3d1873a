"""The config file (TOML): provider profiles and command tools.

Example::

    default = "local"
    max_calls_per_turn = 128        # calls one turn may run (the rest: not run, stated)
    max_concurrent_tools = 8        # tools running at once (the rest wait, unclaimed)

    [providers.local]
    provider = "openai-chat"
    model = "qwen2.5:7b"
    base_url = "http://127.0.0.1:11434/v1"
    key_env = "OLLAMA_API_KEY"      # optional: the *name* of an env var
    read_timeout = 300
    options = { temperature = 0 }   # extra request fields

    ledger = "postgresql://callstream@db.example/callstream"   # optional: a shared ledger
    team = "support"                # optional: the namespace shared conversations' keys live in
    ledger_lease = 30               # seconds a claim holds without renewal (PostgreSQL)

    [tools.append_note]
    command = ["python3", "notes.py"]
    description = "Append a note to the team log"
    read_only = false
    timeout = 10
    display = [["text", "Note"]]
    parameters = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }

    system = "Answer briefly."        # the system prompt (``--system``, ``/system``)
    [roles.reviewer]                  # ``--role reviewer``: a named system prompt
    system = "Review the code you are shown."

    [keys]                            # key bindings: binding id → keys
    cancel = "escape,ctrl+c"

Keys never live here: a profile names the environment variable that holds
one; the ledger's password comes from the environment too (``PGPASSWORD`` or
``~/.pgpass``, read by libpq), never from this file. A config that cannot
be read is a ``ConfigError`` with the file and the reason, shown to the
user as one line (exit 2), never a traceback. A key this
module does not know (a typo) is not an error but a warning naming it
(``Config.warnings``), so a misspelled ``read_timout`` does not pass silently.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files.paths import config_path
from ..rules.pacing import check_demo_speed
from ..stream import jsonwrite
from ..stream.limits import DEFAULT_LIMITS, Limits, TooDeep, check_depth, loads
from .mcp import MCPConfigError, MCPServerConfig, parse_display, parse_servers

__all__ = ["Config", "ConfigError", "url_has_password", "ProviderProfile", "CommandToolConfig", "load_config",
           "DIALECT_NAMES", "KNOWN_KEYS"]

DIALECT_NAMES = ("openai-chat", "openai-responses", "anthropic", "gemini", "demo")

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

_DEFAULT_MODEL = {
    "openai-chat": "gpt-4o-mini",
    "openai-responses": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "demo": "demo",
}


#: The demo model never pauses longer than a second or two on its own, so its
#: read timeout is short enough for ``/demo slow`` to show one firing.
DEMO_READ_TIMEOUT = 15.0


#: The keys each kind of table may hold; anything else gets a warning naming it.
#: A feature that reads a new key adds it here.
KNOWN_KEYS: dict[str, set[str]] = {
    "top": {"default", "record", "system", "theme", "providers", "tools", "roles", "keys", "recordings", "ledger",
            "team", "ledger_lease", "mcp", "approval", "limits", "max_calls_per_turn", "max_concurrent_tools"},
    "provider": {"provider", "model", "base_url", "key_env", "connect_timeout", "read_timeout", "deadline",
                 "retries", "max_rounds", "options", "dialect", "speed", "tools", "system", "usage"},
    "tool": {"command", "description", "parameters", "read_only", "display", "timeout", "approval"},
    "role": {"system", "provider"},
    "recordings": {"max_age_days", "max_mb"},
}


class ConfigError(ValueError):
    """The config file (or a command-line choice) cannot be used; says why."""


@dataclass(slots=True)
class ProviderProfile:
    name: str
    #: One of DIALECT_NAMES; "demo" is the embedded model (openai-chat on loopback).
    provider: str = "demo"
    model: str = "demo"
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


@dataclass(slots=True)
class CommandToolConfig:
    name: str
    command: list[str]
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    read_only: bool = False
    display: list[tuple[str, str]] = field(default_factory=list)
    timeout: float = 30.0
    approval: str | None = None


@dataclass(slots=True)
class Role:
    name: str
    system: str
    #: A profile (or provider) the role uses, if it names one.
    provider: str | None = None


@dataclass(slots=True)
class Config:
    path: Path | None = None
    default: str | None = None
    #: Record every response stream (``record = false`` in the file turns it off).
    record: bool = True
    #: Calls one turn may run; the rest are ``not run``, and the turn says so.
    max_calls_per_turn: int = 128
    #: Tools running at once (the rest wait as ``waiting``, unclaimed).
    max_concurrent_tools: int = 8
    providers: dict[str, ProviderProfile] = field(default_factory=dict)
    tools: dict[str, CommandToolConfig] = field(default_factory=dict)
    #: A shared ledger's URL (``postgresql://…``, no password); None: the embedded sqlite one.
    ledger: str | None = None
    #: The shared conversation namespace: every client with the same team derives
    #: the same keys for the same conversation (``keys.conversation_scope``).
    team: str | None = None
    #: How long a claim holds without being renewed (PostgreSQL ledgers).
    ledger_lease: float = 30.0
    #: ``[limits]``: byte limits on what a provider or a tool may send (app/stream/limits.py).
    limits: Limits = DEFAULT_LIMITS
    #: ``[mcp.NAME]`` tool servers (app/settings/mcp.py).
    mcp: dict[str, MCPServerConfig] = field(default_factory=dict)
    #: ``[approval] allow / deny``: tool-name patterns (app/tools/approvals.py); deny beats allow.
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    #: The default system prompt.
    system: str | None = None
    #: Named roles (``[roles.NAME]``): a system prompt, optionally a profile.
    roles: dict[str, Role] = field(default_factory=dict)
    #: Key bindings: a binding id (``cancel``, ``retry``…) → comma-separated keys.
    keys: dict[str, str] = field(default_factory=dict)
    #: The theme when none was chosen in the palette yet.
    theme: str | None = None
    #: Recordings older than this many days are removed when a session starts and after each exchange
    #: (None: kept; app/store/housekeeping.py).
    recordings_max_age_days: float | None = None
    #: The recordings directory is pruned, oldest first, to this many MB (None: no cap).
    recordings_max_mb: float | None = None
    #: Unknown keys (typos), one line each, for the CLI and the TUI to show.
    warnings: list[str] = field(default_factory=list)

    def role(self, name: str) -> Role:
        if name not in self.roles:
            known = ", ".join(self.roles) or "none are configured"
            raise ConfigError(f"unknown role {name!r} (known: {known})")
        return self.roles[name]

    def profile(self, name: str | None = None, provider: str | None = None, model: str | None = None,
                base_url: str | None = None) -> ProviderProfile:
        """The profile to use: a named one, else the default, else the demo;
        ``--provider`` may name a profile or a bare provider."""
        chosen = name or provider
        if chosen and chosen in self.providers:
            base = self.providers[chosen]
            profile = ProviderProfile(**{f: getattr(base, f) for f in ProviderProfile.__slots__})
            profile.options = dict(base.options)
            profile.tools = list(base.tools) if base.tools is not None else None
        elif chosen:
            if chosen not in DIALECT_NAMES:
                known = ", ".join([*DIALECT_NAMES, *self.providers])
                raise ConfigError(f"unknown provider {chosen!r} (known: {known})")
            profile = ProviderProfile(name=chosen, provider=chosen, model=_DEFAULT_MODEL[chosen])
            if chosen == "demo":
                profile.read_timeout = DEMO_READ_TIMEOUT
        elif self.default:
            if self.default not in self.providers:
                raise ConfigError(f"{self.path}: default = {self.default!r} names no [providers.*] profile")
            return self.profile(self.default, None, model, base_url)
        else:
            profile = ProviderProfile(name="demo", read_timeout=DEMO_READ_TIMEOUT)
        if model:
            profile.model = model
        if base_url:
            profile.base_url = base_url
        return profile


def _float(table: dict[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where}.{key} must be a positive number")
    return float(value)


def _check_keys(table: dict[str, Any], kind: str, where: str, warnings: list[str]) -> None:
    known = KNOWN_KEYS[kind]
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(sorted(known))})"
            warnings.append(f"{where}: unknown key {key!r}{hint}; it is ignored")


def _string_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of names")
    return list(value)


def _provider(name: str, table: Any, where: str, warnings: list[str] | None = None) -> ProviderProfile:
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    _check_keys(table, "provider", where, warnings if warnings is not None else [])
    provider = table.get("provider", "openai-chat")
    if provider not in DIALECT_NAMES:
        raise ConfigError(f"{where}.provider must be one of {', '.join(DIALECT_NAMES)}")
    for key in ("api_key", "key"):
        if key in table:
            raise ConfigError(f"{where}.{key}: keys do not go in the config file; set key_env to the name of an "
                              "environment variable that holds it")
    profile = ProviderProfile(name=name, provider=provider, model=str(table.get("model", _DEFAULT_MODEL[provider])))
    if "base_url" in table:
        profile.base_url = str(table["base_url"])
    if "key_env" in table:
        profile.key_env = str(table["key_env"])
    profile.connect_timeout = _float(table, "connect_timeout", profile.connect_timeout, where)
    default_read = DEMO_READ_TIMEOUT if provider == "demo" else profile.read_timeout
    profile.read_timeout = _float(table, "read_timeout", default_read, where)
    profile.deadline = _float(table, "deadline", profile.deadline, where)
    retries = table.get("retries", profile.retries)
    if not isinstance(retries, int) or isinstance(retries, bool) or not 0 <= retries <= 10:
        raise ConfigError(f"{where}.retries must be a whole number from 0 to 10")
    profile.retries = retries
    rounds = table.get("max_rounds", profile.max_rounds)
    if not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= 100:
        raise ConfigError(f"{where}.max_rounds must be a whole number from 1 to 100")
    profile.max_rounds = rounds
    options = table.get("options", {})
    if not isinstance(options, dict):
        raise ConfigError(f"{where}.options must be a table of request fields")
    for name, value in options.items():
        try:  # the writer that will send them (TOML has nan, inf and dates; JSON has none)
            jsonwrite.encode(value)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}.options.{name} cannot be sent as JSON ({exc}): use a finite number, "
                              "a string, true/false, or an array or table of those") from None
    profile.options = dict(options)
    if "usage" in table:
        if not isinstance(table["usage"], bool):
            raise ConfigError(f"{where}.usage must be true or false (whether to ask the server for token usage)")
        profile.usage = table["usage"]
    if "tools" in table:
        profile.tools = _string_list(table["tools"], f"{where}.tools")
    if "system" in table:
        if not isinstance(table["system"], str):
            raise ConfigError(f"{where}.system must be a string")
        profile.system = table["system"]
    if provider == "demo":
        profile.demo_dialect = str(table.get("dialect", "openai-chat"))
        if profile.demo_dialect not in DIALECT_NAMES[:4]:
            raise ConfigError(f"{where}.dialect must be one of {', '.join(DIALECT_NAMES[:4])}")
        try:
            profile.demo_speed = check_demo_speed(table.get("speed", 1.0), f"{where}.speed")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if profile.demo_dialect == "gemini":
            # the demo streams Gemini calls as partialArgs only when asked, as Vertex does: ask
            from ..stream.dialects.gemini import STREAM_ARGUMENTS

            for name, value in STREAM_ARGUMENTS.items():
                profile.options.setdefault(name, value)
    return profile


def _check_schema(name: str, parameters: dict[str, Any], where: str) -> None:
    """A tool schema that is not a schema (``required = 5``) is refused when
    the config loads, naming the tool — not when the model first calls it."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        check_depth(parameters)
        Draft202012Validator.check_schema(parameters)
    except TooDeep as exc:
        raise ConfigError(f"{where}.parameters: {exc}") from None
    except SchemaError as exc:
        at = ".".join(str(p) for p in exc.absolute_path) or "the top level"
        raise ConfigError(f"{where}.parameters is not a valid JSON Schema ({exc.message[:120]} at {at}); "
                          f"the tool {name!r} cannot be offered until it is fixed") from None


def _limits(data: dict[str, Any], where: str) -> Limits:
    table = data.get("limits", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [limits] must be a table of byte counts")
    values: dict[str, int] = {}
    for key in Limits.__dataclass_fields__:
        value = table.get(key, getattr(DEFAULT_LIMITS, key))
        if isinstance(value, bool) or not isinstance(value, int) or value < 1024:
            raise ConfigError(f"{where}: limits.{key} must be a whole number of bytes, at least 1024")
        values[key] = value
    unknown = sorted(set(table) - set(values))
    if unknown:
        raise ConfigError(f"{where}: limits.{unknown[0]} is not a limit (known: {', '.join(values)})")
    return Limits(**values)


def _tool(name: str, table: Any, where: str, warnings: list[str] | None = None) -> CommandToolConfig:
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    _check_keys(table, "tool", where, warnings if warnings is not None else [])
    command = table.get("command")
    if isinstance(command, str):
        import shlex

        command = shlex.split(command)
    if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
        raise ConfigError(f"{where}.command must be a command line (a string or a list of strings)")
    parameters = table.get("parameters", {"type": "object", "properties": {}})
    if isinstance(parameters, str):
        try:
            parameters = loads(parameters)
        except ValueError as exc:
            raise ConfigError(f"{where}.parameters is not JSON: {exc}") from None
    if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
        raise ConfigError(f"{where}.parameters must be a JSON Schema for an object")
    _check_schema(name, parameters, where)
    try:
        display = parse_display(table.get("display", []), f"{where}.display")
    except MCPConfigError as exc:
        raise ConfigError(str(exc)) from None
    return CommandToolConfig(
        name=name,
        command=command,
        description=str(table.get("description", "")),
        parameters=parameters,
        read_only=bool(table.get("read_only", False)),
        display=display,
        timeout=_float(table, "timeout", 30.0, where),
        approval=_approval_mode(table.get("approval"), f"{where}.approval"),
    )


def _ledger_settings(config: Config, data: dict[str, Any], where: str) -> None:
    ledger = data.get("ledger")
    if ledger is not None:
        if not isinstance(ledger, str) or not ledger.startswith(("postgresql://", "postgres://")):
            raise ConfigError(f"{where}: ledger must be a postgresql:// URL (leave it out for the embedded sqlite "
                              "ledger)")
        if url_has_password(ledger):
            raise ConfigError(f"{where}: ledger: passwords do not go in the config file; set PGPASSWORD (or use "
                              "~/.pgpass) in the environment")
        config.ledger = ledger
    team = data.get("team")
    if team is not None:
        if not isinstance(team, str) or not team.strip():
            raise ConfigError(f"{where}: team must be a non-empty name")
        config.team = team
    lease = data.get("ledger_lease", config.ledger_lease)
    if isinstance(lease, bool) or not isinstance(lease, int | float) or not 1 <= lease <= 86400:
        raise ConfigError(f"{where}: ledger_lease must be a number of seconds from 1 to 86400")
    config.ledger_lease = float(lease)


def url_has_password(url: str) -> bool:
    """True if a connection URL carries a password (``user:secret@``)."""
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).password is not None
    except ValueError:
        return False
def _approval_mode(value: Any, where: str) -> str | None:
    from .mcp import APPROVAL_MODES

    if value is not None and value not in APPROVAL_MODES:
        raise ConfigError(f"{where} must be one of {', '.join(APPROVAL_MODES)}")
    return value


def _patterns(table: dict[str, Any], key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}.{key} must be a list of tool names or patterns (\"git__*\")")
    return list(value)


def load_config(path: Path | None = None) -> Config:
    """Read the config file; a missing file is an empty config, unless
    ``CALLSTREAM_CONFIG`` names it: a path the user chose that is not there
    is a mistake to report, not a reason to fall back to the demo."""
    if path is None and os.environ.get("CALLSTREAM_CONFIG") and not config_path().exists():
        raise ConfigError(f"CALLSTREAM_CONFIG points at {config_path()}, which does not exist")
    path = path or config_path()
    if not path.exists():
        return Config(path=None)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deep to read") from None
    config = Config(path=path)
    warnings = config.warnings
    _check_keys(data, "top", str(path), warnings)
    config.limits = _limits(data, str(path))
    default = data.get("default")
    if default is not None and not isinstance(default, str):
        raise ConfigError(f"{path}: default must be a profile name")
    config.default = default
    record = data.get("record", True)
    if not isinstance(record, bool):
        raise ConfigError(f"{path}: record must be true or false")
    config.record = record
    _ledger_settings(config, data, str(path))
    for key, top in (("max_calls_per_turn", 100_000), ("max_concurrent_tools", 256)):
        value = data.get(key, getattr(config, key))
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= top:
            raise ConfigError(f"{path}: {key} must be a whole number from 1 to {top:,}")
        setattr(config, key, value)
    providers = data.get("providers", {})
    tools = data.get("tools", {})
    if not isinstance(providers, dict) or not isinstance(tools, dict):
        raise ConfigError(f"{path}: [providers] and [tools] must be tables")
    for name, table in providers.items():
        config.providers[name] = _provider(name, table, f"{path}: providers.{name}", warnings)
    for name, table in tools.items():
        config.tools[name] = _tool(name, table, f"{path}: tools.{name}", warnings)
    try:
        config.mcp = parse_servers(data.get("mcp", {}), str(path))
    except MCPConfigError as exc:
        raise ConfigError(str(exc)) from None
    approval = data.get("approval", {})
    if not isinstance(approval, dict):
        raise ConfigError(f"{path}: [approval] must be a table with allow and deny lists")
    config.allow = _patterns(approval, "allow", f"{path}: approval")
    config.deny = _patterns(approval, "deny", f"{path}: approval")
    for name, profile in config.providers.items():
        for tool in profile.tools or []:
            server = tool.split("__", 1)[0] if "__" in tool else None
            if tool not in config.tools and tool not in BUILTIN_TOOL_NAMES and server not in config.mcp:
                raise ConfigError(f"{path}: providers.{name}.tools names {tool!r}, which is neither a built-in "
                                  f"tool ({', '.join(BUILTIN_TOOL_NAMES)}), a [tools.*] table nor an MCP "
                                  "server's tool (server__tool)")
    _extras(config, data, path)
    return config


#: The demo's support-store tools (app/tools/builtin.py): offered with the demo
#: provider, and elsewhere only when a profile lists them.
BUILTIN_TOOL_NAMES = ("search_orders", "get_order", "create_ticket")


def _extras(config: Config, data: dict[str, Any], path: Path) -> None:
    """The everyday settings: system prompt, roles, key bindings, theme, recording limits."""
    system = data.get("system")
    if system is not None and not isinstance(system, str):
        raise ConfigError(f"{path}: system must be a string")
    config.system = system
    theme = data.get("theme")
    if theme is not None and not isinstance(theme, str):
        raise ConfigError(f"{path}: theme must be a theme name")
    config.theme = theme
    roles = data.get("roles", {})
    if not isinstance(roles, dict):
        raise ConfigError(f"{path}: [roles] must be a table")
    for name, table in roles.items():
        where = f"{path}: roles.{name}"
        if not isinstance(table, dict) or not isinstance(table.get("system"), str):
            raise ConfigError(f"{where} needs system = \"…\" (the role's system prompt)")
        _check_keys(table, "role", where, config.warnings)
        provider = table.get("provider")
        if provider is not None and not isinstance(provider, str):
            raise ConfigError(f"{where}.provider must be a profile name")
        config.roles[name] = Role(name, table["system"], provider)
    keys = data.get("keys", {})
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        raise ConfigError(f"{path}: [keys] maps a binding id to keys, e.g. cancel = \"escape,ctrl+c\"")
    config.keys = dict(keys)
    recordings = data.get("recordings", {})
    if not isinstance(recordings, dict):
        raise ConfigError(f"{path}: [recordings] must be a table")
    _check_keys(recordings, "recordings", f"{path}: recordings", config.warnings)
    if "max_age_days" in recordings:
        config.recordings_max_age_days = _float(recordings, "max_age_days", 0, f"{path}: recordings")
    if "max_mb" in recordings:
        config.recordings_max_mb = _float(recordings, "max_mb", 0, f"{path}: recordings")
