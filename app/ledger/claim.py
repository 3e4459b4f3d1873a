"""What a claim in any ledger back-end can come back as."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Claim"]


@dataclass(slots=True)
class Claim:
    """What claiming a key found. ``state``: ``claimed`` (ours: run it),
    ``ran`` / ``failed`` (already recorded: ``result`` is the stored one),
    ``unknown`` (claimed before, no result: never re-run)."""

    key: str
    state: str
    result: str | None = None
    is_error: bool = False
