"""The sqlite idempotency ledger, the embedded default (DESIGN.md step 7; reliability.md §3).

A call's key (``keys.idempotency_key``) is *claimed* — committed with
``synchronous=FULL`` — before the tool starts, and the result is recorded
when it ends. A key already claimed is never run again: a recorded result is
returned as it is; a claim without a result (the process died mid-run) is
``unknown``, and so is a side-effecting call cancelled while it ran (recorded
as ``unknown``). Two processes racing for one key: the primary key lets exactly
one insert win; the other waits for the winner's result while the winner's
process is alive (its lease is its life: one machine can ask the kernel).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from ..files.dbfile import DataFileError, connect
from ..files.owners import alive, this_owner
from .claim import Claim
from .keys import canonical_json
from .protocol import ENTRY_FIELDS, LedgerUnavailable

__all__ = ["SqliteLedger"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    key TEXT PRIMARY KEY,
    conversation TEXT NOT NULL,
    turn INTEGER NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    state TEXT NOT NULL,            -- claimed | ran | failed | cancelled | unknown
    result TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    claimed_at REAL NOT NULL,
    finished_at REAL,
    owner TEXT NOT NULL,             -- host:pid of the claiming process
    fence INTEGER NOT NULL DEFAULT 1 -- bumped by every re-claim (a cancelled read-only call)
);
"""


class SqliteLedger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._db = connect(path, synchronous="FULL")  # a claim survives power loss once committed
        self._db.executescript(_SCHEMA)
        columns = {row["name"] for row in self._db.execute("PRAGMA table_info(ledger)")}
        if "fence" not in columns:  # a ledger written before fence tokens
            self._db.execute("ALTER TABLE ledger ADD COLUMN fence INTEGER NOT NULL DEFAULT 1")

    def close(self) -> None:
        self._db.close()

    def claim(self, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any], occurrence: int,
              retry_cancelled: bool = False, wait: float = 30.0) -> Claim:
        """Claim ``key`` before running; see ``Claim`` for what can come back.
        A file that cannot take the claim (a full disk) is ``LedgerUnavailable``:
        the call is then not run, and says why."""
        try:
            return self._claim(key, conversation, turn, tool, arguments, occurrence, retry_cancelled, wait)
        except DataFileError as exc:
            raise LedgerUnavailable(str(exc)) from None

    def _claim(self, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any], occurrence: int,
               retry_cancelled: bool, wait: float) -> Claim:
        deadline = time.monotonic() + wait
        while True:
            try:
                self._db.execute(
                    "INSERT INTO ledger (key, conversation, turn, tool, arguments, occurrence, state, claimed_at, "
                    "owner, fence) VALUES (?, ?, ?, ?, ?, ?, 'claimed', ?, ?, 1)",
                    (key, conversation, turn, tool, canonical_json(arguments), occurrence, time.time(), this_owner()))
                return Claim(key, "claimed", fence=1)
            except sqlite3.IntegrityError:
                pass
            row = self._db.execute("SELECT * FROM ledger WHERE key = ?", (key,)).fetchone()
            if row is None:
                continue  # removed between the two statements: try again
            state = row["state"]
            if state in ("ran", "failed"):
                return Claim(key, state, row["result"], bool(row["is_error"]), row["fence"])
            if state == "unknown":  # a transport died mid-call, a side effect cancelled mid-run: never rerun
                return Claim(key, "unknown", row["result"], True, row["fence"])
            if state == "cancelled":
                if retry_cancelled:
                    taken = self._db.execute(
                        "UPDATE ledger SET state = 'claimed', claimed_at = ?, owner = ?, result = NULL, "
                        "fence = fence + 1 WHERE key = ? AND state = 'cancelled' RETURNING fence",
                        (time.time(), this_owner(), key)).fetchone()
                    if taken is not None:
                        return Claim(key, "claimed", fence=taken[0])
                    continue
                return Claim(key, "failed", row["result"] or "cancelled", True, row["fence"])
            # claimed, no result: a crash, or another process running it now
            owner = row["owner"]
            if owner == this_owner() or not alive(owner):
                return Claim(key, "unknown", fence=row["fence"], holder=owner)
            if time.monotonic() > deadline:
                return Claim(key, "elsewhere", fence=row["fence"], holder=owner)
            time.sleep(0.05)

    def finish(self, key: str, state: str, result: str, is_error: bool, *, fence: int) -> bool:
        """Record a claimed call's result; a file that cannot take it is
        ``LedgerUnavailable``, which the card reports (never a silent ``unknown``)."""
        try:
            cursor = self._db.execute(
                "UPDATE ledger SET state = ?, result = ?, is_error = ?, finished_at = ? "
                "WHERE key = ? AND fence = ? AND state = 'claimed'",
                (state, result, int(is_error), time.time(), key, fence))
        except DataFileError as exc:
            raise LedgerUnavailable(str(exc)) from None
        return cursor.rowcount == 1

    @staticmethod
    def _entry(row: sqlite3.Row) -> dict[str, Any]:
        entry = {name: row[name] for name in ENTRY_FIELDS}
        entry["state"] = "unknown" if entry["state"] == "claimed" and not alive(entry["owner"]) else entry["state"]
        entry["is_error"] = bool(entry["is_error"])
        return entry

    def lookup(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT * FROM ledger WHERE key = ?", (key,)).fetchone()
        return None if row is None else self._entry(row)

    def entries(self, conversation: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM ledger" + (" WHERE conversation = ?" if conversation else "") + " ORDER BY claimed_at"
        rows = self._db.execute(sql, (conversation,) if conversation else ()).fetchall()
        return [self._entry(row) for row in rows]
