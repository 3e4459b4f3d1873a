"""The sqlite ledger keeps a claim's arguments as the canonical JSON it always
did, though it now writes them a piece at a time into ``ledger_arguments``:
what ``entries`` reads back is ``redact(canonical_json(arguments))``, a row
written the old way (in the claim's own row) reads the same, a result never
touches them, and claims from the dispatcher's threads on one connection
never step into each other's transaction."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.ledger import SqliteLedger, canonical_digest, canonical_json, idempotency_key
from app.ledger.branches import ran_elsewhere
from app.stream.jsonwrite import PIECE
from app.stream.redact import REDACTED, redact, register_secret
from tests import storefaults

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                     | _TEXT, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=12)
#: Strings longer than a piece, with escapes and characters beyond the BMP across the cuts.
_LONG = st.builds(lambda unit, n: unit * n, st.sampled_from(['ab"\\\n', "é😀x", "plain "]),
                  st.integers(PIECE // 6, PIECE // 2))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arguments=st.dictionaries(_TEXT, _JSON | _LONG, max_size=4))
def test_stored_arguments_are_the_canonical_json(tmp_path: Path, arguments: dict[str, Any]) -> None:
    ledger = SqliteLedger(tmp_path / "l.db")
    try:
        key = idempotency_key("c", 0, "t", arguments, 1)
        if ledger.lookup(key) is None:
            assert ledger.claim(key, "c", 0, "t", arguments, 1).state == "claimed"
        entry = ledger.lookup(key)
        assert entry is not None
        assert entry["arguments"] == redact(canonical_json(arguments))
    finally:
        ledger.close()


def test_a_secret_across_a_piece_boundary_is_redacted_in_the_stored_arguments(tmp_path: Path) -> None:
    secret = "sk-ledger-args-0123456789abcdef"
    register_secret(secret)
    body = "x" * (PIECE - 10) + secret + " and more " * 30_000  # the secret straddles the first cut
    ledger = SqliteLedger(tmp_path / "l.db")
    key = idempotency_key("c", 0, "t", {"body": body}, 1)
    ledger.claim(key, "c", 0, "t", {"body": body}, 1)
    stored = ledger.entries("c")[0]["arguments"]
    ledger.close()
    assert secret not in stored and REDACTED in stored
    assert stored == redact(canonical_json({"body": body}))


def test_a_result_leaves_the_arguments_as_claimed(tmp_path: Path) -> None:
    arguments = {"body": "é" * 300_000, "n": 1.0}
    ledger = SqliteLedger(tmp_path / "l.db")
    key = idempotency_key("c", 0, "t", arguments, 1)
    claim = ledger.claim(key, "c", 0, "t", arguments, 1)
    assert ledger.finish(key, "ran", "done", False, fence=claim.fence)
    entry = ledger.lookup(key)
    ledger.close()
    assert entry is not None and entry["state"] == "ran" and entry["result"] == "done"
    assert entry["arguments"] == canonical_json(arguments)
    assert canonical_digest(json.loads(entry["arguments"])) == canonical_digest(arguments)


def test_a_claim_written_in_the_old_row_reads_the_same_and_is_found_on_another_branch(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    SqliteLedger(path).close()  # the schema
    arguments = {"order": "A-1", "body": "ü" * 70_000}
    key = idempotency_key("c", 3, "refund", arguments, 1)
    storefaults.leave_dead_claim(path, key, "c", 3, "refund", arguments, 1)
    ledger = SqliteLedger(path)
    try:
        entry = ledger.lookup(key)
        assert entry is not None and entry["arguments"] == canonical_json(arguments)
        assert [e["key"] for e in ran_elsewhere(ledger, [("c", {1, 2})], "refund", arguments)] == [key]
        assert ran_elsewhere(ledger, [("c", {1, 2})], "refund", {**arguments, "order": "A-2"}) == []
        assert ledger.claim(key, "c", 3, "refund", arguments, 1).state == "unknown"  # never re-run
    finally:
        ledger.close()


def test_claims_from_many_threads_on_one_ledger_each_commit_their_own_arguments(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "l.db")
    states: list[str] = []
    calls = [{"n": i, "body": str(i) * (PIECE + i)} for i in range(8)]

    def claim(arguments: dict[str, Any]) -> None:
        key = idempotency_key("c", 0, "t", arguments, 1)
        states.append(ledger.claim(key, "c", 0, "t", arguments, 1).state)

    threads = [threading.Thread(target=claim, args=(a,)) for a in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = {json.loads(e["arguments"])["n"]: e["arguments"] for e in ledger.entries("c")}
    ledger.close()
    assert states == ["claimed"] * len(calls)
    assert stored == {a["n"]: canonical_json(a) for a in calls}
