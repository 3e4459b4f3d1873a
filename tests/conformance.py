"""Runs the official MCP conformance suite's client scenarios against
callstream (through scripts/conformance_client.py, which uses only callstream's
command line) and reads each scenario's checks.

``python -m tests.conformance`` prints the table for every client scenario.
The suite comes from ``make peers-conformance`` (peers/conformance: the pinned
``@modelcontextprotocol/conformance`` and the node 22 it needs); its scenario
servers are held to 127.0.0.1 by peers/conformance/localhost.cjs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / "peers" / "conformance"
NODE = PEER / "node_modules" / ".bin" / "node"
SUITE = PEER / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
ADAPTER = ROOT / "scripts" / "conformance_client.py"

#: Every client scenario of @modelcontextprotocol/conformance 0.1.16 (`conformance list`).
SCENARIOS = (
    "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
    "auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
    "auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback", "auth/resource-mismatch", "auth/offline-access-scope",
    "auth/offline-access-not-supported", "auth/client-credentials-jwt", "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
)


def unavailable() -> str | None:
    """Why the suite cannot run here, or None."""
    if not NODE.exists() or not SUITE.exists():
        return "the conformance suite is not installed (make peers-conformance)"
    return None


@dataclass(slots=True)
class Outcome:
    scenario: str
    passed: bool
    checks: int
    failed: list[str]

    def row(self) -> str:
        verdict = "pass" if self.passed else "FAIL"
        why = "; ".join(self.failed)[:110]
        return f"| {self.scenario} | {verdict} | {self.checks - len(self.failed)}/{self.checks} | {why} |"


def run(scenario: str, timeout: float = 200.0) -> Outcome:
    """One scenario: the suite starts its servers, runs the adapter, and judges."""
    with tempfile.TemporaryDirectory(prefix="conformance-") as out:
        command = f"{sys.executable} {ADAPTER}"
        try:
            done = subprocess.run(
                [str(NODE), "--require", str(PEER / "localhost.cjs"), str(SUITE), "client", "--command", command,
                 "--scenario", scenario, "--timeout", str(int((timeout - 30) * 1000)), "-o", out],
                cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return Outcome(scenario, False, 1, [f"no verdict within {timeout:g} s"])
        found = list(Path(out).rglob("checks.json"))  # a scenario "auth/x" writes auth/x-TIME/checks.json
        checks = json.loads(found[0].read_text()) if found else []
    judged = [c for c in checks if c.get("status") in ("SUCCESS", "FAILURE", "WARNING")]
    failed = [f"{c.get('id')}: {c.get('status')}" for c in judged if c.get("status") != "SUCCESS"]
    if done.returncode != 0 and not failed:
        failed.append(f"suite exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}")
    return Outcome(scenario, done.returncode == 0 and not failed, len(judged) or 1, failed)


def table(outcomes: list[Outcome]) -> str:
    passed = sum(o.passed for o in outcomes)
    head = ["| scenario | result | checks | not passed |", "|---|---|---|---|"]
    return "\n".join([*head, *(o.row() for o in outcomes), f"\n{passed} of {len(outcomes)} pass"])


if __name__ == "__main__":
    why = unavailable()
    if why:
        sys.exit(why)
    wanted = sys.argv[1:] or list(SCENARIOS)
    print(table([run(s) for s in wanted]))
