"""Search over many conversations, measured: ``callstream search`` (sqlite
FTS5 over what may be shown) against the reference it replaced — a LIKE scan
over every stored message and block record — on the same store, in one run.

    make bench-search            # 1,000 conversations (the issue's size)
    python benchmarks/bench_search.py 5000

The conversations are generated: each has three exchanges (a user message,
prose, one or two calls to the demo's tools with allow-listed fields and
results, and a reply), words drawn from a fixed vocabulary with a fixed seed,
written through the store's own API (so the index is the one a real session
builds). Queries: common and rare words, two-word queries, a prefix (what the
search box sends as you type), and a miss. Each query runs once to warm, then
``REPEAT`` times; the table gives medians.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.store import Store, StoredTurn, StoredUser, store_conversation  # noqa: E402
from app.stream import TextBlock, ToolCallBlock  # noqa: E402
from app.tools.registry import Registry  # noqa: E402

REPEAT = 15
WORDS = ("order late parcel carrier refund replacement ticket tracking invoice address customer delivery warehouse "
         "courier priority return damaged missing label payment discount voucher complaint shipping express "
         "weekend monday friday morning evening kitchen garden office lamp chair table sofa shelf mirror").split()
CUSTOMERS = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Ken Thompson",
             "Margaret Hamilton", "Donald Knuth", "Frances Allen", "Tony Hoare"]
QUERIES = ["refund", "carrier", "Hopper", "Dijkstra lamp", "tracking invoice", "A-4242", "zebra", "ware",
           "search_orders", "Barbara"]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def call(rng: random.Random, index: int) -> ToolCallBlock:
    if rng.random() < 0.5:
        name, arguments = "search_orders", {"customer": rng.choice(CUSTOMERS), "status": rng.choice(
            ["open", "late", "shipped"]), "text": rng.choice(WORDS)}
        result = {"count": 1, "orders": [{"order_id": f"A-{rng.randint(1000, 9999)}", "status": "late"}]}
    else:
        name = "create_ticket"
        arguments = {"order_id": f"A-{rng.randint(1000, 9999)}", "subject": sentence(rng, 4),
                     "body": sentence(rng, 20), "priority": "normal"}
        result = {"ticket": f"T-{rng.randint(10000, 99999)}", "order_id": arguments["order_id"], "status": "open"}
    import json

    raw = json.dumps(arguments)
    return ToolCallBlock(id=f"call_{index}", name=name, fragments=[raw], size=len(raw), ended=True, final=True,
                         arguments=arguments, state="ran", result=json.dumps(result))


def generate(store: Store, count: int, seed: int = 17) -> None:
    rng = random.Random(seed)
    for n in range(count):
        entries: list[StoredUser | StoredTurn] = []
        turn = 0
        for _ in range(3):
            parent = entries[-1].seq if entries else None
            entries.append(StoredUser(len(entries), f"{rng.choice(CUSTOMERS)}: {sentence(rng, 12)}", "done",
                                      parent=parent))
            blocks = [TextBlock(sentence(rng, 15))] + [call(rng, i) for i in range(rng.randint(1, 2))]
            entries.append(StoredTurn(len(entries), turn, blocks, outcome="complete", parent=entries[-1].seq))
            entries.append(StoredTurn(len(entries), turn + 1, [TextBlock(sentence(rng, 40))], outcome="complete",
                                      parent=entries[-1].seq))
            turn += 2
        store_conversation(store, {"id": f"gen-{n:05d}", "provider": "bench", "model": "m", "dialect": ""},
                           entries)


def like_scan(store: Store, text: str) -> list[str]:
    """The reference: what the transcripts filter did before FTS (and what a
    grep over JSONL does): every message and block record, scanned."""
    like = "%" + text + "%"
    rows = store._db.execute(
        "SELECT DISTINCT conversation FROM entries WHERE text LIKE ? UNION "
        "SELECT DISTINCT conversation FROM blocks WHERE record LIKE ?", (like, like)).fetchall()
    return [r[0] for r in rows]


def timed(fn: object, *args: object) -> float:
    start = time.perf_counter()
    fn(*args)  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    home = Path(tempfile.mkdtemp(prefix="callstream-search-"))
    store = Store(home / "callstream.db", Registry.default(home).display_specs)
    start = time.perf_counter()
    generate(store, count)
    built = time.perf_counter() - start
    rows = store._db.execute("SELECT COUNT(*) FROM search_text").fetchone()[0]
    size = (home / "callstream.db").stat().st_size + (home / "callstream.db-wal").stat().st_size
    print(f"\n{count} generated conversations ({rows} indexed messages and blocks, {size / 1e6:.1f} MB with the "
          f"WAL), written in {built:.1f} s; medians of {REPEAT} runs per query, in ms\n")
    print("| query | matches | FTS5 search | LIKE scan (reference) | scan / search |")
    print("|---|---:|---:|---:|---:|")
    fts_all, like_all = [], []
    for query in QUERIES:
        store.search(query)
        like_scan(store, query)
        fts = statistics.median(timed(store.search, query) for _ in range(REPEAT))
        like = statistics.median(timed(like_scan, store, query) for _ in range(REPEAT))
        fts_all.append(fts)
        like_all.append(like)
        print(f"| `{query}` | {len(store.search(query))} | {fts:.2f} | {like:.2f} | {like / fts:.0f}× |")
    fts_median, like_median = statistics.median(fts_all), statistics.median(like_all)
    print(f"| **all queries** | | **{fts_median:.2f}** | **{like_median:.2f}** | **{like_median / fts_median:.0f}×** |")
    verdict = "under" if fts_median < 50 else "OVER"
    print(f"\nmedian search: {fts_median:.2f} ms — {verdict} the 50 ms budget")
    store.close()
    return 0 if fts_median < 50 else 1


if __name__ == "__main__":
    sys.exit(main())
