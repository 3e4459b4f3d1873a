"""The idempotency ledger: keys, claims, the interface, one module per back-end.

``keys`` defines what "the same call" is; ``claim`` what claiming can find;
``protocol`` what every back-end offers; ``sqlite`` is the embedded default
(nothing to set up), ``postgres`` the shared one. ``open_ledger`` is the one
place that chooses between them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .claim import Claim
from .keys import canonical_digest, canonical_json, conversation_scope, idempotency_key
from .protocol import Ledger, LedgerUnavailable
from .sqlite import SqliteLedger

if TYPE_CHECKING:
    from ..settings.config import Config

__all__ = ["Ledger", "LedgerUnavailable", "SqliteLedger", "Claim", "canonical_digest", "canonical_json",
           "conversation_scope", "idempotency_key", "open_ledger", "ledger_url", "LEDGER_URL_ENV"]

#: Overrides the config's ``ledger`` (a ``postgresql://`` URL; may carry a password: it is the environment).
LEDGER_URL_ENV = "CALLSTREAM_LEDGER_URL"


def ledger_url(config: Config | None) -> str | None:
    """The shared ledger's URL, if one is chosen: the environment, then the config."""
    return os.environ.get(LEDGER_URL_ENV) or (config.ledger if config is not None else None)


def open_ledger(config: Config | None = None, path: Path | None = None) -> Ledger:
    """The ledger the config (or CALLSTREAM_LEDGER_URL) chooses; the embedded
    sqlite one at ``path`` (default: the data dir's callstream.db) otherwise.
    A URL that is not PostgreSQL's is a ConfigError."""
    from ..settings.checks import ConfigError
    from ..settings.ledger import DEFAULT_LEASE, POSTGRES_SCHEMES

    url = ledger_url(config)
    if url:
        if not url.startswith(POSTGRES_SCHEMES):
            raise ConfigError(f"{LEDGER_URL_ENV} must be a postgresql:// URL")
        try:
            from .postgres import PostgresLedger
        except ImportError as exc:
            raise ConfigError(f"the PostgreSQL ledger needs psycopg 3 (pip install psycopg[binary]): {exc}") from None
        return PostgresLedger(url, lease=config.ledger_lease if config is not None else DEFAULT_LEASE)
    if path is None:
        from ..files.paths import data_dir

        path = data_dir() / "callstream.db"
    return SqliteLedger(path)
