"""What an MCP server tells us unasked: its log messages.

A server's ``notifications/message`` lines at or above its ``log_level``
(``[mcp.NAME] log_level``, default ``info``) are appended to its log in the
data dir and the last few kept for the ``/mcp`` panel. Each line is one
line, redacted and made inert where it is made, since a server may log
anything (a token it was configured with, escape sequences).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..settings.mcp import LOG_LEVELS
from ..stream.inert import inert

__all__ = ["ServerMessages", "KEPT_MESSAGES", "MESSAGE_CHARS", "message_line"]

#: Log lines kept per server for the /mcp panel.
KEPT_MESSAGES = 50
#: A log line longer than this is cut.
MESSAGE_CHARS = 500


def message_line(level: str, logger: str | None, data: Any) -> str:
    """One log message as one inert line: ``[warning] logger: text``."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    text = " ".join(inert(text).split())
    if len(text) > MESSAGE_CHARS:
        text = text[:MESSAGE_CHARS - 1] + "…"
    who = f"{inert(logger)}: " if logger else ""
    return f"[{level}] {who}{text}"


class ServerMessages:
    """The SDK's ``logging_callback`` for one server."""

    def __init__(self, level: str, path: Path | None) -> None:
        self.level = level
        self.path = path
        self.lines: deque[str] = deque(maxlen=KEPT_MESSAGES)
        #: Called after each kept line (the /mcp panel redraws).
        self.listeners: list[Callable[[], None]] = []

    def wanted(self, level: str) -> bool:
        if self.level == "off":
            return False
        rank = LOG_LEVELS.index(level) if level in LOG_LEVELS else 0
        return rank >= LOG_LEVELS.index(self.level)

    async def __call__(self, params: Any) -> None:
        level = str(getattr(params, "level", "info"))
        if not self.wanted(level):
            return
        line = message_line(level, getattr(params, "logger", None), getattr(params, "data", None))
        self.lines.append(line)
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):
                listener()
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, f"[callstream: log message] {line}\n".encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except OSError:
            pass  # a log that cannot be written is no reason to fail the server
