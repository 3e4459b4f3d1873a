"""Idempotency keys: one definition of "the same call" (DESIGN.md step 7).

A key is a sha256 over RFC 8785-style canonical JSON of ``[conversation, turn
index, tool, arguments, occurrence]``, with the branch after the conversation
once a conversation has more than one (``[conversation, branch, turn, …]``);
every ledger back-end uses these.

The branch is part of "the same call" because a conversation is a tree: an
edited message or a regenerated reply starts a new branch, and a call there
is a new decision the user asked for, not a retry of the old one. The main
branch (``""``) keeps the five-part key, so every key claimed before
branches existed still names the same call. Whether a call that ran on
another branch should run again is the dispatcher's question (it asks the
ledger what ran elsewhere), not the key's.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from typing import Any

from ..stream.jsonwrite import pieces
from ..stream.limits import check_depth

__all__ = ["canonical_digest", "canonical_json", "canonical_pieces", "conversation_scope", "idempotency_key"]


def _number(value: float) -> int | float:
    if math.isfinite(value) and value == int(value) and abs(value) < 2**53:
        return int(value)  # 1.0 and 1, -0.0 and 0 are one number
    return value


def _canon(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, dict):
        # RFC 8785 orders keys by UTF-16 code units
        return {k: _canon(value[k]) for k in sorted(value, key=lambda k: k.encode("utf-16-be"))}
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    raise TypeError(f"not JSON: {type(value).__name__}")


def canonical_json(value: Any) -> str:
    """RFC 8785-style: sorted keys, no whitespace, integral floats as ints,
    strings as they are (no Unicode normalisation), arrays in order.
    Nesting deeper than the one depth limit is ``TooDeep`` (strict parsing
    already refuses such arguments; this walk must not be the one that recurses)."""
    return json.dumps(_canon(check_depth(value)), ensure_ascii=False, separators=(",", ":"), sort_keys=False,
                      allow_nan=False)


def canonical_pieces(value: Any) -> Iterator[str]:
    """``canonical_json(value)`` as pieces of bounded size (``jsonwrite.pieces``):
    what a ledger stores and hashes without a string of a 10 MB argument's size.
    The depth is checked before the first piece comes out."""
    return pieces(_canon(check_depth(value)))


def canonical_digest(value: Any) -> str:
    """sha256 (hex) of ``canonical_json(value)``, hashed as it is written: a
    10 MB argument costs no 10 MB string to name it."""
    digest = hashlib.sha256()
    update = digest.update
    for piece in canonical_pieces(value):
        update(piece.encode())
    return digest.hexdigest()


def idempotency_key(conversation: str, turn: int, tool: str, arguments: dict[str, Any], occurrence: int,
                    branch: str = "") -> str:
    parts: list[Any] = [conversation, branch] if branch else [conversation]
    return canonical_digest([*parts, turn, tool, arguments, occurrence])


def conversation_scope(conversation: str, team: str | None = None) -> str:
    """The conversation as keys name it. With a shared namespace (``team`` in
    the config) every client derives the same keys for the same conversation
    id — continued, exported and imported, or named on the command line — and
    two teams never share keys even if their ids coincide. Without one it is
    the id itself (the keys of a ledger written before teams stay valid)."""
    return f"team:{team}/{conversation}" if team else conversation
