"""Make untrusted text inert before it reaches a terminal.

Model output, tool arguments, tool results and provider error messages may
carry escape sequences (clear screen, OSC 52 clipboard writes, OSC 8 links),
8-bit C1 controls, or bidi overrides that reorder what the user reads
(reliability.md §4.6, catalogue G). Rich and Textual strip only a few of
these, so every control character except newline and tab is replaced with a
visible ``\\xNN`` / ``\\u202e`` escape here, once, before any renderer sees it.
"""

from __future__ import annotations

import re

__all__ = ["inert"]

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """``text`` with every control and bidi-override character made visible."""
    return _UNSAFE.sub(_escape, text)
