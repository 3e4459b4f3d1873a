"""Opening callstream's sqlite files the one way they are all opened:
autocommit (transactions are explicit), WAL, rows by name, created
user-only (0600), and every text parameter written through ``redact`` — so
no key reaches the transcripts, the ledger or the support store, whichever
table or column a later change adds.

A file callstream cannot use — damaged, read-only, in a directory that is
missing or not writable, on a full disk — is a ``DataFileError``: one line
naming the file and what to do (the command line prints it and exits 2).
Nothing is rewritten to get past it, so what was saved stays as it was.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..stream.redact import redact, redact_pieces

__all__ = ["connect", "DataFileError", "explain", "fill_blob", "hand_back", "put_text", "redacted_chunks"]


class DataFileError(sqlite3.OperationalError):
    """A data file that cannot be used; the message names it and says what to do."""


#: Errors that are about waiting, not about the file: left to the caller's retry logic.
_TRANSIENT = ("locked", "busy")


def _disk_full(path: Path | str) -> bool:
    """sqlite reports a full disk met while growing its shared-memory file as an I/O error: look."""
    try:
        stats = os.statvfs(Path(path).parent)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


def explain(path: Path | str, exc: BaseException) -> DataFileError:
    """``exc`` (an sqlite or OS error on ``path``) as one line: what is wrong and what to do."""
    if isinstance(exc, DataFileError):
        return exc
    text = str(exc) or type(exc).__name__
    low = text.lower()
    if "not a database" in low or "malformed" in low or "disk image" in low:
        words = (f"{path} is damaged ({text}): nothing was changed; move it aside to start afresh (callstream makes "
                 "a new one) or restore it from a backup")
    elif "readonly" in low or "read-only" in low:
        words = (f"{path} is read-only ({text}): make it and its directory writable, or set CALLSTREAM_HOME to a "
                 "writable directory")
    elif "unable to open" in low:
        words = (f"cannot open {path} ({text}): its directory is missing or not writable; create it, or set "
                 "CALLSTREAM_HOME to a writable directory")
    elif "full" in low or "no space" in low or ("i/o" in low and _disk_full(path)):
        words = f"{path}: the disk is full: free some space and try again; what was saved before is intact"
    elif "i/o" in low:
        words = f"{path}: a disk I/O error ({text}): check the disk; what was saved before is intact"
    else:
        words = f"{path}: {text}"
    return DataFileError(words)


def _clean(parameters: Any) -> Any:
    if isinstance(parameters, Mapping):
        return {k: redact(v) if isinstance(v, str) else v for k, v in parameters.items()}
    return tuple(redact(v) if isinstance(v, str) else v for v in parameters)


class _Connection(sqlite3.Connection):
    """A connection whose statements never write a registered secret, and
    whose file problems say which file and what to do."""

    where: Path | str = "the database"

    def _fail(self, exc: sqlite3.DatabaseError) -> BaseException:
        if isinstance(exc, sqlite3.IntegrityError) or any(word in str(exc).lower() for word in _TRANSIENT):
            return exc  # a constraint (the ledger's claim race) or a wait: the caller's business
        return explain(self.where, exc)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, _clean(parameters))
        except sqlite3.DatabaseError as exc:
            failure = self._fail(exc)
            if failure is exc:
                raise
            raise failure from exc

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, (_clean(p) for p in parameters))
        except sqlite3.DatabaseError as exc:
            failure = self._fail(exc)
            if failure is exc:
                raise
            raise failure from exc

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        try:
            return super().executescript(script)
        except sqlite3.DatabaseError as exc:
            failure = self._fail(exc)
            if failure is exc:
                raise
            raise failure from exc

    def put_text(self, table: str, key: Mapping[str, Any], column: str, text: str) -> None:
        """Insert (or replace) the row ``key`` with ``column`` holding ``text``,
        redacted, as UTF-8 in a BLOB written a piece at a time.

        Bound as a parameter, a 10 MB text is copied twice inside sqlite (the
        bound value, then the row's record) while the caller still holds it:
        3 bytes of memory per byte at the moment the call is stored. A
        ``zeroblob`` of the right size is never materialised, and incremental
        blob I/O fills it through the page cache, so the peak is the text
        alone. Readers ``CAST(column AS TEXT)`` (a row written before this is
        TEXT already, and the cast leaves it as it is)."""
        text = redact(text)
        pieces = range(0, len(text), _PIECE)
        size = len(text) if text.isascii() else sum(len(text[i:i + _PIECE].encode()) for i in pieces)
        names, marks = ", ".join(key), ", ".join("?" * len(key))
        cursor = self.execute(f"INSERT OR REPLACE INTO {table} ({names}, {column}) VALUES ({marks}, zeroblob(?))",
                              (*key.values(), size))
        row = cursor.lastrowid
        if not size:
            return
        assert row is not None  # the INSERT above made the row
        self.fill_blob(table, column, row, (text[start:start + _PIECE].encode() for start in pieces))

    def fill_blob(self, table: str, column: str, row: int, chunks: Iterable[bytes]) -> None:
        """Write ``chunks`` into the ``zeroblob`` the row ``row`` of ``table``
        holds in ``column``, one after the other (incremental blob I/O: a chunk
        at a time goes through the page cache, never the whole value). The
        chunks must add up to the blob's size: they are already redacted
        (``redacted_chunks``); a blob is written as it is."""
        try:
            with self.blobopen(table, column, row) as blob:
                for chunk in chunks:
                    blob.write(chunk)
                size = len(blob)
            self.hand_back(size)
        except sqlite3.DatabaseError as exc:
            failure = self._fail(exc)
            if failure is exc:
                raise
            raise failure from exc

    def hand_back(self, written: int) -> None:
        """After ``written`` bytes went through this connection outside a
        transaction: the pages they passed stay in its cache (up to 2 MB a
        file) until the connection closes, and the store, the ledger and the
        support store each keeping theirs cost a 1 MB call three times its
        size. Handed back once a big value is written, one cache is full at a
        time. A transaction still open hands back at its caller's end."""
        if written >= _SHRINK_FROM and not self.in_transaction:
            super().execute("PRAGMA shrink_memory")


def redacted_chunks(pieces: Iterable[str]) -> Iterator[bytes]:
    """``redact`` of the pieces joined, as UTF-8 ``bytes`` of at most
    ``_PIECE`` characters each: a text made a piece at a time (a canonical
    form of 10 MB of arguments) stored through ``fill_blob`` with no ``str``
    of all of it, redacted exactly as one bound parameter would be. Called
    twice, it yields the same bytes (once to size the ``zeroblob``, once to fill it).
    Redacted ``_PIECE`` characters at a time (at most twice that held, joined
    once): a window of four held 512 KiB and its join, a fixed cost that made a
    1 MB call's claim the peak of ``make bench-memory``."""
    for text in redact_pieces(pieces, window=_PIECE):
        for start in range(0, len(text), _PIECE):
            yield text[start:start + _PIECE].encode()


#: How much of a large text ``put_text`` encodes and writes at once.
_PIECE = 1 << 16

#: A blob this large hands its pages back to sqlite's allocator once written (``fill_blob``).
_SHRINK_FROM = 1 << 18


def put_text(db: sqlite3.Connection, table: str, key: Mapping[str, Any], column: str, text: str) -> None:
    """``_Connection.put_text`` for a connection typed as sqlite's own."""
    assert isinstance(db, _Connection)
    db.put_text(table, key, column, text)


def hand_back(db: sqlite3.Connection, written: int) -> None:
    """``_Connection.hand_back`` for a connection typed as sqlite's own."""
    assert isinstance(db, _Connection)
    db.hand_back(written)


def fill_blob(db: sqlite3.Connection, table: str, column: str, row: int, chunks: Iterable[bytes]) -> None:
    """``_Connection.fill_blob`` for a connection typed as sqlite's own."""
    assert isinstance(db, _Connection)
    db.fill_blob(table, column, row, chunks)


def connect(path: Path, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """``synchronous="FULL"`` where a commit must survive power loss (the ledger's claims)."""
    existed = path.exists()
    try:
        # no statement cache: a cached statement keeps its last bound values, so a 10 MB argument
        # buffer written once would stay in memory (a copy per database) until the process ends;
        # preparing each statement again costs a few microseconds
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False, factory=_Connection,
                             cached_statements=0)
    except sqlite3.DatabaseError as exc:
        raise explain(path, exc) from exc
    assert isinstance(db, _Connection)
    db.where = path
    db.row_factory = sqlite3.Row
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'FULL' else 'NORMAL'}")
    except BaseException:
        db.close()
        raise
    if not existed:
        for suffix in ("", "-wal", "-shm"):
            candidate = Path(str(path) + suffix)
            if candidate.exists():
                os.chmod(candidate, 0o600)
    return db
