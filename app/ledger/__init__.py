"""The idempotency ledger: keys, claims, and one module per back-end.

``keys`` defines what "the same call" is; ``claim`` what claiming can find;
``sqlite`` is the embedded default back-end (nothing to set up).
"""

from __future__ import annotations

from .claim import Claim
from .keys import canonical_json, idempotency_key
from .sqlite import Ledger

__all__ = ["Ledger", "Claim", "canonical_json", "idempotency_key"]
