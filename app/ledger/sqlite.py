"""The sqlite idempotency ledger, the embedded default (DESIGN.md step 7; reliability.md §3).

A call's key (``keys.idempotency_key``) is *claimed* — committed with
``synchronous=FULL`` — before the tool starts, and the result is recorded
when it ends. A key already claimed is never run again: a recorded result is
returned as it is; a claim without a result (the process died mid-run) is
``unknown``. Two processes racing for one key: the primary key lets exactly
one insert win; the other waits for the winner's result while the winner's
process is alive.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any

from ..dbfile import connect
from .claim import Claim
from .keys import canonical_json

__all__ = ["Ledger"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    key TEXT PRIMARY KEY,
    conversation TEXT NOT NULL,
    turn INTEGER NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    state TEXT NOT NULL,            -- claimed | ran | failed | cancelled
    result TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    claimed_at REAL NOT NULL,
    finished_at REAL,
    owner TEXT NOT NULL              -- host:pid of the claiming process
);
"""


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True  # cannot tell: assume it is
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path, synchronous="FULL")  # a claim survives power loss once committed
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def claim(self, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any], occurrence: int,
              retry_cancelled: bool = False, wait: float = 30.0) -> Claim:
        """Claim ``key`` before running; see ``Claim`` for what can come back."""
        deadline = time.monotonic() + wait
        while True:
            try:
                self._db.execute(
                    "INSERT INTO ledger (key, conversation, turn, tool, arguments, occurrence, state, claimed_at, "
                    "owner) VALUES (?, ?, ?, ?, ?, ?, 'claimed', ?, ?)",
                    (key, conversation, turn, tool, canonical_json(arguments), occurrence, time.time(), _owner()))
                return Claim(key, "claimed")
            except sqlite3.IntegrityError:
                pass
            row = self._db.execute("SELECT * FROM ledger WHERE key = ?", (key,)).fetchone()
            if row is None:
                continue  # removed between the two statements: try again
            state = row["state"]
            if state in ("ran", "failed"):
                return Claim(key, state, row["result"], bool(row["is_error"]))
            if state == "cancelled":
                if retry_cancelled:
                    cursor = self._db.execute(
                        "UPDATE ledger SET state = 'claimed', claimed_at = ?, owner = ?, result = NULL "
                        "WHERE key = ? AND state = 'cancelled'", (time.time(), _owner(), key))
                    if cursor.rowcount == 1:
                        return Claim(key, "claimed")
                    continue
                return Claim(key, "failed", row["result"] or "cancelled", True)
            # claimed, no result: a crash, or another process running it now
            if row["owner"] == _owner() or not _alive(row["owner"]) or time.monotonic() > deadline:
                return Claim(key, "unknown")
            time.sleep(0.05)

    def finish(self, key: str, state: str, result: str, is_error: bool) -> None:
        self._db.execute("UPDATE ledger SET state = ?, result = ?, is_error = ?, finished_at = ? WHERE key = ?",
                         (state, result, int(is_error), time.time(), key))

    def entries(self, conversation: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM ledger" + (" WHERE conversation = ?" if conversation else "") + " ORDER BY claimed_at"
        rows = self._db.execute(sql, (conversation,) if conversation else ()).fetchall()
        out = []
        for row in rows:
            entry = dict(row)
            entry["state"] = "unknown" if entry["state"] == "claimed" and not _alive(entry["owner"]) else entry["state"]
            entry["is_error"] = bool(entry["is_error"])
            out.append(entry)
        return out
