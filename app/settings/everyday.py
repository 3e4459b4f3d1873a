"""The everyday settings: the system prompt, named roles (``[roles.NAME]``),
key bindings (``[keys]``), the theme, and how long recordings are kept
(``[recordings]``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checks import ConfigError, check_keys, positive_float

__all__ = ["Role", "ROLE_KEYS", "RECORDINGS_KEYS", "parse_text", "parse_roles", "parse_keys", "parse_recordings"]

#: The keys a ``[roles.NAME]`` table may hold; anything else gets a warning naming it.
ROLE_KEYS = {"system", "provider"}
#: The keys of ``[recordings]``.
RECORDINGS_KEYS = {"max_age_days", "max_mb"}


@dataclass(slots=True)
class Role:
    name: str
    system: str
    #: A profile (or provider) the role uses, if it names one.
    provider: str | None = None


def parse_text(data: dict[str, Any], key: str, path: Path, what: str) -> str | None:
    """A top-level string (``system``, ``theme``), or None if absent."""
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{path}: {key} must be {what}")
    return value


def parse_roles(data: dict[str, Any], path: Path, warnings: list[str]) -> dict[str, Role]:
    roles = data.get("roles", {})
    if not isinstance(roles, dict):
        raise ConfigError(f"{path}: [roles] must be a table")
    out: dict[str, Role] = {}
    for name, table in roles.items():
        where = f"{path}: roles.{name}"
        if not isinstance(table, dict) or not isinstance(table.get("system"), str):
            raise ConfigError(f"{where} needs system = \"…\" (the role's system prompt)")
        check_keys(table, ROLE_KEYS, where, warnings)
        provider = table.get("provider")
        if provider is not None and not isinstance(provider, str):
            raise ConfigError(f"{where}.provider must be a profile name")
        out[name] = Role(name, table["system"], provider)
    return out


def parse_keys(data: dict[str, Any], path: Path) -> dict[str, str]:
    """``[keys]``: a binding id (``cancel``, ``retry``…) → comma-separated keys."""
    keys = data.get("keys", {})
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        raise ConfigError(f"{path}: [keys] maps a binding id to keys, e.g. cancel = \"escape,ctrl+c\"")
    return dict(keys)


def parse_recordings(data: dict[str, Any], path: Path, warnings: list[str]) -> tuple[float | None, float | None]:
    """``[recordings]``: the longest a recording is kept (days) and the most they may take (MB); None: no limit."""
    recordings = data.get("recordings", {})
    if not isinstance(recordings, dict):
        raise ConfigError(f"{path}: [recordings] must be a table")
    where = f"{path}: recordings"
    check_keys(recordings, RECORDINGS_KEYS, where, warnings)
    hint = " (leave it out for no limit)"
    max_age = positive_float(recordings, "max_age_days", 0, where, hint) if "max_age_days" in recordings else None
    max_mb = positive_float(recordings, "max_mb", 0, where, hint) if "max_mb" in recordings else None
    return max_age, max_mb
