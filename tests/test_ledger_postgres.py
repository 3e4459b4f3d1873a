"""The shared PostgreSQL ledger on a real server: its schema and migrations,
leases renewed while a tool runs, and what a dropped or missing database does
to a call (a stated outcome on the card, never a second run)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")

from app.ledger.postgres import SCHEMA_VERSION, LedgerSchemaError, PostgresLedger, migrate, public_url  # noqa: E402
from app.tools.base import Tool, ToolContext  # noqa: E402
from app.tools.dispatcher import CallUpdate, Dispatcher  # noqa: E402
from app.tools.registry import Registry  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.pgserver import PgCluster, free_port  # noqa: E402
from tests.waiting import wait_until, wait_until_sync  # noqa: E402


@pytest.fixture
def fresh_db(pg_cluster: PgCluster) -> Iterator[str]:
    """An empty database (no schema) on the session's cluster."""
    name = f"t{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_cluster.url(name)
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _dispatch(ledger: Any, run: Callable[[dict[str, Any], ToolContext], Awaitable[str]],
              arguments: dict[str, Any] | None = None) -> tuple[list[CallUpdate], Dispatcher]:
    tool = Tool("effect", "", {"type": "object"}, run, read_only=False, timeout=60)
    updates: list[CallUpdate] = []

    async def go() -> Dispatcher:
        dispatcher = Dispatcher(Registry([tool]), ledger, "conv", 0, updates.append)
        dispatcher.submit(0, "effect", arguments or {"n": 1})
        await dispatcher.wait()
        return dispatcher

    return updates, asyncio.run(go())


