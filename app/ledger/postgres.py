"""The shared idempotency ledger on PostgreSQL (issue 18; field.md §5).

Several clients on several machines drive the same side-effecting tools, so
"exactly once" has to hold across them. A claim is one
``INSERT … ON CONFLICT DO NOTHING``: the winner gets the key with its
claimant (``host:pid``), a lease expiry and a fencing token (a value of one
sequence, so tokens never repeat), and renews the lease from a background
thread while its tool runs. A losing client polls, bounded by its wait, for
the result; past the wait it is told ``elsewhere``. A lease that runs out
without a result is ``unknown`` and is never claimed again (nobody re-runs a
call that may have happened). A result is written only with the key's
current fencing token, so a holder whose claim was since taken over (a
cancelled read-only call claimed anew) writes nothing.

Leases are measured by the database's clock (``now()``), never a client's,
so clients with skewed clocks agree on when one ran out.

A dropped connection is retried (a fresh connection, for ``retry_for``
seconds) and then raised as ``LedgerUnavailable``. A claim whose reply was
lost is recognised on the retry by its ``claim_id`` (ours, so claimed), and
a result whose reply was lost by the row it left, so a retry never turns
into a second run or a false "stale".

The password never appears here: libpq reads ``PGPASSWORD`` or
``~/.pgpass``; ``where`` (for messages) is the URL without one. A URL from
the environment (``CALLSTREAM_LEDGER_URL``) may still carry one: every
password of every URL this process connects with is scrubbed from each
message made here (libpq quotes pieces of a URL it cannot parse) and
registered with the one redaction.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

import psycopg
from psycopg.rows import dict_row

from ..settings.ledger import DEFAULT_LEASE, is_password_parameter, url_passwords
from ..stream.redact import REDACTED, redact, register_secret
from .claim import Claim
from .keys import canonical_json
from .protocol import LedgerUnavailable

__all__ = ["PostgresLedger", "SCHEMA_VERSION", "LedgerSchemaError", "migrate", "schema_version", "public_url"]

T = TypeVar("T")

#: (version, statements). Append; never edit a released step.
_MIGRATIONS: list[tuple[int, str]] = [
    (1, """
CREATE SEQUENCE IF NOT EXISTS callstream_fence;
CREATE TABLE IF NOT EXISTS callstream_ledger (
    key TEXT PRIMARY KEY,
    conversation TEXT NOT NULL,
    turn INTEGER NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('claimed', 'ran', 'failed', 'cancelled', 'unknown')),
    result TEXT,
    is_error BOOLEAN NOT NULL DEFAULT false,
    claimed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at TIMESTAMPTZ,
    owner TEXT NOT NULL,
    claim_id TEXT NOT NULL,
    fence BIGINT NOT NULL DEFAULT nextval('callstream_fence'),
    lease_until TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS callstream_ledger_conversation ON callstream_ledger (conversation, claimed_at);
"""),
]
SCHEMA_VERSION = _MIGRATIONS[-1][0]
_LOCK = 0x63616C6C  # pg_advisory_xact_lock key: one migration at a time

_COLUMNS = """key, conversation, turn, tool, arguments, occurrence,
    CASE WHEN state = 'claimed' AND lease_until < now() THEN 'unknown' ELSE state END AS state,
    result, is_error, extract(epoch FROM claimed_at)::float8 AS claimed_at,
    extract(epoch FROM finished_at)::float8 AS finished_at, owner, fence"""


class LedgerSchemaError(LedgerUnavailable):
    """The database has no ledger schema, or an older or newer one than this program's."""


#: Every password a URL this process used carried (as written and percent-decoded).
_PASSWORDS: set[str] = set()
#: A password shorter than this is not cut out of messages (it would mangle every word holding it).
_MIN_SCRUB = 4


def _remember(url: str) -> None:
    for _, value in url_passwords(url):
        for form in {value, unquote(value)}:
            if form:
                _PASSWORDS.add(form)
                register_secret(form)


def scrub(text: str) -> str:
    """``text`` without any password a connection string carried (and redacted)."""
    for password in sorted(_PASSWORDS, key=len, reverse=True):
        if len(password) >= _MIN_SCRUB:
            text = text.replace(password, REDACTED)
    return redact(text)


