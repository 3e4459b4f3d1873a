"""Faults put into callstream's sqlite files from outside, and what those files hold, for tests.

A crash, an older version of callstream or a damaged disk leaves a file in a shape the code never
writes; a test that needs that shape makes it here, by name, instead of reaching into a Store's
or a Ledger's private connection. Each function opens the FILE with its own sqlite3 connection
(autocommit, like callstream's), does one thing and closes it. The files are in WAL mode, so a
Store or Ledger that has the file open sees the change at its next statement, as it would see
another process's.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.ledger.keys import canonical_json

__all__ = [
    "add_finished_turn",
    "bytes_held_for_calls",
    "call_buffers",
    "dead_owner",
    "damage_usage",
    "duplicate_a_call_key",
    "delete_behind_its_back",
    "leave_hold",
    "rows_of",
    "first_block_record",
    "inline_call_buffers",
    "interrupt_last_ran_call",
    "leave_dead_claim",
    "loop_parents",
    "prose_bytes",
    "prose_parts",
    "rename_conversation",
    "schema_version",
    "search_index",
]


@contextlib.contextmanager
def _file(path: Path | str) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    try:
        yield db
    finally:
        db.close()


# -- what a store file holds ---------------------------------------------------------------------------------------


def schema_version(path: Path | str) -> int:
    """The schema version the file says it is at (sqlite's user_version)."""
    with _file(path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def call_buffers(path: Path | str, conversation: str) -> list[str]:
    """The raw argument buffers kept for a conversation's calls (the ``call_arguments`` table)."""
    with _file(path) as db:
        rows = db.execute("SELECT CAST(raw AS TEXT) FROM call_arguments WHERE conversation = ?", (conversation,))
        return [row[0] for row in rows]


def search_index(path: Path | str) -> list[str]:
    """Every text the search index holds."""
    with _file(path) as db:
        return [row[0] for row in db.execute("SELECT body FROM search_text")]


def bytes_held_for_calls(path: Path | str) -> int:
    """The bytes of every block record and every call's argument buffer together."""
    with _file(path) as db:
        return int(db.execute("SELECT (SELECT SUM(LENGTH(record)) FROM blocks) + "
                              "(SELECT SUM(LENGTH(raw)) FROM call_arguments)").fetchone()[0])


def prose_bytes(path: Path | str) -> int:
    """How much prose is stored in pieces (``prose_parts``), in bytes."""
    with _file(path) as db:
        return int(db.execute("SELECT COALESCE(SUM(LENGTH(text)), 0) FROM prose_parts").fetchone()[0])


def prose_parts(path: Path | str) -> list[str]:
    """The stored pieces of prose, in order."""
    with _file(path) as db:
        return [row[0] for row in db.execute("SELECT text FROM prose_parts ORDER BY part")]


def first_block_record(path: Path | str) -> dict[str, Any]:
    """The stored record of the file's first block, decoded."""
    with _file(path) as db:
        record: dict[str, Any] = json.loads(db.execute("SELECT record FROM blocks").fetchone()[0])
        return record


# -- shapes the code never writes ----------------------------------------------------------------------------------


def add_finished_turn(path: Path | str, conversation: str, seq: int, turn: int = 0) -> None:
    """The entry row of a finished turn at ``seq``, for blocks that were put without one."""
    with _file(path) as db:
        db.execute("INSERT INTO entries (conversation, seq, kind, turn, state, started) VALUES (?, ?, 'turn', ?, "
                   "'done', 0)", (conversation, seq, turn))


def interrupt_last_ran_call(path: Path | str, conversation: str) -> None:
    """The file as a crash while the conversation's last ran call was running leaves it: that call
    ``running``, its turn still streaming, nothing stored after it."""
    with _file(path) as db:
        rows = db.execute("SELECT seq, idx, record FROM blocks WHERE conversation = ? ORDER BY seq DESC, idx",
                          (conversation,)).fetchall()
        for seq, idx, record in rows:
            data = json.loads(record)
            if data.get("type") == "tool_call" and data.get("state") == "ran":
                data["state"] = "running"
                db.execute("UPDATE blocks SET record = ? WHERE conversation = ? AND seq = ? AND idx = ?",
                           (json.dumps(data), conversation, seq, idx))
                db.execute("UPDATE entries SET state = 'streaming' WHERE conversation = ? AND seq = ?",
                           (conversation, seq))
                db.execute("DELETE FROM entries WHERE conversation = ? AND seq > ?", (conversation, seq))
                db.execute("DELETE FROM blocks WHERE conversation = ? AND seq > ?", (conversation, seq))
                return
    raise AssertionError(f"conversation {conversation} has no call that ran")


def inline_call_buffers(path: Path | str) -> None:
    """The shape files written before ``call_arguments`` have: each call's buffer (and its parse, if
    final) inline in its block record, the ``call_arguments`` table empty."""
    with _file(path) as db:
        raws = db.execute("SELECT seq, idx, CAST(raw AS TEXT) FROM call_arguments").fetchall()
        assert raws, "no call buffers to move"
        for seq, idx, raw in raws:
            (record,) = db.execute("SELECT record FROM blocks WHERE seq = ? AND idx = ?", (seq, idx)).fetchone()
            data = json.loads(record)
            data.update(arguments_raw=raw, arguments=json.loads(raw) if data["final"] else None)
            db.execute("UPDATE blocks SET record = ? WHERE seq = ? AND idx = ?", (json.dumps(data), seq, idx))
        db.execute("DELETE FROM call_arguments")


def damage_usage(path: Path | str, conversation: str) -> None:
    """A usage column that is not JSON, on every entry of the conversation."""
    with _file(path) as db:
        db.execute("UPDATE entries SET usage = '{not json' WHERE conversation = ?", (conversation,))


def duplicate_a_call_key(path: Path | str, conversation: str, tool: str) -> None:
    """The stored buffer of ``conversation``'s last call to ``tool`` given one of its keys twice (JSON
    that a lax parse accepts and the strict one refuses: a damaged or hand-edited file)."""
    with _file(path) as db:
        rows = db.execute("SELECT b.seq, b.idx, b.record, CAST(a.raw AS TEXT) FROM blocks b JOIN call_arguments a "
                          "USING (conversation, seq, idx) WHERE conversation = ? ORDER BY b.seq DESC",
                          (conversation,)).fetchall()
        for seq, idx, record, raw in rows:
            if json.loads(record).get("name") == tool:
                first = next(iter(json.loads(raw)))
                damaged = raw.rstrip()[:-1] + f', "{first}": "again"}}'
                db.execute("UPDATE call_arguments SET raw = ? WHERE conversation = ? AND seq = ? AND idx = ?",
                           (damaged, conversation, seq, idx))
                return
    raise AssertionError(f"conversation {conversation} has no stored call to {tool}")


def delete_behind_its_back(path: Path | str, conversation: str) -> None:
    """Every row of ``conversation`` deleted the way a callstream that knows nothing of the store's
    holds would (one transaction, no look at who is using it)."""
    with _file(path) as db:
        db.execute("BEGIN IMMEDIATE")
        for table in ("blocks", "call_arguments", "prose_parts", "search_text", "entries"):
            db.execute(f"DELETE FROM {table} WHERE conversation = ?", (conversation,))
        db.execute("DELETE FROM conversations WHERE id = ?", (conversation,))
        db.execute("COMMIT")


def leave_hold(path: Path | str, conversation: str, owner: str, doing: str) -> None:
    """A hold on ``conversation`` as a process that died mid-exchange (a crash, kill -9) leaves it."""
    with _file(path) as db:
        db.execute("INSERT INTO holds (conversation, owner, doing, since) VALUES (?, ?, ?, 0)",
                   (conversation, owner, doing))


def rows_of(path: Path | str, conversation: str) -> dict[str, int]:
    """How many rows each table of the store holds for ``conversation`` (tables holding none left out)."""
    tables = ("conversations", "entries", "blocks", "call_arguments", "prose_parts", "search_text", "holds")
    with _file(path) as db:
        counts = {table: db.execute(f"SELECT COUNT(*) FROM {table} WHERE "
                                    f"{'id' if table == 'conversations' else 'conversation'} = ?",
                                    (conversation,)).fetchone()[0] for table in tables}
    return {table: count for table, count in counts.items() if count}


def loop_parents(path: Path | str, conversation: str) -> None:
    """A loop in the conversation's tree: its first entry made to follow its last, so following
    parents from any entry never reaches a first one (the code never writes this; a hand-edited
    or damaged file can hold it)."""
    with _file(path) as db:
        first, last = db.execute("SELECT MIN(seq), MAX(seq) FROM entries WHERE conversation = ?",
                                 (conversation,)).fetchone()
        assert first is not None and first != last, "the conversation needs two entries for a loop"
        db.execute("UPDATE entries SET parent = ? WHERE conversation = ? AND seq = ?", (last, conversation, first))


def rename_conversation(path: Path | str, old: str, new: str) -> None:
    """Give a stored conversation another id (so a test can choose it)."""
    with _file(path) as db:
        db.execute("UPDATE conversations SET id = ? WHERE id = ?", (new, old))


# -- the sqlite ledger ---------------------------------------------------------------------------------------------


def dead_owner(pid: int = 2**22 + 777) -> str:
    """A claim's owner on this host whose process is gone (a pid above Linux's largest)."""
    return f"{os.uname().nodename}:{pid}"


def leave_dead_claim(path: Path | str, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any],
                     occurrence: int, owner: str | None = None) -> None:
    """A claim without a result whose holder died, in a sqlite ledger file (kept if the key is claimed)."""
    with _file(path) as db:
        db.execute("INSERT OR IGNORE INTO ledger (key, conversation, turn, tool, arguments, occurrence, state, "
                   "claimed_at, owner) VALUES (?, ?, ?, ?, ?, ?, 'claimed', 0, ?)",
                   (key, conversation, turn, tool, canonical_json(arguments), occurrence, owner or dead_owner()))
