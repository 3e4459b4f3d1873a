"""The transcript store's schema, one numbered step at a time.

The version lives in the file (``PRAGMA user_version``): 0 is a file from
before versions (or a new one), and each step brings a file from the version
before it to its own, inside one write transaction, so two processes opening
an old file migrate it once and a step that fails leaves the file as it was.
A file from a newer callstream is refused with a sentence saying so, never
written to. The ledger shares the file but not this numbering: each ledger
back-end keeps its own table in shape (``app/ledger/sqlite.py``).

Step 1 is the linear store as it shipped (a call's argument buffer apart
from its record in ``call_arguments``: written once when it stops growing,
while the small record is rewritten at each state; older files keep the
buffer inside the record, and both load). Step 2 makes it a tree: an
entry follows a ``parent`` entry (the one before it, for every entry a
linear store holds) on a ``branch`` ("" is the main one), a conversation
remembers the entry it was last shown at (``head``) and the conversation and
entry it was forked from; and the full-text index of what may be shown
(``search.py``) is filled in from what is already stored. Step 3 gives a
turn what it cost: ``usage`` (the provider's token counts, a JSON object of
the counts it gave; NULL where it gave none, and for every turn stored
before) and ``model`` (the model that answered). Step 4 keeps prose apart
from its block's record too, in ``prose_parts``: appended a piece at a time
as it streams, so a long reply costs the store the bytes it adds, not a
rewrite of everything so far at every flush (older records hold their text
inline, and both load); and a turn keeps a provider error's whole text
(``detail``) beside its one line. Step 5 gives a user entry its
``attachments`` (a JSON list of references; the bytes are files in the data
dir by content hash, ``attachfiles.py``). Step 6 adds ``holds``: which live
process is in the middle of an exchange on a conversation, and doing what
(``holds.py``), so a delete never pulls a conversation from under it. Step
7 indexes a conversation's turns by number (``entries_turn``): a new turn's
number (the conversation's highest, plus one) and an attempt's row were
found by reading every entry of the conversation, twice an exchange, a cost
that grew with the conversation (``make bench-long``'s live sitting).

A buffer in ``call_arguments`` is UTF-8 text, held as TEXT or (written
since, by ``dbfile.put_text``, which never copies a big buffer whole) as a
BLOB of the same bytes; it is read as ``CAST(raw AS TEXT)``, which is both.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..files.dbfile import DataFileError

__all__ = ["SCHEMA_VERSION", "SchemaError", "migrate"]


class SchemaError(DataFileError):
    """The file cannot be used by this version; the message says why and what to do
    (a ``DataFileError``: the command line prints it as one line and exits 2)."""


_V1 = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
    provider TEXT NOT NULL, model TEXT NOT NULL, dialect TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,                 -- user | turn
    text TEXT,                          -- the user's message
    turn INTEGER,                       -- the turn index (the ledger's)
    state TEXT NOT NULL,                -- streaming | done
    attempts INTEGER NOT NULL DEFAULT 0,
    outcome TEXT, stop_reason TEXT, error TEXT, cause TEXT, note TEXT,
    failures TEXT NOT NULL DEFAULT '[]',
    exchange TEXT, exchange_message TEXT,  -- on user rows: how the exchange ended
    started REAL NOT NULL, finished REAL,
    PRIMARY KEY (conversation, seq));
CREATE TABLE IF NOT EXISTS blocks (
    conversation TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (conversation, seq, idx));
CREATE TABLE IF NOT EXISTS call_arguments (
    conversation TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL, raw TEXT NOT NULL,
    PRIMARY KEY (conversation, seq, idx));
"""