def public_url(url: str) -> str:
    """The URL without its password (in the userinfo or a ``password``
    query parameter), for messages."""
    _remember(url)
    try:
        parts = urlsplit(url)
        query = "&".join(p for p in parts.query.split("&") if not is_password_parameter(p))
        if parts.password is not None:
            host = parts.netloc.rpartition("@")[2]
            parts = parts._replace(netloc=(f"{parts.username}@" if parts.username else "") + host)
        return scrub(urlunsplit(parts._replace(query=query)))
    except ValueError:
        return "(a PostgreSQL URL that does not parse)"


def _connect(url: str, timeout: float) -> psycopg.Connection[dict[str, Any]]:
    _remember(url)
    try:
        return psycopg.connect(url, autocommit=True, row_factory=dict_row, connect_timeout=max(1, int(timeout)),
                               keepalives=1, keepalives_idle=5, keepalives_interval=2, keepalives_count=3,
                               tcp_user_timeout=int(timeout * 1000), application_name="callstream")
    except psycopg.ProgrammingError as exc:  # libpq cannot read the URL (and quotes a piece of it)
        raise LedgerUnavailable(f"the ledger URL {public_url(url)} cannot be used: {_reason(exc)}") from None


def schema_version(conn: psycopg.Connection[Any], where: str = "the database") -> int:
    """0 where no ledger schema exists yet; a ``LedgerSchemaError`` where the
    version recorded is not a whole number (a table callstream did not make)."""
    row = conn.execute("SELECT to_regclass('callstream_schema') IS NOT NULL AS present").fetchone()
    if not row or not _first(row):
        return 0
    try:
        found = conn.execute("SELECT max(version) AS version FROM callstream_schema").fetchone()
    except psycopg.OperationalError:
        raise
    except psycopg.Error as exc:
        raise LedgerSchemaError(f"the database at {where} has a callstream_schema table callstream cannot read "
                                f"({_reason(exc)}): {_NOT_OURS}") from None
    value = _first(found) if found else None
    text = "" if value is None else str(value)
    if value is not None and (isinstance(value, bool) or not text.isdigit() or len(text) > 9):
        raise LedgerSchemaError(f"the database at {where} records ledger schema version {text[:40]!r}, not a whole "
                                f"number: {_NOT_OURS}")
    return int(text or 0)


#: What to do about tables of callstream's names that callstream did not make.
_NOT_OURS = ("its callstream_schema or callstream_ledger table was not made by callstream; nothing was changed: "
             "use another database (or schema) for the ledger, or drop or rename those tables")


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


def migrate(url: str, timeout: float = 10.0) -> tuple[int, int]:
    """Create or upgrade the schema; returns (version before, version after).
    Raises LedgerSchemaError if the database is newer than this program."""
    try:
        with _connect(url, timeout) as conn:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS callstream_schema (version INTEGER PRIMARY KEY, "
                             "migrated_at TIMESTAMPTZ NOT NULL DEFAULT now())")
                before = schema_version(conn, public_url(url))
                foreign = conn.execute("SELECT to_regclass('callstream_ledger') IS NOT NULL").fetchone()
                if before == 0 and _first(foreign):
                    raise LedgerSchemaError(f"the database at {public_url(url)} already has a callstream_ledger table "
                                            f"but no ledger schema version: {_NOT_OURS}")
                if before > SCHEMA_VERSION:
                    raise LedgerSchemaError(f"the ledger schema at {public_url(url)} is version {before}, newer "
                                            f"than this callstream's {SCHEMA_VERSION}: upgrade callstream")
                for version, statements in _MIGRATIONS:
                    if version > before:
                        conn.execute(statements)
                        conn.execute("INSERT INTO callstream_schema (version) VALUES (%s)", (version,))
            return before, SCHEMA_VERSION
    except psycopg.OperationalError as exc:
        raise LedgerUnavailable(f"cannot reach the ledger at {public_url(url)}: {_reason(exc)}") from None
    except psycopg.Error as exc:  # a table of our names that is not ours, or a statement the server refused
        raise LedgerSchemaError(f"cannot migrate the ledger at {public_url(url)} ({_reason(exc)}): nothing was "
                                "changed") from None


def _execute(conn: psycopg.Connection[dict[str, Any]], sql: str,
             parameters: tuple[Any, ...] = ()) -> psycopg.Cursor[dict[str, Any]]:
    """Every statement the ledger sends, its text parameters redacted (the one
    redaction, as ``dbfile`` does for sqlite): no key reaches the database."""
    return conn.execute(sql, tuple(redact(v) if isinstance(v, str) else v for v in parameters))


