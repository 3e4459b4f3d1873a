"""Every ledger back-end, opened the same way, for the one contract suite.

A ``spec`` names a ledger so that another process can open the very same
one: ``sqlite:PATH`` or a ``postgresql://`` URL. ``leave_dead_claim`` writes
what a client that died mid-call leaves behind, in each back-end's terms.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from app.ledger import Ledger, SqliteLedger
from tests import storefaults
from tests.conftest import ROOT

#: Short leases so a test waits seconds, not half a minute, for one to run out.
TEST_LEASE = 1.5


def open_spec(spec: str, lease: float = TEST_LEASE) -> Ledger:
    if spec.startswith("sqlite:"):
        return SqliteLedger(Path(spec.removeprefix("sqlite:")))
    from app.ledger.postgres import PostgresLedger

    return PostgresLedger(spec, lease=lease)


def leave_dead_claim(ledger: Ledger, key: str, conversation: str, turn: int, tool: str,
                     arguments: dict[str, Any], occurrence: int) -> None:
    """A claim without a result whose holder is gone (dead pid / lease run out)."""
    if isinstance(ledger, SqliteLedger):
        storefaults.leave_dead_claim(ledger.path, key, conversation, turn, tool, arguments, occurrence)
        return
    ledger._insert_expired(key, conversation, turn, tool, arguments, occurrence)  # type: ignore[attr-defined]


def holder(spec: str, key: str, lease: float = TEST_LEASE, env: dict[str, str] | None = None,
           prefix: list[str] | None = None) -> subprocess.Popen[str]:
    """Another client, in its own process, holding a claim on ``key`` until told
    ``finish STATE RESULT`` on stdin (or killed); see tests/ledger_holder.py."""
    return subprocess.Popen([*(prefix or []), sys.executable, "-m", "tests.ledger_holder", spec, key, str(lease)],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
