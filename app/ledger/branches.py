"""What ran on another branch: the same tool with the same arguments,
claimed in a conversation's lineage in a turn off the path being continued.

Written over the ledger interface (``entries``), so every back-end answers
it the same way without a statement of its own. The dispatcher asks it only
for a conversation that has branches or was forked (an empty lineage asks
nothing), so the common, linear case costs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from .keys import canonical_digest
from .protocol import Ledger

__all__ = ["ran_elsewhere", "ran_on_path", "Lineage"]

#: (the conversation as keys name it, the turn indices on the path being
#: continued): the conversation itself first, then those it was forked from.
Lineage = Sequence[tuple[str, Collection[int]]]


def _same_arguments(stored: Any, wanted: str) -> bool:
    """Whether a stored entry's arguments are ``wanted`` (a ``canonical_digest``):
    digests are compared, so neither side is written out whole as a string."""
    try:
        value = json.loads(stored) if isinstance(stored, str | bytes) else stored
        return canonical_digest(value) == wanted
    except (TypeError, ValueError):
        return False


def ran_elsewhere(ledger: Ledger, lineage: Lineage, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Entries (oldest claim first) for this call on another branch."""
    wanted = canonical_digest(arguments)
    found: list[dict[str, Any]] = []
    for conversation, ours in lineage:
        for entry in ledger.entries(conversation):
            if entry["tool"] == tool and entry["turn"] not in ours and _same_arguments(entry["arguments"], wanted):
                found.append(entry)
    return sorted(found, key=lambda e: e["claimed_at"] or 0.0)


def ran_on_path(ledger: Ledger, lineage: Lineage, tool: str, arguments: dict[str, Any],
                this_turn: tuple[str, int]) -> list[dict[str, Any]]:
    """Entries (oldest claim first) for this call in a turn ON the path being
    continued (an earlier turn of this line of conversation, or one a fork
    copied), other than ``this_turn`` (conversation, turn) itself — where the
    key, not this, keeps a retried call to once."""
    wanted = canonical_digest(arguments)
    found: list[dict[str, Any]] = []
    for conversation, ours in lineage:
        for entry in ledger.entries(conversation):
            if (entry["tool"] == tool and entry["turn"] in ours and (conversation, entry["turn"]) != this_turn
                    and _same_arguments(entry["arguments"], wanted)):
                found.append(entry)
    return sorted(found, key=lambda e: e["claimed_at"] or 0.0)
