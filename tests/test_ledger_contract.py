"""One contract every ledger back-end keeps (sqlite embedded, PostgreSQL shared):
claim before run, a result recorded with the claim's fence token, never a
second run, a racing client waits (bounded) or is told ``elsewhere``, a holder
that is gone leaves ``unknown``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.ledger import Claim, Ledger
from app.ledger.protocol import ENTRY_FIELDS
from tests.ledgers import TEST_LEASE, holder, open_spec
from tests.waiting import wait_until_sync

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'ledger.db'}"
    url: str = request.getfixturevalue("pg_ledger_url")
    return url


@pytest.fixture
def ledger(spec: str) -> Iterator[Ledger]:
    opened = open_spec(spec)
    yield opened
    opened.close()


def test_claim_then_record_then_reuse(ledger: Ledger) -> None:
    first = ledger.claim("k", "c", 0, "t", {"n": 1}, 1)
    assert first.state == "claimed" and first.fence >= 1
    assert ledger.finish("k", "ran", "the result", False, fence=first.fence)
    again = ledger.claim("k", "c", 0, "t", {"n": 1}, 1)
    assert (again.state, again.result, again.is_error) == ("ran", "the result", False)


def test_a_failed_result_comes_back_failed(ledger: Ledger) -> None:
    first = ledger.claim("k", "c", 0, "t", {}, 1)
    ledger.finish("k", "failed", "Error: it broke", True, fence=first.fence)
    again = ledger.claim("k", "c", 0, "t", {}, 1)
    assert (again.state, again.result, again.is_error) == ("failed", "Error: it broke", True)


def test_a_result_recorded_as_unknown_comes_back_unknown(ledger: Ledger) -> None:
    first = ledger.claim("k", "c", 0, "t", {}, 1)
    assert ledger.finish("k", "unknown", "Error: the server went away mid-call.", True, fence=first.fence)
    again = ledger.claim("k", "c", 0, "t", {}, 1, retry_cancelled=True, wait=0)
    assert (again.state, again.result) == ("unknown", "Error: the server went away mid-call.")


def test_a_result_with_a_stale_fence_is_refused(ledger: Ledger) -> None:
    first = ledger.claim("k", "c", 0, "t", {}, 1)
    assert not ledger.finish("k", "ran", "forged", False, fence=first.fence + 1)
    entry = ledger.lookup("k")
    assert entry is not None and entry["state"] == "claimed" and entry["result"] is None


def test_a_second_result_never_overwrites_the_first(ledger: Ledger) -> None:
    first = ledger.claim("k", "c", 0, "t", {}, 1)
    assert ledger.finish("k", "ran", "first", False, fence=first.fence)
    assert not ledger.finish("k", "failed", "second", True, fence=first.fence)
    assert ledger.claim("k", "c", 0, "t", {}, 1).result == "first"


def test_a_cancelled_read_only_call_is_reclaimed_with_a_new_fence(ledger: Ledger) -> None:
    first = ledger.claim("k", "c", 0, "t", {}, 1)
    ledger.finish("k", "cancelled", "Error: cancelled before it ran.", True, fence=first.fence)
    assert ledger.claim("k", "c", 0, "t", {}, 1).state == "failed"  # a side effect: never again
    second = ledger.claim("k", "c", 0, "t", {}, 1, retry_cancelled=True)
    assert second.state == "claimed" and second.fence > first.fence
    assert not ledger.finish("k", "ran", "stale holder", False, fence=first.fence)
    assert ledger.finish("k", "ran", "fresh", False, fence=second.fence)
    assert ledger.claim("k", "c", 0, "t", {}, 1).result == "fresh"


def test_lookup_and_entries_have_the_same_fields(ledger: Ledger) -> None:
    assert ledger.lookup("nothing") is None
    a = ledger.claim("a", "conv-1", 0, "t", {"b": 2, "a": 1.0}, 1)
    ledger.finish("a", "ran", "ok", False, fence=a.fence)
    claimed = (ledger.lookup("a") or {})["claimed_at"]
    wait_until_sync(lambda: time.time() > claimed, "the clock to pass a's claim")  # claimed_at orders the listing
    ledger.claim("b", "conv-2", 1, "u", {}, 1)
    entry = ledger.lookup("a")
    assert entry is not None and set(entry) == set(ENTRY_FIELDS)
    assert entry["arguments"] == '{"a":1,"b":2}' and entry["is_error"] is False
    assert [e["key"] for e in ledger.entries()] == ["a", "b"]
    assert [e["key"] for e in ledger.entries("conv-2")] == ["b"]
    assert [e["state"] for e in ledger.entries()] == ["ran", "claimed"]


def _claim_in_thread(ledger: Ledger, wait: float) -> tuple[threading.Thread, list[Claim]]:
    found: list[Claim] = []
    thread = threading.Thread(target=lambda: found.append(ledger.claim("k", "c", 0, "t", {"n": 1}, 1, wait=wait)))
    thread.start()
    return thread, found


def test_a_racing_client_waits_for_the_holders_result(spec: str, ledger: Ledger) -> None:
    other = holder(spec, "k")
    assert other.stdout is not None and other.stdin is not None
    assert other.stdout.readline().split()[0] == "claimed"
    thread, found = _claim_in_thread(ledger, wait=30)
    other.stdin.write("finish ran the holder's result\n")
    other.stdin.flush()
    assert other.stdout.readline().split() == ["finished", "True"]
    thread.join(30)
    other.wait(10)
    assert (found[0].state, found[0].result) == ("ran", "the holder's result")


def test_a_live_holder_past_the_wait_is_running_elsewhere(spec: str, ledger: Ledger) -> None:
    other = holder(spec, "k")
    assert other.stdout is not None and other.stdin is not None
    try:
        assert other.stdout.readline().split()[0] == "claimed"
        claim = ledger.claim("k", "c", 0, "t", {"n": 1}, 1, wait=0.2)
        assert claim.state == "elsewhere" and claim.holder and claim.holder.endswith(f":{other.pid}")
    finally:
        other.stdin.close()
        other.wait(10)


def test_a_holder_gone_without_a_result_leaves_unknown_never_a_new_claim(spec: str, ledger: Ledger) -> None:
    other = holder(spec, "k")
    assert other.stdout is not None and other.stdin is not None
    assert other.stdout.readline().split()[0] == "claimed"
    other.kill()
    other.wait(10)
    claim = ledger.claim("k", "c", 0, "t", {"n": 1}, 1, wait=TEST_LEASE * 4)  # past the lease
    assert claim.state == "unknown"
    entry = ledger.lookup("k")
    assert entry is not None and entry["state"] == "unknown"
    assert ledger.claim("k", "c", 0, "t", {"n": 1}, 1, retry_cancelled=True, wait=0).state == "unknown"
