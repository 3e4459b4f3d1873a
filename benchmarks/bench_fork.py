"""What a fork of a long conversation costs: ``Store.fork_at`` (what ``/fork``
and ``callstream fork`` run) on a conversation of 10, 1,000 (and, with
``--huge``, 10,000) exchanges, at its first exchange and at its last; and
what a resync costs (``TranscriptWriter.resync``: another process added the
last exchange, and the session takes it in before it sends, its history read
at once as ``send`` reads it).

    make bench-fork                                   # this checkout's store
    make bench-fork BENCH_ARGS=--huge                 # 10,000 exchanges too
    python benchmarks/bench_fork.py --source DIR      # another checkout's store (a before/after)

The transcript is the long-conversation tests' (``tests/long_transcript.py``:
each exchange a user message, a reply with a sentence and two search calls
that ran, a Markdown reply with a list and a code block; an edited question
half-way on a branch of its own), written through the real store into a
fresh sqlite file. Each fork (and resync) runs in a fresh process importing
the store of ``--source``: the table gives its wall time and the process's
peak RSS (``ru_maxrss``) beside its RSS just before (the store opened), so
the growth is the fork's; each runs ``--rounds`` times (the best time, the
least RSS). A fork at the first exchange copies three entries: what it costs
beyond that is what it reads to get there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.long_transcript import write_long  # noqa: E402

#: Run in a fresh process: open the store at argv[2] with the code of argv[1], fork argv[3] at argv[4].
CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from app.store.transcripts import Store
store = Store(Path(sys.argv[2]))
at = None if sys.argv[4] == "head" else int(sys.argv[4])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
source, at, fork = store.fork_at(sys.argv[3], at)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
copied = store._db.execute("SELECT COUNT(*) FROM entries WHERE conversation = ?", (fork,)).fetchone()[0]
store.close()
print(json.dumps({"seconds": seconds, "before_kb": before, "peak_kb": peak, "copied": copied}))
"""

#: The same for a resync of argv[3]: the writer knows every entry but the last exchange's three.
RESYNC = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from types import SimpleNamespace
from app.chat.transcribe import TranscriptWriter
from app.store.transcripts import Store
store = Store(Path(sys.argv[2]))
conversation = sys.argv[3]
writer = TranscriptWriter(store, SimpleNamespace(conversation=conversation), "demo")
head = store._db.execute("SELECT head FROM conversations WHERE id = ?", (conversation,)).fetchone()[0]
seqs = [r[0] for r in store._db.execute("SELECT seq FROM entries WHERE conversation = ?", (conversation,))]
writer._known = set(seqs) - {head, head - 1, head - 2}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
moved = writer.resync()
history = moved.history() if callable(moved.history) else moved.history
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
store.close()
print(json.dumps({"seconds": seconds, "before_kb": before, "peak_kb": peak, "copied": len(moved.added)}))
"""


def fork_once(source: Path, db: Path, conversation: str, at: str) -> dict[str, float]:
    code = RESYNC if at == "resync" else CHILD
    out = subprocess.run([sys.executable, "-c", code, str(source), str(db), conversation, at],
                         check=True, capture_output=True, text=True).stdout
    result: dict[str, float] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=ROOT, help="the checkout whose store forks (default: this)")
    parser.add_argument("--huge", action="store_true", help="also 10,000 exchanges")
    parser.add_argument("--rounds", type=int, default=2, help="forks of each kind (the table gives the best)")
    args = parser.parse_args()
    sizes = [10, 1000] + ([10000] if args.huge else [])
    print(f"store: {args.source}")
    print("entries: copied by the fork; read whole by the resync (the ones added)")
    print(f"{'exchanges':>9} | {'what':>12} | {'entries':>7} | {'time':>9} | {'peak RSS':>8} | {'growth':>8}")
    print(f"{'-' * 9}-|-{'-' * 12}-|-{'-' * 7}-|-{'-' * 9}-|-{'-' * 8}-|-{'-' * 8}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "transcripts.db"
            conversation = write_long(db, size, branch_at=size // 2)
            for label, at in (("fork first", "2"), ("fork last", "head"), ("resync", "resync")):
                runs = [fork_once(args.source, db, conversation, at) for _ in range(args.rounds)]
                best = min(runs, key=lambda r: r["seconds"])
                peak = min(r["peak_kb"] for r in runs) / 1024
                growth = min(r["peak_kb"] - r["before_kb"] for r in runs) / 1024
                print(f"{size:>9,} | {label:>12} | {int(best['copied']):>7,} | {best['seconds'] * 1000:>6.0f} ms | "
                      f"{peak:>5.0f} MB | {growth:>5.0f} MB", flush=True)


if __name__ == "__main__":
    main()
