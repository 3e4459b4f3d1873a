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
import threading
import time
from pathlib import Path
from typing import Any

from ..files.dbfile import DataFileError, connect, fill_blob, hand_back, redacted_chunks
from ..files.owners import alive, this_owner
from .claim import Claim
from .keys import canonical_pieces
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
-- a claim's arguments (canonical JSON, UTF-8) since they are written a piece
-- at a time; ledger.arguments is then ''
CREATE TABLE IF NOT EXISTS ledger_arguments (
    key TEXT PRIMARY KEY,
    arguments BLOB NOT NULL
);
"""

#: A row as entries read it: the arguments from ``ledger_arguments`` where a
#: claim wrote them there (``_insert``), else from the row (a claim written
#: before, or by another tool). The cast reads the BLOB as the text it is.
_ROW = ", ".join("COALESCE((SELECT CAST(a.arguments AS TEXT) FROM ledger_arguments AS a WHERE a.key = ledger.key), "
                 "ledger.arguments) AS arguments" if name == "arguments" else name for name in ENTRY_FIELDS)


class SqliteLedger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._db = connect(path, synchronous="FULL")  # a claim survives power loss once committed
        #: The connection is shared by the dispatcher's threads, and a claim is
        #: a transaction of several statements (``_insert``): another thread's
        #: statement in between would join it (and a rollback would take it).
        self._lock = threading.RLock()
        # its statements read a row or two; a claim's arguments pass through the cache once, as they are written
        self._db.execute("PRAGMA cache_size=-256")
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
        size = sum(map(len, redacted_chunks(canonical_pieces(arguments))))
        while True:
            if self._insert(key, conversation, turn, tool, arguments, occurrence, size):
                return Claim(key, "claimed", fence=1)
            with self._lock:
                row = self._db.execute("SELECT state, result, is_error, fence, owner FROM ledger WHERE key = ?",
                                       (key,)).fetchone()
            if row is None:
                continue  # removed between the two statements: try again
            state = row["state"]
            if state in ("ran", "failed"):
                return Claim(key, state, row["result"], bool(row["is_error"]), row["fence"])
            if state == "unknown":  # a transport died mid-call, a side effect cancelled mid-run: never rerun
                return Claim(key, "unknown", row["result"], True, row["fence"])
            if state == "cancelled":
                if retry_cancelled:
                    with self._lock:
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

    def _insert(self, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any], occurrence: int,
                size: int) -> bool:
        """The claim's row, and its arguments' canonical JSON written a piece
        at a time (``fill_blob``) into a row of ``ledger_arguments``. Bound as
        one parameter, a 10 MB argument was a 10 MB string here and two more
        copies inside sqlite; kept in the claim's own row, sqlite would also
        materialise the ``zeroblob`` (it is not the record's last column) and
        ``finish`` would read and rewrite all of it to set the state. One
        transaction, so the claim is committed with its arguments or not at
        all; False when the key is already claimed."""
        with self._lock:
            return self._insert_locked(key, conversation, turn, tool, arguments, occurrence, size)

    def _insert_locked(self, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any],
                       occurrence: int, size: int) -> bool:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT INTO ledger (key, conversation, turn, tool, arguments, occurrence, state, claimed_at, "
                "owner, fence) VALUES (?, ?, ?, ?, '', ?, 'claimed', ?, ?, 1)",
                (key, conversation, turn, tool, occurrence, time.time(), this_owner()))
            cursor = db.execute("INSERT OR REPLACE INTO ledger_arguments (key, arguments) VALUES (?, zeroblob(?))",
                                (key, size))
            if size:
                assert cursor.lastrowid is not None  # the INSERT made the row
                fill_blob(db, "ledger_arguments", "arguments", cursor.lastrowid,
                          redacted_chunks(canonical_pieces(arguments)))
            db.execute("COMMIT")
            hand_back(db, size)
        except sqlite3.IntegrityError:
            db.execute("ROLLBACK")
            return False
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return True

    def finish(self, key: str, state: str, result: str, is_error: bool, *, fence: int) -> bool:
        """Record a claimed call's result; a file that cannot take it is
        ``LedgerUnavailable``, which the card reports (never a silent ``unknown``)."""
        try:
            with self._lock:
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
        with self._lock:
            row = self._db.execute(f"SELECT {_ROW} FROM ledger WHERE key = ?", (key,)).fetchone()
        return None if row is None else self._entry(row)

    def entries(self, conversation: str | None = None) -> list[dict[str, Any]]:
        where = " WHERE conversation = ?" if conversation else ""
        sql = f"SELECT {_ROW} FROM ledger{where} ORDER BY claimed_at"
        with self._lock:
            rows = self._db.execute(sql, (conversation,) if conversation else ()).fetchall()
        return [self._entry(row) for row in rows]
