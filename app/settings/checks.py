"""The error every part of the config file raises, and the checks the
readers of its tables share: unknown keys (a warning naming the likely
typo, never an error), positive numbers, lists of names."""

from __future__ import annotations

import difflib
import math
from typing import Any

__all__ = ["ConfigError", "check_keys", "positive_float", "string_list"]


class ConfigError(ValueError):
    """The config file (or a command-line choice) cannot be used; says why."""


def check_keys(table: dict[str, Any], known: set[str], where: str, warnings: list[str]) -> None:
    """One warning per key of ``table`` outside ``known``, with the closest known key if there is one."""
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(sorted(known))})"
            warnings.append(f"{where}: unknown key {key!r}{hint}; it is ignored")


def positive_float(table: dict[str, Any], key: str, default: float, where: str, hint: str = "") -> float:
    """A positive, finite number (TOML's ``nan`` and ``inf`` are neither: a
    ``nan`` limit compares false with everything and silently turns it off)."""
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        shown = f", not {value}" if isinstance(value, float) and not math.isfinite(value) else ""
        raise ConfigError(f"{where}.{key} must be a positive number{shown}{hint}")
    return float(value)


def string_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of names")
    return list(value)
