"""The idempotency ledger and the dispatcher: keys, claims, crashes, races."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.ledger import SqliteLedger, canonical_json, idempotency_key
from app.tools.base import Tool, ToolContext, ToolError
from app.tools.dispatcher import CallUpdate, Dispatcher
from app.tools.registry import Registry
from tests import storefaults
from tests.conftest import ROOT
from tests.waiting import wait_until, wait_until_sync


@pytest.mark.parametrize("a,b", [
    ({"b": 2, "a": 1}, {"a": 1, "b": 2}),
    ({"n": 1}, {"n": 1.0}),
    ({"n": -0.0}, {"n": 0}),
    ({"s": "\u00e9"}, {"s": "é"}),
    ({"x": {"z": [1, 2], "y": None}}, {"x": {"y": None, "z": [1.0, 2]}}),
])
def test_equal_arguments_in_other_forms_share_a_key(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert idempotency_key("c", 1, "t", a, 1) == idempotency_key("c", 1, "t", b, 1)


@pytest.mark.parametrize("a,b", [
    ({"n": "1"}, {"n": 1}),
    ({"l": [1, 2]}, {"l": [2, 1]}),
    ({"s": "\u00e9"}, {"s": "e\u0301"}),  # NFC vs NFD: no normalisation
    ({"n": 1.5}, {"n": 1}),
])
def test_different_arguments_never_collide(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert idempotency_key("c", 1, "t", a, 1) != idempotency_key("c", 1, "t", b, 1)


def test_key_covers_conversation_turn_tool_and_occurrence() -> None:
    base = idempotency_key("c", 1, "t", {}, 1)
    assert len({base, idempotency_key("d", 1, "t", {}, 1), idempotency_key("c", 2, "t", {}, 1),
                idempotency_key("c", 1, "u", {}, 1), idempotency_key("c", 1, "t", {}, 2)}) == 5


def test_canonical_json_is_compact_and_sorted_by_utf16() -> None:
    assert canonical_json({"b": 1, "a": [1.0, True, None]}) == '{"a":[1,true,null],"b":1}'
    assert canonical_json({"\U0001f600": 1, "\uffff": 2}) == '{"\U0001f600":1,"\uffff":2}'


def test_a_key_is_the_sha256_of_the_canonical_json_it_always_was() -> None:
    # hashed as it is written (no string of the arguments' size): the same keys as before, so a ledger
    # written by an earlier version still names the same calls
    import hashlib

    arguments = {"body": 'a "long" body\n\u00e9\U0001f600 ' * 40_000, "n": [1.0, -0.0, 2.5], "z": {"b": 1, "a": 2}}
    expected = hashlib.sha256(canonical_json(["c", "br", 3, "t", arguments, 2]).encode()).hexdigest()
    assert idempotency_key("c", 3, "t", arguments, 2, branch="br") == expected
    assert idempotency_key("c", 1, "t", {}, 1) == hashlib.sha256(
        b'["c",1,"t",{},1]').hexdigest()


def test_claim_then_record_then_reuse(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "l.db")
    first = ledger.claim("k", "c", 0, "t", {}, 1)
    assert first.state == "claimed"
    ledger.finish("k", "ran", "the result", False, fence=first.fence)
    again = ledger.claim("k", "c", 0, "t", {}, 1)
    assert (again.state, again.result, again.is_error) == ("ran", "the result", False)
    assert ledger.entries()[0]["state"] == "ran"


def test_claim_without_result_from_a_dead_process_is_unknown(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "l.db")
    storefaults.leave_dead_claim(ledger.path, "k", "c", 0, "t", {}, 1, owner=storefaults.dead_owner(2**22 + 4321))
    assert ledger.claim("k", "c", 0, "t", {}, 1).state == "unknown"
    assert ledger.entries()[0]["state"] == "unknown"


def _registry(log: list[str], sleep: float = 0.0) -> Registry:
    async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
        log.append(f"start {arguments.get('n')}")
        await asyncio.sleep(sleep)
        log.append(f"end {arguments.get('n')}")
        if arguments.get("fail"):
            raise ToolError("it broke")
        return f"done {arguments.get('n')}"

    async def read(arguments: dict[str, Any], ctx: ToolContext) -> str:
        log.append(f"start r{arguments.get('n')}")
        await asyncio.sleep(sleep)
        log.append(f"end r{arguments.get('n')}")
        return "read"

    return Registry([
        Tool("effect", "", {"type": "object"}, effect, read_only=False),
        Tool("read", "", {"type": "object"}, read, read_only=True),
    ])


def _dispatch(tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], sleep: float = 0.05,
              turn: int = 0, log: list[str] | None = None) -> tuple[list[CallUpdate], list[str], Dispatcher]:
    log = [] if log is None else log
    updates: list[CallUpdate] = []

    async def go() -> Dispatcher:
        dispatcher = Dispatcher(_registry(log, sleep), SqliteLedger(tmp_path / "l.db"), "conv", turn, updates.append)
        for i, (name, args) in enumerate(calls):
            dispatcher.submit(i, name, args)
        await dispatcher.wait()
        return dispatcher

    return updates, log, asyncio.run(go())


def test_states_go_waiting_running_ran(tmp_path: Path) -> None:
    updates, _, _ = _dispatch(tmp_path, [("effect", {"n": 1})])
    assert [u.state for u in updates] == ["waiting", "running", "ran"]
    assert updates[-1].result == "done 1"


def test_read_only_calls_run_concurrently_side_effects_in_order(tmp_path: Path) -> None:
    _, log, _ = _dispatch(tmp_path, [("read", {"n": 1}), ("read", {"n": 2}), ("effect", {"n": 3}),
                                     ("effect", {"n": 4})])
    assert log.index("start r2") < log.index("end r1")  # overlapped
    assert log.index("end 3") < log.index("start 4")  # one after the other, in order


def test_a_recorded_result_is_returned_not_rerun(tmp_path: Path) -> None:
    log: list[str] = []
    _dispatch(tmp_path, [("effect", {"n": 1})], log=log)
    updates, _, dispatcher = _dispatch(tmp_path, [("effect", {"n": 1})], log=log)
    assert log == ["start 1", "end 1"] and dispatcher.runs == 0
    assert updates[-1].state == "ran" and updates[-1].reused and updates[-1].result == "done 1"


def test_two_identical_calls_in_one_turn_both_run(tmp_path: Path) -> None:
    updates, log, _ = _dispatch(tmp_path, [("effect", {"n": 1}), ("effect", {"n": 1})])
    assert log.count("start 1") == 2
    assert len({u.key for u in updates}) == 2


def test_a_failing_tool_is_failed_and_recorded(tmp_path: Path) -> None:
    updates, _, _ = _dispatch(tmp_path, [("effect", {"n": 1, "fail": True})])
    assert updates[-1].state == "failed" and updates[-1].result == "Error: it broke"
    assert SqliteLedger(tmp_path / "l.db").entries()[0]["state"] == "failed"


def test_a_side_effect_cancelled_while_running_is_unknown_and_a_queued_one_not_run_nor_claimed(
        tmp_path: Path) -> None:
    updates: list[CallUpdate] = []
    log: list[str] = []

    async def go() -> None:
        # each effect takes 5 s (the scenario: the first still runs when the turn is cancelled)
        dispatcher = Dispatcher(_registry(log, 5.0), SqliteLedger(tmp_path / "l.db"), "conv", 0, updates.append)
        dispatcher.submit(0, "effect", {"n": 1})
        dispatcher.submit(1, "effect", {"n": 2})
        await wait_until(lambda: log == ["start 1"], "the first effect to be running", seen=lambda: log)
        dispatcher.cancel()
        await dispatcher.wait()

    asyncio.run(go())
    final = {u.ref: u for u in updates}
    assert final[0].state == "unknown" and "cancelled while it ran" in (final[0].result or "")
    assert final[1].state == "not run"
    assert log == ["start 1"]
    entries = SqliteLedger(tmp_path / "l.db").entries()
    assert [e["state"] for e in entries] == ["unknown"]  # the queued call never started: no claim


def _worker(ledger: Path, effect: Path, sleep: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.ledger_worker", str(ledger), str(effect), str(sleep)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sigkill_between_claim_and_result_leaves_unknown_and_never_reruns(tmp_path: Path) -> None:
    ledger, effect = tmp_path / "l.db", tmp_path / "effect.txt"
    worker = _worker(ledger, effect, 60)  # its tool runs a minute: the kill comes between claim and result
    wait_until_sync(lambda: effect.exists() and effect.read_text() or worker.poll() is not None,
                    "the worker's tool to have its effect")
    assert effect.exists() and effect.read_text(), worker.stderr.read() if worker.stderr else ""
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(10)
    again = _worker(ledger, effect, 0)
    out, err = again.communicate(timeout=30)
    assert out.split() == ["unknown", "not-here"], err
    assert len(effect.read_text().splitlines()) == 1  # the tool never ran a second time
    assert SqliteLedger(ledger).entries()[0]["state"] == "unknown"


def test_two_processes_racing_for_one_key_run_it_once(tmp_path: Path) -> None:
    ledger, effect = tmp_path / "l.db", tmp_path / "effect.txt"
    SqliteLedger(ledger).close()  # create the schema first so both start equal
    workers = [_worker(ledger, effect, 0.5) for _ in range(2)]
    results = sorted(w.communicate(timeout=60)[0].strip() for w in workers)
    assert results == ["ran not-here", "ran ran-here"]
    assert len(effect.read_text().splitlines()) == 1
