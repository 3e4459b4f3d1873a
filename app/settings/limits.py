"""How much may arrive and how much may run: ``[limits]`` (byte limits on
what a provider or a tool may send, app/stream/limits.py) and the per-turn
call limits (``max_calls_per_turn``, ``max_concurrent_tools``)."""

from __future__ import annotations

from typing import Any

from ..stream.limits import DEFAULT_LIMITS, Limits
from .checks import ConfigError

__all__ = ["MAX_CALLS_PER_TURN", "MAX_CONCURRENT_TOOLS", "parse_limits", "parse_call_limits"]

#: Calls one turn may run; the rest are ``not run``, and the turn says so.
MAX_CALLS_PER_TURN = 128
#: Tools running at once (the rest wait as ``waiting``, unclaimed).
MAX_CONCURRENT_TOOLS = 8


def parse_limits(data: dict[str, Any], where: str) -> Limits:
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


def parse_call_limits(data: dict[str, Any], where: str) -> tuple[int, int]:
    """``max_calls_per_turn`` and ``max_concurrent_tools``."""
    values = []
    for key, default, top in (("max_calls_per_turn", MAX_CALLS_PER_TURN, 100_000),
                              ("max_concurrent_tools", MAX_CONCURRENT_TOOLS, 256)):
        value = data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= top:
            raise ConfigError(f"{where}: {key} must be a whole number from 1 to {top:,}")
        values.append(value)
    return values[0], values[1]
