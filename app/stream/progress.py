"""How a running tool's progress reads on its card: one line, made inert.

A tool (an MCP server's ``notifications/progress``) reports a count, maybe a
total and maybe a message; the card shows the latest one as it comes. The
server's message is untrusted text, so it is made inert and cut here, once.
"""

from __future__ import annotations

import math

from .inert import inert

__all__ = ["progress_words", "PROGRESS_MESSAGE_CHARS"]

#: A progress message longer than this is cut (the card has one line for it).
PROGRESS_MESSAGE_CHARS = 120


def _number(value: float) -> str:
    return f"{value:g}" if math.isfinite(value) else "?"


def progress_words(progress: float, total: float | None = None, message: str | None = None) -> str:
    """``3/5 (60%) — message``; ``3 — message`` without a total."""
    words = _number(progress)
    if total is not None and math.isfinite(total) and total > 0:
        share = max(0.0, min(1.0, progress / total)) if math.isfinite(progress) else 0.0
        words = f"{words}/{_number(total)} ({share:.0%})"
    text = " ".join(inert(message).split()) if message else ""
    if len(text) > PROGRESS_MESSAGE_CHARS:
        text = text[:PROGRESS_MESSAGE_CHARS - 1] + "…"
    return f"{words} — {text}" if text else words
