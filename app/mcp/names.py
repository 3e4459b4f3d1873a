"""The name a model is shown for a server's tool: ``server__tool``.

Every wire format accepts ``^[A-Za-z0-9_-]{1,64}$`` (OpenAI's limit is the
strictest; Gemini's character set is wider). Anything else in a server's tool
name becomes ``_``, and a name longer than 64 keeps its head and gets a short
hash of the original so two long names never collide (a
name that had to change gets the hash too, for the same reason).
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["tool_name", "MAX_NAME", "SEPARATOR"]

MAX_NAME = 64
SEPARATOR = "__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    raw = f"{server}{SEPARATOR}{tool}"
    name = _BAD.sub("_", raw)
    if len(name) <= MAX_NAME and name == raw:
        return name
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}_{digest}"
