"""A turn is found by its number through an index (schema step 7), not by reading every entry of its
conversation: a new turn's number and an attempt's row were looked up twice an exchange, a cost that grew
with the conversation."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.store import Store
from app.store.schema import SCHEMA_VERSION, STEPS, migrate

_LOOKUPS = ("SELECT MAX(turn) FROM entries WHERE conversation = ? AND kind = 'turn'",
            "SELECT seq, note, failures FROM entries WHERE conversation = ? AND kind = 'turn' AND turn = ?")


def _plans(db: sqlite3.Connection) -> list[str]:
    return [" ".join(str(row[-1]) for row in db.execute("EXPLAIN QUERY PLAN " + query, ("c", 1)[:query.count("?")]))
            for query in _LOOKUPS]


def test_the_turn_lookups_use_the_index(tmp_path: Path) -> None:
    store = Store(tmp_path / "callstream.db")
    store.create("c", "demo", "demo", "openai-chat")
    store.add_user("c", "hi")
    first, _ = store.allocate_turn("c")
    second, _ = store.allocate_turn("c")
    assert (first, second) == (0, 1)
    with sqlite3.connect(tmp_path / "callstream.db") as db:
        assert all("entries_turn" in plan for plan in _plans(db)), _plans(db)


def test_a_file_of_the_last_version_gets_the_index_and_keeps_its_turns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    for step in STEPS[:-1]:
        step(db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    db.execute("INSERT INTO conversations (id, title, created, updated, provider, model, dialect) "
               "VALUES ('c', '', 0, 0, 'demo', 'demo', 'openai-chat')")
    db.execute("INSERT INTO entries (conversation, seq, kind, turn, state, attempts, started, parent, branch) "
               "VALUES ('c', 0, 'turn', 4, 'done', 1, 0, NULL, '')")
    assert not any("entries_turn" in plan for plan in _plans(db))
    assert migrate(db) == SCHEMA_VERSION - 1
    assert all("entries_turn" in plan for plan in _plans(db))
    db.close()
    assert Store(path).allocate_turn("c")[0] == 5
