"""The config file (TOML), read into a ``Config``: ``load_config`` and the
settings every part of it holds. Each kind of table is read by its own
module beside this one: provider profiles (``profiles``), command tools
(``tools``), limits, the ledger, approvals, the everyday settings
(``everyday``: prompt, roles, keys, theme, recordings) and ``[mcp.NAME]``
(``mcp``); the shared checks and ``ConfigError`` are in ``checks``.

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

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files.paths import config_path
from ..stream.limits import DEFAULT_LIMITS, Limits
from .approval import parse_approval
from .checks import ConfigError, check_keys
from .everyday import RECORDINGS_KEYS, ROLE_KEYS, Role, parse_keys, parse_recordings, parse_roles, parse_text
from .ledger import DEFAULT_LEASE, parse_ledger
from .limits import MAX_CALLS_PER_TURN, MAX_CONCURRENT_TOOLS, parse_call_limits, parse_limits
from .mcp import MCPConfigError, MCPServerConfig, parse_servers
from .profiles import PROVIDER_KEYS, PROVIDER_NAMES, ProviderProfile, bare_profile, parse_provider
from .tools import TOOL_KEYS, CommandToolConfig, check_profile_tools, parse_tool

__all__ = ["Config", "load_config", "KNOWN_KEYS"]

#: The keys each kind of table may hold; anything else gets a warning naming it.
#: A feature that reads a new key adds it to its table's set.
KNOWN_KEYS: dict[str, set[str]] = {
    "top": {"default", "record", "system", "theme", "providers", "tools", "roles", "keys", "recordings", "ledger",
            "team", "ledger_lease", "mcp", "approval", "limits", "max_calls_per_turn", "max_concurrent_tools",
            "compact"},
    "provider": PROVIDER_KEYS,
    "tool": TOOL_KEYS,
    "role": ROLE_KEYS,
    "recordings": RECORDINGS_KEYS,
}


@dataclass(slots=True)
class Config:
    path: Path | None = None
    default: str | None = None
    #: Record every response stream (``record = false`` in the file turns it off).
    record: bool = True
    #: Calls one turn may run; the rest are ``not run``, and the turn says so.
    max_calls_per_turn: int = MAX_CALLS_PER_TURN
    #: Tools running at once (the rest wait as ``waiting``, unclaimed).
    max_concurrent_tools: int = MAX_CONCURRENT_TOOLS
    providers: dict[str, ProviderProfile] = field(default_factory=dict)
    tools: dict[str, CommandToolConfig] = field(default_factory=dict)
    #: A shared ledger's URL (``postgresql://…``, no password); None: the embedded sqlite one.
    ledger: str | None = None
    #: The shared conversation namespace: every client with the same team derives
    #: the same keys for the same conversation (``keys.conversation_scope``).
    team: str | None = None
    #: How long a claim holds without being renewed (PostgreSQL ledgers).
    ledger_lease: float = DEFAULT_LEASE
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
    #: ``compact = "auto"``: compact before sending when the next request would fill the share of the
    #: model's window the meter warns at (``chat.window.WARN_AT``); "off" (the default): only
    #: ``/compact`` and ``ask --compact`` do.
    compact: str = "off"
    #: Unknown keys (typos), one line each, for the CLI and the TUI to show.
    warnings: list[str] = field(default_factory=list)

    def role(self, name: str) -> Role:
        if name not in self.roles:
            known = ", ".join(self.roles) or "none are configured"
            raise ConfigError(f"unknown role {name!r} (known: {known})")
        return self.roles[name]

    def profile(self, name: str | None = None, provider: str | None = None, model: str | None = None,
                base_url: str | None = None) -> ProviderProfile:
        """The profile to use: a named one, else the default, else the demo (its ``[providers.demo]``
        profile when that is one of the demo's: its speed and wire format are what the person set);
        ``--provider`` may name a profile or a bare provider."""
        chosen = name or provider
        if chosen and chosen in self.providers:
            profile = self.providers[chosen].copy()
        elif chosen:
            if chosen not in PROVIDER_NAMES:
                known = ", ".join([*PROVIDER_NAMES, *self.providers])
                raise ConfigError(f"unknown provider {chosen!r} (known: {known})")
            profile = bare_profile(chosen)
        elif self.default:
            if self.default not in self.providers:
                raise ConfigError(f"{self.path}: default = {self.default!r} names no [providers.*] profile")
            return self.profile(self.default, None, model, base_url)
        else:
            configured = self.providers.get("demo")
            profile = configured.copy() if configured is not None and configured.provider == "demo" \
                else bare_profile("demo")
        if model:
            profile.model = model
        if base_url:
            profile.base_url = base_url
        return profile


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
    check_keys(data, KNOWN_KEYS["top"], str(path), warnings)
    config.limits = parse_limits(data, str(path))
    default = data.get("default")
    if default is not None and not isinstance(default, str):
        raise ConfigError(f"{path}: default must be a profile name")
    config.default = default
    record = data.get("record", True)
    if not isinstance(record, bool):
        raise ConfigError(f"{path}: record must be true or false")
    config.record = record
    ledger = parse_ledger(data, str(path))
    config.ledger, config.team, config.ledger_lease = ledger.url, ledger.team, ledger.lease
    config.max_calls_per_turn, config.max_concurrent_tools = parse_call_limits(data, str(path))
    providers = data.get("providers", {})
    tools = data.get("tools", {})
    if not isinstance(providers, dict) or not isinstance(tools, dict):
        raise ConfigError(f"{path}: [providers] and [tools] must be tables")
    for name, table in providers.items():
        config.providers[name] = parse_provider(name, table, f"{path}: providers.{name}", warnings)
    for name, table in tools.items():
        config.tools[name] = parse_tool(name, table, f"{path}: tools.{name}", warnings)
    try:
        config.mcp = parse_servers(data.get("mcp", {}), str(path))
    except MCPConfigError as exc:
        raise ConfigError(str(exc)) from None
    config.allow, config.deny = parse_approval(data, str(path))
    for name, profile in config.providers.items():
        check_profile_tools(str(path), name, profile.tools or [], set(config.tools), set(config.mcp))
    _everyday(config, data, path)
    return config


def _everyday(config: Config, data: dict[str, Any], path: Path) -> None:
    config.system = parse_text(data, "system", path, "a string")
    config.theme = parse_text(data, "theme", path, "a theme name")
    compact = parse_text(data, "compact", path, '"auto" or "off"') or "off"
    if compact not in ("auto", "off"):
        raise ConfigError(f'{path}: compact must be "auto" or "off" (got {compact[:40]!r})')
    config.compact = compact
    config.roles = parse_roles(data, path, config.warnings)
    config.keys = parse_keys(data, path)
    config.recordings_max_age_days, config.recordings_max_mb = parse_recordings(data, path, config.warnings)
