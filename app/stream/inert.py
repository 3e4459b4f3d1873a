"""Make untrusted text inert before it reaches a terminal.

Model output, tool arguments, tool results and provider error messages may
carry escape sequences (clear screen, OSC 52 clipboard writes, OSC 8 links),
8-bit C1 controls, or bidi overrides that reorder what the user reads
(reliability.md §4.6, catalogue G). Rich and Textual strip only a few of
these, so every control character except newline and tab is replaced with a
visible ``\\xNN`` / ``\\u202e`` escape here, once, before any renderer sees it.
What a terminal sees is also redacted (``redact``): a provider that echoes
the key cannot put it on the screen either.

Machine output (``--json``) gets the same treatment in JSON's own terms:
``inert_json`` writes those characters as ``\\uXXXX`` escapes, so the
document means exactly the same and printing it cannot drive a terminal.
"""

from __future__ import annotations

import re

from .redact import redact

TYPE_CHECKING = False  # neither typing nor json is imported on the --help path
if TYPE_CHECKING:
    from typing import Any

__all__ = ["inert", "inert_json"]

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """``text`` with every control and bidi-override character made visible, and secrets redacted."""
    return _UNSAFE.sub(_escape, redact(text))


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def inert_json(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON text that is safe to print: redacted, with C1
    controls, DEL, bidi overrides and line separators written as escapes
    (json.dumps escapes C0 controls itself; these it leaves raw)."""
    import json

    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _UNSAFE.sub(_json_escape, redact(text))
