"""The ledger as an interface: what the dispatcher, ``callstream ledger`` and
the tests need from any back-end (sqlite embedded, PostgreSQL shared).

Kept small on purpose, so that a back-end is a few statements and so that
changes to the dispatcher map onto it: claim a key before the tool starts,
record the result with the claim's fence token, look one key up, list them.
Lease renewal is the back-end's own business while a claim is held (sqlite
needs none: a live process is its lease).
"""

from __future__ import annotations

from typing import Any, Protocol

from .claim import Claim

__all__ = ["Ledger", "LedgerUnavailable", "ENTRY_FIELDS"]

#: The fields of an entry (``lookup``, ``entries``), the same on every back-end.
#: ``state`` is ``claimed`` (held, live), ``ran``, ``failed``, ``cancelled`` or
#: ``unknown`` (held by a process that died or whose lease ran out).
ENTRY_FIELDS = ("key", "conversation", "turn", "tool", "arguments", "occurrence", "state", "result", "is_error",
                "claimed_at", "finished_at", "owner", "fence")


class LedgerUnavailable(RuntimeError):
    """The ledger cannot be reached (a dropped database connection). Never a
    reason to run a call: a claim that cannot be made is ``not run``, a
    result that cannot be recorded is reported as such on the card."""


class Ledger(Protocol):
    #: Where it lives, for messages (a path, or a URL without its password).
    where: str

    def claim(self, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any], occurrence: int,
              retry_cancelled: bool = False, wait: float = 30.0) -> Claim:
        """Claim ``key`` before running it; waits up to ``wait`` seconds for a
        result another live holder is producing. Raises LedgerUnavailable."""
        ...

    def finish(self, key: str, state: str, result: str, is_error: bool, *, fence: int) -> bool:
        """Record a claimed key's result; False if ``fence`` is no longer the
        key's (a stale holder: nothing written). Raises LedgerUnavailable."""
        ...

    def lookup(self, key: str) -> dict[str, Any] | None:
        """One entry (ENTRY_FIELDS), or None."""
        ...

    def entries(self, conversation: str | None = None) -> list[dict[str, Any]]:
        """Every entry, oldest claim first (ENTRY_FIELDS)."""
        ...

    def close(self) -> None: ...
