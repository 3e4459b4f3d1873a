"""Opening callstream's sqlite files the one way they are all opened:
autocommit (transactions are explicit), WAL, rows by name, and created
user-only (0600) — transcripts, the ledger and the support store alike."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["connect"]


def connect(path: Path, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """``synchronous="FULL"`` where a commit must survive power loss (the ledger's claims)."""
    existed = path.exists()
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'FULL' else 'NORMAL'}")
    if not existed:
        for suffix in ("", "-wal", "-shm"):
            candidate = Path(str(path) + suffix)
            if candidate.exists():
                os.chmod(candidate, 0o600)
    return db
