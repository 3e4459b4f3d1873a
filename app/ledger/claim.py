"""What a claim in any ledger back-end can come back as."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Claim", "CLAIM_STATES"]

#: ``claimed`` (ours: run it), ``ran`` / ``failed`` (already recorded),
#: ``unknown`` (claimed before, no result, its holder gone or its lease run
#: out: never re-run), ``elsewhere`` (another live client holds it and the
#: bounded wait for its result ran out).
CLAIM_STATES = ("claimed", "ran", "failed", "unknown", "elsewhere")


@dataclass(slots=True)
class Claim:
    """What claiming a key found (``state`` is one of CLAIM_STATES). ``result``
    is the stored one for ``ran`` / ``failed``. ``fence`` is the token a
    ``claimed`` holder writes its result with: a back-end refuses a result
    whose token is not the key's current one, so a holder whose claim was
    since taken over cannot overwrite. ``holder`` names who holds the claim
    (``host:pid``) for ``elsewhere`` and ``unknown``. ``unknown`` is also what
    a side-effecting call cancelled while it ran was recorded as (``result``
    says so): never re-run."""

    key: str
    state: str
    result: str | None = None
    is_error: bool = False
    fence: int = 0
    holder: str | None = None
