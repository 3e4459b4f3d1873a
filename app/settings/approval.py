"""``[approval] allow / deny`` (tool-name patterns; deny beats allow) and a
tool's own ``approval = "never" | "ask" | "always-ask"``, as read from the
config file. What they decide is ``app/tools/approvals.py``'s."""

from __future__ import annotations

from typing import Any

from .checks import ConfigError
from .mcp import APPROVAL_MODES

__all__ = ["approval_mode", "parse_approval"]


def approval_mode(value: Any, where: str) -> str | None:
    if value is not None and value not in APPROVAL_MODES:
        raise ConfigError(f"{where} must be one of {', '.join(APPROVAL_MODES)}")
    return None if value is None else str(value)


def parse_approval(data: dict[str, Any], where: str) -> tuple[list[str], list[str]]:
    """The ``[approval]`` table's allow and deny lists."""
    approval = data.get("approval", {})
    if not isinstance(approval, dict):
        raise ConfigError(f"{where}: [approval] must be a table with allow and deny lists")
    return _patterns(approval, "allow", f"{where}: approval"), _patterns(approval, "deny", f"{where}: approval")


def _patterns(table: dict[str, Any], key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}.{key} must be a list of tool names or patterns (\"git__*\")")
    return list(value)
