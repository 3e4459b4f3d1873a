"""Many read-only calls in one turn: peak RSS, processes at once, wall time.

    make bench-many-calls
    python benchmarks/bench_many_calls.py --calls 10000 --all

One turn of N calls to a read-only command tool (``cat``: a real process
per call) over real HTTP with a real sqlite ledger, each in a fresh process
(``tests/many_calls_worker.py``) so its peak RSS is its own. The reference,
measured in the same run, is a turn of 10 calls. Rows: the default caps (128
calls run, the rest not run; 8 at once) and, with ``--all``, every call run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(calls: int, max_calls: int, max_concurrent: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-many-calls-") as directory:
        done = subprocess.run([sys.executable, "-m", "tests.many_calls_worker", str(calls), str(max_calls),
                               str(max_concurrent), directory], cwd=ROOT, capture_output=True, text=True, check=True)
    report: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--all", action="store_true", help="also run every call (max_calls_per_turn = calls)")
    args = parser.parse_args()
    rows = [("reference: 10 calls", 10, 128), (f"{args.calls:,} calls, default caps", args.calls, 128)]
    if args.all:
        rows.append((f"{args.calls:,} calls, all run", args.calls, args.calls))
    reference: int | None = None
    print(f"{'turn':<34} {'ran':>7} {'not run':>8} {'at once':>8} {'peak RSS':>10} {'× ref':>6} {'seconds':>8}")
    for label, calls, max_calls in rows:
        report = measure(calls, max_calls, 8)
        rss = int(report["max_rss_kib"])  # type: ignore[call-overload]
        reference = reference or rss
        states = report["states"]
        assert isinstance(states, dict)
        print(f"{label:<34} {states.get('ran', 0):>7} {states.get('not run', 0):>8} {report['peak_running']:>8} "
              f"{rss / 1024:>8.1f} MB {rss / reference:>6.2f} {report['seconds']:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
