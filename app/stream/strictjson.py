"""Strict parsing of a finished call's arguments (DESIGN.md, step 6).

Python's ``json.loads`` is lenient in exactly the places that matter for a
call about to run: it keeps the last of two duplicate keys, accepts NaN and
Infinity, and accepts lone surrogate escapes. Each of those makes the call
ambiguous or un-representable downstream, so each is refused here.
"""

from __future__ import annotations

import json
from typing import Any

from .limits import TooDeep, loads

__all__ = ["StrictJSONError", "parse_arguments"]


class StrictJSONError(ValueError):
    """The text is not exactly one strict JSON object; the message says why."""


def _no_constants(name: str) -> Any:
    raise StrictJSONError(f"{name} is not JSON")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r}")
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_no_constants)


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            for key, sub in item.items():
                stack.append(key)
                stack.append(sub)
        elif isinstance(item, list):
            stack.extend(item)
    return False


def parse_arguments(text: str) -> dict[str, Any]:
    """Parse ``text`` as exactly one JSON object, or raise StrictJSONError."""
    if not text.strip():
        raise StrictJSONError("empty arguments")
    try:
        value = loads(text, _DECODER)
    except StrictJSONError:
        raise
    except TooDeep as exc:
        raise StrictJSONError(str(exc)) from None
    except json.JSONDecodeError as exc:
        where = "" if exc.msg.endswith(" at") else " at"  # "Unterminated string starting at" names its place
        raise StrictJSONError(f"{exc.msg}{where} line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise StrictJSONError("nesting too deep") from None
    if not isinstance(value, dict):
        raise StrictJSONError(f"expected an object, got {type(value).__name__}")
    # Lone surrogates can only come from \uD800-\uDFFF escapes; skip the walk
    # when the text has no such escape at all.
    lowered = text.lower() if "\\u" in text else ""
    if "\\ud" in lowered and _has_lone_surrogate(value):
        raise StrictJSONError("lone surrogate in a string")
    return value


def call_arguments(raw: str) -> dict[str, Any]:
    """A call's arguments from its whole buffer: ``{}`` for a no-argument
    call (nothing streamed), else the strict parse (raises StrictJSONError)."""
    return {} if not raw.strip() else parse_arguments(raw)