def _reason(exc: BaseException) -> str:
    return scrub(" ".join(str(exc).split())) or type(exc).__name__


class PostgresLedger:
    def __init__(self, url: str, lease: float = DEFAULT_LEASE, retry_for: float = 10.0) -> None:
        self.url = url
        self.where = public_url(url)
        self.lease = lease
        self.retry_for = retry_for
        self.claimant = f"{socket.gethostname()}:{os.getpid()}"
        self._conn: psycopg.Connection[dict[str, Any]] | None = None
        self._lock = threading.Lock()  # guards _conn (re)opening; psycopg serialises the queries themselves
        self._held: dict[str, int] = {}  # key → fence, renewed until finished
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        #: The last renewal that failed, and why (None while renewals succeed).
        self.renewal_error: str | None = None

    # -- connections -------------------------------------------------------------------------------------------

    def _connection(self) -> psycopg.Connection[dict[str, Any]]:
        with self._lock:
            if self._conn is None or self._conn.closed or self._conn.broken:
                if self._conn is not None:
                    self._conn.close()
                self._conn = None
                conn = _connect(self.url, min(self.retry_for, 10.0))
                try:
                    version = schema_version(conn, self.where)
                except BaseException:
                    conn.close()
                    raise
                if version != SCHEMA_VERSION:
                    conn.close()
                    what = "has no ledger schema" if version == 0 else f"has ledger schema {version}, not " \
                                                                       f"{SCHEMA_VERSION}"
                    raise LedgerSchemaError(f"the database at {self.where} {what}: run `callstream ledger migrate`")
                self._conn = conn
            return self._conn

    def _run(self, work: Callable[[psycopg.Connection[dict[str, Any]]], T], retry_for: float | None = None) -> T:
        """``work`` on a live connection, reconnecting across a dropped one for
        ``retry_for`` seconds; then LedgerUnavailable."""
        deadline = time.monotonic() + (self.retry_for if retry_for is None else retry_for)
        pause = 0.05
        while True:
            try:
                return work(self._connection())
            except LedgerSchemaError:
                raise
            except psycopg.OperationalError as exc:
                with self._lock:
                    if self._conn is not None and (self._conn.broken or self._conn.closed):
                        self._conn = None
                if time.monotonic() + pause > deadline:
                    raise LedgerUnavailable(f"lost the ledger at {self.where}: {_reason(exc)}") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.5)
            except psycopg.Error as exc:  # a statement refused: the table is not the one migrate makes
                raise LedgerSchemaError(f"the ledger at {self.where} refused a statement ({_reason(exc)}): "
                                        f"{_NOT_OURS}") from None

    def close(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(5)
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- the lease ---------------------------------------------------------------------------------------------

    def _hold(self, key: str, fence: int) -> None:
        self._held[key] = fence
        if self._renewer is None or not self._renewer.is_alive():
            self._stop.clear()
            self._renewer = threading.Thread(target=self._renew_loop, name="ledger-lease", daemon=True)
            self._renewer.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.lease / 3):
            fences = list(self._held.values())
            if not fences:
                continue
            try:
                self._run(lambda conn, fences=fences: _execute(conn,   # type: ignore[misc]
                    "UPDATE callstream_ledger SET lease_until = now() + make_interval(secs => %s) "
                    "WHERE fence = ANY(%s) AND state = 'claimed'", (self.lease, fences)), retry_for=self.lease / 3)
                self.renewal_error = None
            except LedgerUnavailable as exc:
                self.renewal_error = str(exc)  # keep trying: the tool runs on, and nobody re-runs an expired claim

    # -- the protocol ------------------------------------------------------------------------------------------

    def claim(self, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any], occurrence: int,
              retry_cancelled: bool = False, wait: float = 30.0) -> Claim:
        """Claim ``key`` before running; see ``Claim`` for what can come back."""
        deadline = time.monotonic() + wait
        claim_id = uuid.uuid4().hex
        args = canonical_json(arguments)
        pause = 0.02
        while True:
            won = self._run(lambda conn: _execute(conn,
                "INSERT INTO callstream_ledger (key, conversation, turn, tool, arguments, occurrence, state, owner, "
                "claim_id, lease_until) VALUES (%s, %s, %s, %s, %s, %s, 'claimed', %s, %s, "
                "now() + make_interval(secs => %s)) ON CONFLICT (key) DO NOTHING RETURNING fence",
                (key, conversation, turn, tool, args, occurrence, self.claimant, claim_id, self.lease)).fetchone())
            if won is not None:
                self._hold(key, int(won["fence"]))
                return Claim(key, "claimed", fence=int(won["fence"]))
            row = self._run(lambda conn: _execute(conn,
                "SELECT state, result, is_error, fence, owner, claim_id, lease_until < now() AS expired "
                "FROM callstream_ledger WHERE key = %s", (key,)).fetchone())
            if row is None:
                continue  # removed between the two statements: try again
            state, fence, owner = row["state"], int(row["fence"]), row["owner"]
            if row["claim_id"] == claim_id and state == "claimed":
                self._hold(key, fence)  # our own insert, whose reply the dropped connection lost
                return Claim(key, "claimed", fence=fence)
            if state in ("ran", "failed"):
                return Claim(key, state, row["result"], bool(row["is_error"]), fence)
            if state == "unknown":  # recorded as such (a transport died mid-call): never run again
                return Claim(key, "unknown", row["result"], True, fence)
            if state == "cancelled":
                if retry_cancelled:
                    taken = self._run(lambda conn: _execute(conn,
                        "UPDATE callstream_ledger SET state = 'claimed', owner = %s, claim_id = %s, result = NULL, "
                        "is_error = false, finished_at = NULL, claimed_at = now(), "
                        "fence = nextval('callstream_fence'), "
                        "lease_until = now() + make_interval(secs => %s) WHERE key = %s AND state = 'cancelled' "
                        "RETURNING fence", (self.claimant, claim_id, self.lease, key)).fetchone())
                    if taken is not None:
                        self._hold(key, int(taken["fence"]))
                        return Claim(key, "claimed", fence=int(taken["fence"]))
                    continue
                return Claim(key, "failed", row["result"] or "cancelled", True, fence)
            if row["expired"]:
                return Claim(key, "unknown", fence=fence, holder=owner)
            if time.monotonic() > deadline:
                return Claim(key, "elsewhere", fence=fence, holder=owner)
            time.sleep(pause)
            pause = min(pause * 1.5, 0.25)

    def finish(self, key: str, state: str, result: str, is_error: bool, *, fence: int) -> bool:
        try:
            written = self._run(lambda conn: _execute(conn,
                "UPDATE callstream_ledger SET state = %s, result = %s, is_error = %s, finished_at = now() "
                "WHERE key = %s AND fence = %s AND state = 'claimed' RETURNING fence",
                (state, result, is_error, key, fence)).fetchone())
            if written is not None:
                return True
            # nothing updated: a stale fence, or our own write whose reply was lost
            row = self._run(lambda conn: _execute(conn,
                "SELECT state, result, fence FROM callstream_ledger WHERE key = %s", (key,)).fetchone())
            return row is not None and (int(row["fence"]), row["state"], row["result"]) == (fence, state,
                                                                                             redact(result))
        finally:
            if self._held.get(key) == fence:
                del self._held[key]

    def lookup(self, key: str) -> dict[str, Any] | None:
        return self._run(lambda conn: _execute(conn,
            f"SELECT {_COLUMNS} FROM callstream_ledger WHERE key = %s", (key,)).fetchone())

    def entries(self, conversation: str | None = None) -> list[dict[str, Any]]:
        where = " WHERE conversation = %s" if conversation else ""
        return self._run(lambda conn: _execute(conn,
            f"SELECT {_COLUMNS} FROM callstream_ledger{where} ORDER BY claimed_at, fence",
            (conversation,) if conversation else ()).fetchall())

    def _insert_expired(self, key: str, conversation: str, turn: int, tool: str, arguments: dict[str, Any],
                        occurrence: int) -> None:
        """For tests: what a client that died mid-call leaves once its lease ran out."""
        self._run(lambda conn: _execute(conn,
            "INSERT INTO callstream_ledger (key, conversation, turn, tool, arguments, occurrence, state, owner, "
            "claim_id, lease_until) VALUES (%s, %s, %s, %s, %s, %s, 'claimed', 'gone:1', 'gone', "
            "now() - interval '1 second') ON CONFLICT (key) DO NOTHING",
            (key, conversation, turn, tool, canonical_json(arguments), occurrence)))
