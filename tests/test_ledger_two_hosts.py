"""Two hosts on one machine: the PostgreSQL ledger in one network namespace,
callstream clients in another, joined by a veth pair on a private /30 that
exists only inside these two namespaces (10.200.0.1 the database, 10.200.0.2
the clients). Over that network: 200 racing calls run each side effect
exactly once; a holder SIGKILLed mid-call leaves ``unknown`` after its lease
and never a second run; the database restarted mid-run (an immediate stop:
crash recovery) loses no result that was recorded.

Needs root and ``ip netns``; skips, saying why, where they cannot be had.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

pytest.importorskip("psycopg", reason="psycopg is not installed")

from tests.pgserver import ClusterUnavailable, PgCluster  # noqa: E402
from tests.waiting import wait_until_sync  # noqa: E402

DB_ADDR, CLIENT_ADDR = "10.200.0.1", "10.200.0.2"


class Hosts:
    def __init__(self) -> None:
        tag = f"{os.getpid() % 100000}"
        self.db, self.client = f"cs18db{tag}", f"cs18cl{tag}"
        self.veth = (f"v18d{tag}", f"v18c{tag}")
        self.cluster: PgCluster | None = None

    def ip(self, *args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)

    def up(self) -> None:
        for ns in (self.db, self.client):
            self.ip("netns", "add", ns)
            self.ip("-n", ns, "link", "set", "lo", "up")
        self.ip("link", "add", self.veth[0], "netns", self.db, "type", "veth", "peer", "name", self.veth[1],
                "netns", self.client)
        self.ip("-n", self.db, "addr", "add", f"{DB_ADDR}/30", "dev", self.veth[0])
        self.ip("-n", self.client, "addr", "add", f"{CLIENT_ADDR}/30", "dev", self.veth[1])
        self.ip("-n", self.db, "link", "set", self.veth[0], "up")
        self.ip("-n", self.client, "link", "set", self.veth[1], "up")

    def down(self) -> None:
        if self.cluster is not None:
            self.cluster.destroy()
        for ns in (self.db, self.client):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)

    def client_cmd(self, *args: str) -> list[str]:
        return ["ip", "netns", "exec", self.client, *args]


@pytest.fixture(scope="module")
def hosts() -> Iterator[Hosts]:
    if os.geteuid() != 0:
        pytest.skip(reason="network namespaces need root")
    if shutil.which("ip") is None:
        pytest.skip(reason="no `ip` command (Debian's iproute2)")
    made = Hosts()
    try:
        made.up()
    except (subprocess.CalledProcessError, OSError) as exc:
        made.down()
        detail = exc.stderr.strip() if isinstance(exc, subprocess.CalledProcessError) else str(exc)
        pytest.skip(reason=f"cannot make network namespaces here: {detail}")
    try:
        made.cluster = PgCluster(host=DB_ADDR, port=5432, netns=made.db, allow=f"{CLIENT_ADDR}/32")
        made.cluster.start()
    except (ClusterUnavailable, OSError, subprocess.SubprocessError) as exc:
        made.down()
        pytest.skip(reason=f"no PostgreSQL server could be started in the namespace: {exc}")
    yield made
    made.down()


def _racer(hosts: Hosts, conversation: str, effects: Path, calls: int, seed: int, sleep: float,
           lease: float) -> subprocess.Popen[str]:
    assert hosts.cluster is not None
    return subprocess.Popen(hosts.client_cmd(sys.executable, "-m", "tests.ledger_racer", hosts.cluster.url(),
                                             conversation, str(effects), str(calls), str(seed), str(sleep),
                                             str(lease)),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _outcomes(process: subprocess.Popen[str], timeout: float = 240) -> list[dict[str, Any]]:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-2000:]
    return [line for line in map(json.loads, out.splitlines()) if "n" in line]


def _effects(path: Path) -> Counter[str]:
    return Counter(line.split()[0] for line in path.read_text().splitlines()) if path.exists() else Counter()


def _ledger_json(hosts: Hosts, tmp_path: Path) -> list[dict[str, Any]]:
    """`callstream ledger --json`, run as a client on the other host."""
    assert hosts.cluster is not None
    (tmp_path / "config.toml").write_text(f'ledger = "{hosts.cluster.url()}"\nteam = "support"\n')
    env = {**os.environ, "CALLSTREAM_HOME": str(tmp_path / "home"), "CALLSTREAM_CONFIG": str(tmp_path / "config.toml")}
    done = subprocess.run(hosts.client_cmd(sys.executable, "-m", "app", "ledger", "--json"), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    entries: list[dict[str, Any]] = json.loads(done.stdout)
    return entries


def test_two_clients_on_another_host_run_each_of_200_racing_calls_once(hosts: Hosts, tmp_path: Path) -> None:
    effects = tmp_path / "effects.txt"
    racers = [_racer(hosts, "race", effects, 200, seed, 0.005, 10.0) for seed in (1, 2)]
    results = [_outcomes(r) for r in racers]
    counted = _effects(effects)
    assert len(counted) == 200 and set(counted.values()) == {1}, counted.most_common(3)
    for outcomes in results:
        assert len(outcomes) == 200
        assert {o["state"] for o in outcomes} == {"ran"}, Counter(o["state"] for o in outcomes)
    ran_here = [sum(o["ran_here"] for o in outcomes) for outcomes in results]
    assert sum(ran_here) == 200 and all(ran_here), ran_here  # both clients won some of the races
    by_key = {o["key"]: o["result"] for o in results[0]}
    assert all(by_key[o["key"]] == o["result"] for o in results[1])  # the loser got the winner's result
    entries = [e for e in _ledger_json(hosts, tmp_path) if e["conversation"] == "team:support/race"]
    assert len(entries) == 200 and {e["state"] for e in entries} == {"ran"}


def test_a_holder_sigkilled_mid_call_leaves_unknown_after_its_lease_and_never_a_second_run(
        hosts: Hosts, tmp_path: Path) -> None:
    effects = tmp_path / "effects.txt"
    holder = _racer(hosts, "killed", effects, 1, 0, 600, 2.0)
    wait_until_sync(lambda: sum(_effects(effects).values()) == 1, "the holder's one effect", timeout=60)
    os.kill(holder.pid, signal.SIGKILL)  # `ip netns exec` execs the client: this pid is the client itself
    holder.wait(30)
    started = time.monotonic()
    (again,) = _outcomes(_racer(hosts, "killed", effects, 1, 0, 0, 2.0))
    assert again["state"] == "unknown" and again["ran_here"] == 0
    assert time.monotonic() - started < 60  # it waited out the lease, not the tool's whole timeout
    assert sum(_effects(effects).values()) == 1
    (entry,) = [e for e in _ledger_json(hosts, tmp_path) if e["conversation"] == "team:support/killed"]
    assert entry["state"] == "unknown"


def test_the_database_restarted_mid_run_loses_no_recorded_result(hosts: Hosts, tmp_path: Path) -> None:
    assert hosts.cluster is not None
    effects = tmp_path / "effects.txt"
    racers = [_racer(hosts, "restart", effects, 150, seed, 0.02, 10.0) for seed in (3, 4)]
    wait_until_sync(lambda: sum(_effects(effects).values()) >= 40, "40 effects before the restart",
                    seen=lambda: sum(_effects(effects).values()), timeout=60)
    hosts.cluster.stop("immediate")  # a crash, as far as the database knows
    hosts.cluster.start()
    results = [_outcomes(r) for r in racers]
    counted = _effects(effects)
    assert set(counted.values()) == {1}, counted.most_common(3)  # nothing ran twice
    entries = {e["key"]: e for e in _ledger_json(hosts, tmp_path) if e["conversation"] == "team:support/restart"}
    recorded = [o for outcomes in results for o in outcomes
                if o["state"] == "ran" and "not recorded in the ledger" not in (o["result"] or "")]
    assert len(recorded) >= 150  # the clients rode out the restart: most calls were recorded
    for outcome in recorded:
        entry = entries[outcome["key"]]
        assert (entry["state"], entry["result"]) == ("ran", outcome["result"]), outcome
    for outcomes in results:
        assert {o["state"] for o in outcomes} <= {"ran", "not run", "unknown"}


def test_two_callstream_asks_continuing_one_conversation_open_one_ticket(hosts: Hosts, tmp_path: Path) -> None:
    """`callstream ask` itself, twice at once on the client host, each with its own
    data dir and its own demo model on that host's loopback, continuing the same
    conversation (exported from one, imported into the other) in the team's
    namespace: the ticket is opened once, and the other ask gets its result."""
    import sqlite3

    assert hosts.cluster is not None
    homes = [tmp_path / "laptop", tmp_path / "ci"]

    def env(home: Path) -> dict[str, str]:
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text(
            f'default = "demo"\nledger = "{hosts.cluster.url()}"\nteam = "support"\n\n'  # type: ignore[union-attr]
            '[providers.demo]\nprovider = "demo"\nspeed = 0\n')
        return {**os.environ, "CALLSTREAM_HOME": str(home / "data"), "CALLSTREAM_CONFIG": str(home / "config.toml")}

    def callstream(home: Path, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(hosts.client_cmd(sys.executable, "-m", "app", *args), cwd=ROOT, env=env(home),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finished(process: subprocess.Popen[str]) -> str:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err[-2000:]
        return out

    assert "ledger schema" in finished(callstream(homes[0], "ledger", "migrate"))
    first = json.loads(finished(callstream(homes[0], "ask", "Hello!", "--json")))
    conversation = first["conversation"]
    exported = tmp_path / "conversation.json"
    exported.write_text(finished(callstream(homes[0], "export", conversation)))
    finished(callstream(homes[1], "import", str(exported)))
    prompt = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."
    asks = [callstream(home, "ask", "--conversation", conversation, prompt, "--json",
                     "--approve", "create_ticket") for home in homes]
    documents = [json.loads(finished(a)) for a in asks]
    tickets = []
    for document in documents:
        (card,) = [b for t in document["turns"] for b in t["blocks"]
                   if b["type"] == "tool_call" and b["name"] == "create_ticket"]
        tickets.append(card)
    assert {c["state"] for c in tickets} == {"ran"}
    assert sorted(bool(c.get("reused")) for c in tickets) == [False, True]  # one ran it, one was given its result
    assert tickets[0]["result"] == tickets[1]["result"]
    (entry,) = [e for e in _ledger_json(hosts, tmp_path) if e["conversation"] == f"team:support/{conversation}"
                and e["tool"] == "create_ticket"]
    assert entry["state"] == "ran" and entry["result"] == tickets[0]["result"]
    opened = 0
    for home in homes:
        with sqlite3.connect(home / "data" / "support.db") as db:
            opened += db.execute("SELECT count(*) FROM tickets WHERE idempotency_key = ?",
                                 (entry["key"],)).fetchone()[0]
    assert opened == 1