_V2 = """
ALTER TABLE entries ADD COLUMN parent INTEGER;               -- the entry this one follows (NULL: the first)
ALTER TABLE entries ADD COLUMN branch TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN head INTEGER;           -- the entry last shown
ALTER TABLE conversations ADD COLUMN forked_from TEXT;       -- the conversation it was forked from
ALTER TABLE conversations ADD COLUMN forked_at INTEGER;      -- that conversation's entry it was forked at
ALTER TABLE conversations ADD COLUMN forked_len INTEGER;     -- how many of its entries are copies
UPDATE entries SET parent = (SELECT MAX(p.seq) FROM entries p
                             WHERE p.conversation = entries.conversation AND p.seq < entries.seq);
UPDATE conversations SET head = (SELECT MAX(seq) FROM entries e WHERE e.conversation = conversations.id);
CREATE INDEX entries_parent ON entries (conversation, parent);
CREATE TABLE search_text (
    id INTEGER PRIMARY KEY,
    conversation TEXT NOT NULL, seq INTEGER NOT NULL,
    idx INTEGER NOT NULL,                -- the block (-1: the user's message)
    body TEXT NOT NULL,
    UNIQUE (conversation, seq, idx));
CREATE VIRTUAL TABLE search_fts USING fts5(
    body, content='search_text', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER search_text_ai AFTER INSERT ON search_text BEGIN
    INSERT INTO search_fts (rowid, body) VALUES (new.id, new.body);
END;
CREATE TRIGGER search_text_ad AFTER DELETE ON search_text BEGIN
    INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', old.id, old.body);
END;
CREATE TRIGGER search_text_au AFTER UPDATE ON search_text BEGIN
    INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', old.id, old.body);
    INSERT INTO search_fts (rowid, body) VALUES (new.id, new.body);
END;
"""


_V3 = """
ALTER TABLE entries ADD COLUMN usage TEXT;                   -- {"input": n, "output": n, ...}: what the provider said
ALTER TABLE entries ADD COLUMN model TEXT;                   -- the model that answered the turn
"""

_V4 = """
ALTER TABLE entries ADD COLUMN detail TEXT;                  -- a provider error's whole text (limits.full_text)
CREATE TABLE prose_parts (
    conversation TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL,
    part INTEGER NOT NULL,               -- 0, 1, 2...: the text is the parts in this order
    text TEXT NOT NULL,
    PRIMARY KEY (conversation, seq, idx, part));
"""

_V5 = """
ALTER TABLE entries ADD COLUMN attachments TEXT;             -- a user entry's files: [Attachment.ref(), ...]
"""

_V6 = """
CREATE TABLE holds (
    conversation TEXT NOT NULL,
    owner TEXT NOT NULL,                 -- host:pid of the process mid-exchange (app/files/owners.py)
    doing TEXT NOT NULL,                 -- what it is doing, in words
    since REAL NOT NULL,
    PRIMARY KEY (conversation, owner));
"""

_V7 = """
CREATE INDEX entries_turn ON entries (conversation, kind, turn);
"""


def _step1(db: sqlite3.Connection) -> None:
    for statement in _split(_V1):
        db.execute(statement)


def _step2(db: sqlite3.Connection) -> None:
    from . import search

    for statement in _split(_V2):
        db.execute(statement)
    search.index_existing(db)


def _step3(db: sqlite3.Connection) -> None:
    for statement in _split(_V3):
        db.execute(statement)


def _step4(db: sqlite3.Connection) -> None:
    for statement in _split(_V4):
        db.execute(statement)


def _step5(db: sqlite3.Connection) -> None:
    for statement in _split(_V5):
        db.execute(statement)


def _step6(db: sqlite3.Connection) -> None:
    for statement in _split(_V6):
        db.execute(statement)


def _step7(db: sqlite3.Connection) -> None:
    for statement in _split(_V7):
        db.execute(statement)


def _split(script: str) -> list[str]:
    """Statements of a script, for ``execute`` one by one (``executescript``
    would commit the transaction the step runs in). Triggers keep their body."""
    statements, current = [], []
    for line in script.splitlines():
        code = line.split("--", 1)[0].rstrip()
        if not code:
            continue
        current.append(code)
        joined = "\n".join(current)
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            statements.append(joined)
            current = []
    return statements


#: Step n brings a file from version n-1 to version n.
STEPS: list[Callable[[sqlite3.Connection], None]] = [_step1, _step2, _step3, _step4, _step5, _step6, _step7]
SCHEMA_VERSION = len(STEPS)


def migrate(db: sqlite3.Connection, name: str = "the transcript store") -> int:
    """Bring ``db`` to ``SCHEMA_VERSION``; returns the version it had."""
    found = int(db.execute("PRAGMA user_version").fetchone()[0])
    if found == SCHEMA_VERSION:
        return found
    db.execute("BEGIN IMMEDIATE")
    try:
        found = int(db.execute("PRAGMA user_version").fetchone()[0])  # another process may have done it
        if found > SCHEMA_VERSION:
            raise SchemaError(f"{name} was written by a newer callstream (schema version {found}; this one knows "
                              f"{SCHEMA_VERSION}): upgrade callstream, or move the file aside to start afresh")
        for version in range(found + 1, SCHEMA_VERSION + 1):
            STEPS[version - 1](db)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return found