def _cli(*args: str, url: str, home: Path) -> subprocess.CompletedProcess[str]:
    (home / "config.toml").touch()
    env = {**os.environ, "CALLSTREAM_LEDGER_URL": url, "CALLSTREAM_HOME": str(home / "home"),
           "CALLSTREAM_CONFIG": str(home / "config.toml")}
    return subprocess.run([sys.executable, "-m", "app", "ledger", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=60)


def test_migrate_creates_the_schema_once_and_then_says_it_is_up_to_date(fresh_db: str, tmp_path: Path) -> None:
    first = _cli("migrate", url=fresh_db, home=tmp_path)
    assert first.returncode == 0 and f"version 0 → {SCHEMA_VERSION}" in first.stdout, first.stderr
    again = _cli("migrate", url=fresh_db, home=tmp_path)
    assert again.returncode == 0 and "up to date" in again.stdout


def test_two_migrations_at_once_both_succeed(fresh_db: str) -> None:
    results: list[tuple[int, int]] = []
    threads = [threading.Thread(target=lambda: results.append(migrate(fresh_db))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(results) == [(0, SCHEMA_VERSION), (SCHEMA_VERSION, SCHEMA_VERSION)]


def test_a_database_newer_than_the_program_is_refused(fresh_db: str, tmp_path: Path) -> None:
    migrate(fresh_db)
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        conn.execute("INSERT INTO callstream_schema (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(LedgerSchemaError, match="upgrade callstream"):
        migrate(fresh_db)
    result = _cli("migrate", url=fresh_db, home=tmp_path)
    assert result.returncode == 2 and "newer" in result.stderr and "Traceback" not in result.stderr


def test_an_unmigrated_database_is_not_run_and_says_to_migrate(fresh_db: str) -> None:
    ran: list[str] = []

    async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(ctx.idempotency_key)
        return "done"

    ledger = PostgresLedger(fresh_db)
    updates, _ = _dispatch(ledger, effect)
    ledger.close()
    assert updates[-1].state == "not run" and "callstream ledger migrate" in (updates[-1].result or "")
    assert ran == []


def test_ledger_lists_the_shared_ledger_and_hides_the_password(pg_ledger_url: str, tmp_path: Path) -> None:
    ledger = PostgresLedger(pg_ledger_url)
    claim = ledger.claim("k" * 64, "conv-x", 3, "create_ticket", {"a": 1}, 1)
    ledger.finish("k" * 64, "ran", "ok", False, fence=claim.fence)
    ledger.close()
    password = os.environ["PGPASSWORD"]
    with_password = pg_ledger_url.replace("callstream@", f"callstream:{password}@")
    listed = _cli("--json", url=with_password, home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    import json

    (entry,) = json.loads(listed.stdout)
    assert (entry["conversation"], entry["turn"], entry["tool"], entry["state"]) == ("conv-x", 3, "create_ticket",
                                                                                     "ran")
    # a conversation only the shared ledger knows is found by the start of its id; an unknown one is refused
    prefixed = _cli("--conversation", "conv", "--json", url=with_password, home=tmp_path)
    assert [e["conversation"] for e in json.loads(prefixed.stdout)] == ["conv-x"], prefixed.stderr
    unknown = _cli("--conversation", "none", url=with_password, home=tmp_path)
    assert unknown.returncode == 2 and "no stored conversation 'none'" in unknown.stderr
    assert password not in unknown.stdout + unknown.stderr + prefixed.stdout + prefixed.stderr
    assert password not in public_url(with_password)


def test_an_unreachable_ledger_means_not_run_never_a_run(tmp_path: Path) -> None:
    ran: list[str] = []

    async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(ctx.idempotency_key)
        return "done"

    ledger = PostgresLedger(f"postgresql://callstream@127.0.0.1:{free_port()}/postgres", retry_for=0.5)
    updates, _ = _dispatch(ledger, effect)
    ledger.close()
    assert [u.state for u in updates] == ["waiting", "not run"]
    assert "ledger is unavailable" in (updates[-1].result or "") and ran == []


def test_the_lease_is_renewed_while_the_tool_runs(pg_ledger_url: str) -> None:
    ledger = PostgresLedger(pg_ledger_url, lease=2.0)
    other = PostgresLedger(pg_ledger_url, lease=2.0)
    other.claimant = "other-host:1"
    started = threading.Event()
    release = threading.Event()
    seen: list[str] = []

    async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        await wait_until(release.is_set, "the racer to release the tool")  # it runs until the racer has sampled
        return "done"

    def racer() -> None:
        # samples the claim until, by the database's clock, the holder's first lease has run out
        # twice over: without renewals it would have read "unknown" by then
        try:
            started.wait(20)
            with psycopg.connect(pg_ledger_url, autocommit=True) as conn:
                (first,) = conn.execute("SELECT lease_until FROM callstream_ledger WHERE key = %s",
                                        (_key(),)).fetchone()

                def sampled_past_two_leases() -> bool:
                    seen.append(other.claim(_key(), "conv", 0, "effect", {"n": 1}, 1, wait=0).state)
                    (past,) = conn.execute("SELECT now() > %s + make_interval(secs => %s)",
                                           (first, ledger.lease)).fetchone()
                    return bool(past)

                wait_until_sync(sampled_past_two_leases, "the holder's first lease to run out twice over",
                                seen=lambda: seen[-5:])
        finally:
            release.set()

    from app.ledger import conversation_scope, idempotency_key

    def _key() -> str:
        return idempotency_key(conversation_scope("conv"), 0, "effect", {"n": 1}, 1)

    thread = threading.Thread(target=racer)
    thread.start()
    updates, dispatcher = _dispatch(ledger, effect)
    thread.join(30)
    assert updates[-1].state == "ran" and dispatcher.runs == 1
    assert seen and set(seen) == {"elsewhere"}  # never "unknown" while its holder renews
    assert other.claim(_key(), "conv", 0, "effect", {"n": 1}, 1).result == "done"
    ledger.close()
    other.close()


def test_connections_dropped_mid_call_reconnect_and_record_the_result(pg_ledger_url: str,
                                                                    pg_cluster: PgCluster) -> None:
    ran: list[str] = []

    async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(ctx.idempotency_key)
        with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE application_name = 'callstream' AND pid <> pg_backend_pid()")
        return "done"

    ledger = PostgresLedger(pg_ledger_url)
    updates, _ = _dispatch(ledger, effect)
    assert (updates[-1].state, updates[-1].result) == ("ran", "done")
    entry = ledger.lookup(updates[-1].key or "")
    assert entry is not None and (entry["state"], entry["result"]) == ("ran", "done") and len(ran) == 1
    ledger.close()


def test_a_database_gone_mid_call_is_stated_on_the_card_and_never_rerun(pg_ledger_url: str,
                                                                        pg_cluster: PgCluster) -> None:
    ran: list[str] = []

    async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(ctx.idempotency_key)
        await asyncio.to_thread(pg_cluster.stop)
        return "done"

    ledger = PostgresLedger(pg_ledger_url, lease=1.0, retry_for=1.0)
    try:
        updates, _ = _dispatch(ledger, effect)
    finally:
        pg_cluster.start()
    result = updates[-1].result or ""
    assert updates[-1].state == "ran" and result.startswith("done") and "not recorded in the ledger" in result
    again = PostgresLedger(pg_ledger_url, lease=1.0)
    wait_until_sync(lambda: (again.lookup(updates[-1].key or "") or {}).get("state") == "unknown",
                    "the dead claim's lease to run out", seen=lambda: again.lookup(updates[-1].key or ""))
    second, dispatcher = _dispatch(again, effect)
    assert second[-1].state == "unknown" and dispatcher.runs == 0 and len(ran) == 1
    ledger.close()
    again.close()


def test_a_lost_claim_reply_is_recognised_as_ours(pg_ledger_url: str) -> None:
    """The insert committed but its reply was lost: the retry finds our claim_id."""
    ledger = PostgresLedger(pg_ledger_url)
    real = ledger._run
    calls = {"n": 0}

    def run(work: Any, retry_for: float | None = None) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            real(work, retry_for)  # the INSERT commits, its reply is lost, and _run tries the same work again
        return real(work, retry_for)

    ledger._run = run  # type: ignore[method-assign]
    claim = ledger.claim("k", "c", 0, "t", {}, 1, wait=0)
    assert claim.state == "claimed" and claim.fence >= 1
    ledger._run = real  # type: ignore[method-assign]
    assert ledger.finish("k", "ran", "ok", False, fence=claim.fence)
    ledger.close()


def _one_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """A stated failure: exit 2, one line holding ``words``, no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr, (word, result.stderr)


def test_a_foreign_callstream_ledger_table_is_a_sentence_and_left_alone(fresh_db: str, tmp_path: Path) -> None:
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        conn.execute("CREATE TABLE callstream_ledger (id SERIAL PRIMARY KEY, note TEXT)")
        conn.execute("INSERT INTO callstream_ledger (note) VALUES ('someone else''s row')")
    _one_line(_cli("migrate", url=fresh_db, home=tmp_path),
              "already has a callstream_ledger table but no ledger schema version", "was not made by callstream",
              "nothing was changed")
    _one_line(_cli(url=fresh_db, home=tmp_path), "has no ledger schema: run `callstream ledger migrate`")
    with psycopg.connect(fresh_db, autocommit=True) as conn:  # a schema row beside the foreign table
        conn.execute("CREATE TABLE callstream_schema (version INTEGER PRIMARY KEY)")
        conn.execute("INSERT INTO callstream_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
    _one_line(_cli(url=fresh_db, home=tmp_path), "cannot read the ledger", "refused a statement",
              "was not made by callstream")
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        rows = conn.execute("SELECT note FROM callstream_ledger").fetchall()
    assert rows == [("someone else's row",)]  # nothing of it changed


def test_a_schema_version_that_is_not_a_number_is_a_sentence(fresh_db: str, tmp_path: Path) -> None:
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        conn.execute("CREATE TABLE callstream_schema (version TEXT PRIMARY KEY)")
        conn.execute("INSERT INTO callstream_schema (version) VALUES ('two')")
    words = ("records ledger schema version 'two', not a whole number", "was not made by callstream")
    _one_line(_cli("migrate", url=fresh_db, home=tmp_path), *words)
    _one_line(_cli(url=fresh_db, home=tmp_path), *words)
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM callstream_schema").fetchall() == [("two",)]
        assert conn.execute("SELECT to_regclass('callstream_ledger')").fetchone() == (None,)  # nothing made
