"""Speculative warming, measured: time from a call's end to its result, with
and without warming, on the demo tools and the same streams, in one run.

    make bench-warming

Each trial is a fresh data dir, so the support store starts cold (the first
read opens and seeds it — the cost a real tool pays to connect and prepare).
The demo model streams at its normal pace (speed 1), so the time between a
read-only call's required fields becoming stable and the call's end is real.
Trials alternate warm / cold to share the machine's noise evenly.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.runtime.wiring import open_runtime  # noqa: E402
from app.settings.config import Config  # noqa: E402
from app.settings.profiles import ProviderProfile  # noqa: E402

PROMPTS = {
    "two search_orders (nothing required: warm from the first fragment)":
        "Show me Grace Hopper's open and shipped orders",
    "three get_order + one search_orders (/demo parallel)": "/demo parallel",
    "get_order (order_id required: warm once it closes)": "Show me order A-1042",
}


async def trial(prompt: str, warming: bool) -> list[tuple[str, float]]:
    home = tempfile.mkdtemp(prefix="callstream-warm-")
    os.environ["CALLSTREAM_HOME"] = home
    os.environ["CALLSTREAM_CONFIG"] = os.path.join(home, "none.toml")
    profile = ProviderProfile(name="demo", provider="demo", demo_speed=1.0)
    runtime = open_runtime(config=Config(providers={"demo": profile}, default="demo", record=False))
    session = runtime.session()
    session.warming = warming
    try:
        await session.send(prompt)
    finally:
        await session.aclose()
        runtime.close()
    out = []
    for turn in session.turns:
        for block in turn.blocks:
            if block.type == "tool_call" and block.state == "ran" and block.ended_at is not None:
                out.append((block.name, block.timings["ran"] - block.ended_at))
    return out


def main() -> int:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    print(f"\nTime from a call's end to its result (ms), median of {trials} cold-store trials, demo model at speed 1\n")
    print("| stream | calls | without warming | with warming | saved |")
    print("|---|---|---|---|---|")
    for label, prompt in PROMPTS.items():
        cold: list[float] = []
        warm: list[float] = []
        calls = 0
        for _ in range(trials):
            for warming, bucket in ((False, cold), (True, warm)):
                results = asyncio.run(trial(prompt, warming))
                calls = len(results)
                bucket.append(statistics.median(delay for _, delay in results))
        before, after = statistics.median(cold) * 1000, statistics.median(warm) * 1000
        print(f"| {label} | {calls} | {before:.1f} | {after:.1f} | {before - after:.1f} ({(1 - after / before):.0%}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
