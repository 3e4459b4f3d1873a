"""Opening callstream's sqlite files the one way they are all opened:
autocommit (transactions are explicit), WAL, rows by name, created
user-only (0600), and every text parameter written through ``redact`` — so
no key reaches the transcripts, the ledger or the support store, whichever
table or column a later change adds."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .stream.redact import redact

__all__ = ["connect"]


def _clean(parameters: Any) -> Any:
    if isinstance(parameters, Mapping):
        return {k: redact(v) if isinstance(v, str) else v for k, v in parameters.items()}
    return tuple(redact(v) if isinstance(v, str) else v for v in parameters)


class _Connection(sqlite3.Connection):
    """A connection whose statements never write a registered secret."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # type: ignore[override]
        return super().execute(sql, _clean(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:  # type: ignore[override]
        return super().executemany(sql, (_clean(p) for p in parameters))


def connect(path: Path, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """``synchronous="FULL"`` where a commit must survive power loss (the ledger's claims)."""
    existed = path.exists()
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False,
                         factory=_Connection)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'FULL' else 'NORMAL'}")
    if not existed:
        for suffix in ("", "-wal", "-shm"):
            candidate = Path(str(path) + suffix)
            if candidate.exists():
                os.chmod(candidate, 0o600)
    return db
