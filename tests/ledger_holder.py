"""Another ledger client in its own process (for the contract suite). Usage:
    python -m tests.ledger_holder SPEC KEY LEASE
Claims KEY, prints ``<state> <fence>``, then waits for ``finish STATE RESULT``
on stdin (records it, prints ``finished True|False``) or for EOF (exits
without a result, like a client that stopped)."""

from __future__ import annotations

import sys

from tests.ledgers import open_spec


def main() -> None:
    spec, key, lease = sys.argv[1], sys.argv[2], float(sys.argv[3])
    ledger = open_spec(spec, lease)
    claim = ledger.claim(key, "c", 0, "t", {"n": 1}, 1, wait=0)
    print(claim.state, claim.fence, flush=True)
    line = sys.stdin.readline().rstrip("\n").split(maxsplit=2)
    if line and line[0] == "finish":
        print("finished", ledger.finish(key, line[1], line[2], line[1] != "ran", fence=claim.fence), flush=True)
    ledger.close()


if __name__ == "__main__":
    main()
