"""The ledger, measured: one claim + its result (the cost every side-effecting
call pays before and after its tool runs), on the embedded sqlite ledger and
on PostgreSQL over loopback, and the throughput of 8 concurrent claimers.

    make bench-ledger

References, measured in the same run: the sqlite ledger as it was before the
ledger became an interface (``git show REF:app/ledger/sqlite.py`` with that
commit's ``dbfile.py``), and the same old ledger code on today's ``dbfile``
(so the table separates what the interface changed from what the redaction
of every sqlite parameter, landed meanwhile, costs). PostgreSQL is a
throwaway cluster (tests/pgserver.py) with its durable defaults (fsync,
synchronous_commit), as sqlite runs with ``synchronous=FULL``. Rounds
alternate between the ledgers, each going first once, so they share the
machine's noise.
"""

from __future__ import annotations

import importlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.ledger import SqliteLedger  # noqa: E402

#: The last commit before the ledger became an interface (issue 18).
REFERENCE = "9fbecef"


def _git_show(ref: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{ref}:{path}"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def _reference_ledger(package: str, dbfile_source: str) -> Any:
    """The old sqlite ledger as an importable package of its own."""
    root = Path(tempfile.mkdtemp(prefix="callstream-bench-ref-"))
    pkg = root / package
    (pkg / "ledger").mkdir(parents=True)
    (pkg / "stream").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "stream" / "__init__.py").write_text("")
    (pkg / "stream" / "redact.py").write_text("from app.stream.redact import *  # noqa\n")
    (pkg / "dbfile.py").write_text(dbfile_source)
    (pkg / "ledger" / "__init__.py").write_text("")
    for name in ("sqlite", "claim", "keys"):
        (pkg / "ledger" / f"{name}.py").write_text(_git_show(REFERENCE, f"app/ledger/{name}.py"))
    sys.path.insert(0, str(root))
    return importlib.import_module(f"{package}.ledger.sqlite").Ledger


class _Old:
    """The old interface (no fence) behind the new call shape."""

    def __init__(self, cls: Any, path: Path) -> None:
        self.inner = cls(path)

    def claim(self, key: str, *args: Any, **kwargs: Any) -> Any:
        return self.inner.claim(key, *args, **kwargs)

    def finish(self, key: str, state: str, result: str, is_error: bool, *, fence: int) -> bool:
        self.inner.finish(key, state, result, is_error)
        return True

    def close(self) -> None:
        self.inner.close()


def round_trips(ledger: Any, count: int) -> list[float]:
    """Seconds for each claim + finish of a fresh key."""
    times = []
    args = {"title": "Refund order A-1042", "priority": "high", "body": "Ada Lovelace reports a double charge"}
    for i in range(count):
        key = uuid.uuid4().hex
        start = time.perf_counter()
        claim = ledger.claim(key, "bench", i, "create_ticket", args, 1)
        ledger.finish(key, "ran", "ticket T-1 created", False, fence=getattr(claim, "fence", 0))
        times.append(time.perf_counter() - start)
    return times


def throughput(opener: Callable[[], Any], claimers: int, each: int) -> float:
    """Claims + results per second with ``claimers`` threads, each with its own ledger client."""
    ledgers = [opener() for _ in range(claimers)]
    barrier = threading.Barrier(claimers + 1)

    def work(ledger: Any) -> None:
        barrier.wait()
        round_trips(ledger, each)

    threads = [threading.Thread(target=work, args=(ledger,)) for ledger in ledgers]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    for ledger in ledgers:
        ledger.close()
    return claimers * each / elapsed


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def _measure(openers: dict[str, Callable[[], Any]], count: int, rounds: int) -> tuple[dict[str, list[float]],
                                                                                dict[str, list[float]]]:
    """Round trips interleaved in blocks of 20 across the ledgers, then 8-claimer
    bursts, each ledger going first once per round."""
    samples: dict[str, list[float]] = {name: [] for name in openers}
    rates: dict[str, list[float]] = {name: [] for name in openers}
    ledgers = {name: opener() for name, opener in openers.items()}
    for ledger in ledgers.values():  # warm up: files, connections, statement caches
        round_trips(ledger, 50)
    names = list(openers)
    for _ in range(count // 20):
        for name in names:
            samples[name] += round_trips(ledgers[name], 20)
    for ledger in ledgers.values():
        ledger.close()
    for round_ in range(rounds):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            rates[name].append(throughput(openers[name], 8, 25))
    return samples, rates


def _table(title: str, reference: str, samples: dict[str, list[float]], rates: dict[str, list[float]]) -> None:
    base_median = statistics.median(samples[reference])
    base_rate = statistics.median(rates[reference])
    print(f"\n{title}\n")
    print("| ledger | median (ms) | p99 (ms) | median vs reference | 8 claimers (calls/s) | vs reference |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in samples:
        median, p99 = statistics.median(samples[name]), _p99(samples[name])
        rate = statistics.median(rates[name])
        print(f"| {name} | {median * 1000:.3f} | {p99 * 1000:.3f} | {median / base_median:.2f}× | {rate:,.0f} | "
              f"{rate / base_rate:.2f}× |")


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = 4
    old_with_old_dbfile = _reference_ledger("ref_old", _git_show(REFERENCE, "app/dbfile.py"))
    old_with_new_dbfile = _reference_ledger("ref_newdb", (ROOT / "app" / "files" / "dbfile.py").read_text()
                                            .replace("from ..stream.redact", "from app.stream.redact"))
    reference = f"sqlite, before the interface ({REFERENCE})"

    def sqlite_openers(where: Path) -> dict[str, Callable[[], Any]]:
        return {
            reference: lambda: _Old(old_with_old_dbfile, where / "ref.db"),
            f"sqlite, {REFERENCE} ledger on today's dbfile": lambda: _Old(old_with_new_dbfile, where / "refdb.db"),
            "sqlite (SqliteLedger, today)": lambda: SqliteLedger(where / "now.db"),
        }

    disk = sqlite_openers(Path(tempfile.mkdtemp(prefix="callstream-bench-ledger-")))
    cluster = None
    try:
        from app.ledger.postgres import PostgresLedger, migrate
        from tests.pgserver import PgCluster

        cluster = PgCluster()
        cluster.start()
        url = cluster.url()
        migrate(url)
        disk["PostgreSQL over loopback (PostgresLedger)"] = lambda: PostgresLedger(url)
    except Exception as exc:  # the table says so; sqlite is still measured
        print(f"PostgreSQL not measured: {exc}")
    try:
        durable = _measure(disk, count, rounds)
    finally:
        if cluster is not None:
            cluster.destroy()
    code = _measure(sqlite_openers(Path(tempfile.mkdtemp(prefix="callstream-bench-ledger-", dir="/dev/shm"))),
                    count, rounds)
    _table(f"Claim + result round trip on disk (durable: fsync), {count} fresh keys each, interleaved in blocks "
           f"of 20; 8 concurrent claimers (one client each, 25 calls each, median of {rounds} bursts)",
           reference, *durable)
    _table("The same on tmpfs (/dev/shm: fsync costs nothing, so this is the code's own cost)", reference, *code)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
