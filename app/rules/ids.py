"""Conversation ids: the one alphabet, checked wherever an id arrives from
outside (an import, a recording's header, ``--conversation``, ``open ID``,
``export ID``), because an id becomes a file name (the recording) and must
never be a path: ``../x`` or ``/etc/x`` is refused before anything is opened.

The alphabet: ASCII letters, digits, ``_`` and ``-``, 1 to 128 characters.
callstream makes ids as 32 lowercase hex digits (uuid4), which fit.
"""

from __future__ import annotations

import re

__all__ = ["ID_ALPHABET", "InvalidId", "check_id"]

ID_ALPHABET = "ASCII letters, digits, '_' and '-' (1 to 128 of them)"

_VALID = re.compile(r"[A-Za-z0-9_-]{1,128}")


class InvalidId(ValueError):
    """An id outside the alphabet; the message quotes it (inert) and says the rule."""


def check_id(value: object, what: str = "conversation id") -> str:
    """``value`` if it is a valid id, else ``InvalidId``."""
    if isinstance(value, str) and _VALID.fullmatch(value):
        return value
    shown = repr(value) if not isinstance(value, str) else repr(value[:60] + ("…" if len(value) > 60 else ""))
    raise InvalidId(f"{what} {shown} is not valid: an id is {ID_ALPHABET}")
