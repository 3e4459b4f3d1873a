"""What the TUI costs on top of the engine, measured headless.

    make bench-tui

A stream with one call whose arguments are 1 MB (a create_ticket body) and
50 KB of prose around it is served from 127.0.0.1 as fast as the socket
allows; a headless callstream app consumes it while keys are pressed in the
input. Reported, against the engine alone (``assemble``) on the same bytes:

- total time in the app vs the engine alone (the UI overhead ratio);
- the longest single forming decode (``FormingPreview.feed``), target ≤ 4 ms;
- key press → screen update latency while the stream runs, median and p95,
  target p95 < 50 ms;
- the forming decode's total cost at 100 KB and at 1 MB of arguments
  (linear: 1 MB at most 12× what 100 KB costs).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402

from app.chat.providers import Endpoint  # noqa: E402
from app.config import Config  # noqa: E402
from app.stream import assemble  # noqa: E402
from app.stream.preview import FormingPreview  # noqa: E402
from app.tui.app import make_app  # noqa: E402
from tests import streamgen  # noqa: E402
from tests.faultserver import FaultServer, Reply  # noqa: E402
from widgets.prompt_input import PromptInput  # noqa: E402

PROSE_WORDS = "The parcel left the hub on Tuesday and has not been scanned since; the carrier says a trace takes days. "


def body_for(args_size: int, prose_size: int = 50_000, fragment: int = 16) -> bytes:
    paragraph = PROSE_WORDS * 5 + "\n\n"  # models write paragraphs: about 550 characters each
    prose = (paragraph * (prose_size // len(paragraph) + 1))[:prose_size]
    text = (PROSE_WORDS * (args_size // len(PROSE_WORDS) + 1))[:args_size]
    args = json.dumps({"order_id": "A-1042", "subject": "Late parcel", "body": text, "priority": "high"})
    pieces = [prose[i : i + 12] for i in range(0, len(prose), 12)]
    script = [("text", p) for p in pieces] + streamgen.call_script(0, "t1", "create_ticket", args, fragment)
    return streamgen.anthropic(script)


async def run_app(body: bytes, press_keys: bool) -> dict[str, object]:
    decode_times: list[float] = []
    original = FormingPreview.feed

    def timed(self: FormingPreview, fragment: str) -> bool:
        start = time.perf_counter()
        try:
            return original(self, fragment)
        finally:
            decode_times.append(time.perf_counter() - start)

    FormingPreview.feed = timed  # type: ignore[method-assign]
    latencies: list[float] = []
    try:
        with FaultServer() as server:
            server.replies.append(Reply(body, chunk=4096))
            server.replies.append(Reply(streamgen.anthropic([("text", "Filed.")], stop_reason="end_turn")))
            app = make_app(config=Config(), endpoint=Endpoint("anthropic", server.url, "m", "bench"))
            async with app.run_test(headless=True, size=(120, 40)) as pilot:
                prompt = app.screen.query_one(PromptInput)
                prompt.text = "file it"
                await pilot.pause()
                start = time.perf_counter()
                prompt.post_message(events.Key("enter", None))  # pilot.press would wait for the app to go idle
                while not app.session.busy and not app.session.turns:
                    await asyncio.sleep(0.001)
                while True:
                    if press_keys:
                        # a key as the terminal would deliver it, without waiting for the app to go idle
                        before = prompt.text
                        t0 = time.perf_counter()
                        prompt.post_message(events.Key("x", "x"))
                        while prompt.text == before:
                            await asyncio.sleep(0.0005)
                        await prompt.wait_for_refresh()
                        latencies.append(time.perf_counter() - t0)
                        await asyncio.sleep(0.01)
                    else:
                        await asyncio.sleep(0.005)
                    if not app.session.busy:
                        break
                total = time.perf_counter() - start
                await app.workers.wait_for_complete()
                states = [b.state for t in app.session.turns for b in t.blocks if b.type == "tool_call"]
    finally:
        FormingPreview.feed = original  # type: ignore[method-assign]
    return {"total": total, "decodes": decode_times, "latencies": latencies, "states": states}


def engine_alone(body: bytes, repeat: int = 3) -> float:
    chunks = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        assemble(chunks)
        best = min(best, time.perf_counter() - start)
    return best


def decode_total(args_size: int, fragment: int = 16) -> float:
    text = json.dumps({"order_id": "A-1042", "body": (PROSE_WORDS * (args_size // len(PROSE_WORDS) + 1))[:args_size]})
    pieces = [text[i : i + fragment] for i in range(0, len(text), fragment)]
    best = float("inf")
    for _ in range(3):
        preview = FormingPreview()
        start = time.perf_counter()
        for piece in pieces:
            preview.feed(piece)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    import os

    os.environ.setdefault("CALLSTREAM_HOME", tempfile.mkdtemp(prefix="callstream-bench-"))
    os.environ.setdefault("CALLSTREAM_CONFIG", os.path.join(os.environ["CALLSTREAM_HOME"], "none.toml"))
    body = body_for(1_000_000)
    engine = engine_alone(body)
    quiet = asyncio.run(run_app(body, press_keys=False))
    typing = asyncio.run(run_app(body, press_keys=True))
    decodes = list(quiet["decodes"]) + list(typing["decodes"])  # type: ignore[arg-type]
    latencies = sorted(typing["latencies"])  # type: ignore[arg-type]
    small, big = decode_total(100_000), decode_total(1_000_000)
    p95 = latencies[int(len(latencies) * 0.95) - 1] if latencies else float("nan")
    print()
    print("TUI on a 1 MB-argument call + 50 KB of prose, served from 127.0.0.1 at full speed (headless, 120×40)")
    print()
    print("| measure | value | target |")
    print("|---|---|---|")
    print(f"| engine alone (assemble) | {engine * 1000:.0f} ms | — |")
    print(f"| app, stream to done (no typing) | {quiet['total'] * 1000:.0f} ms | — |")  # type: ignore[operator]
    print(f"| UI overhead ratio | {quiet['total'] / engine:.1f}× | — |")  # type: ignore[operator]
    print(f"| app, stream to done (typing meanwhile) | {typing['total'] * 1000:.0f} ms | — |")  # type: ignore[operator]
    print(f"| forming decodes | {len(decodes):,} | — |")
    print(f"| longest single decode | {max(decodes) * 1000:.2f} ms | ≤ 4 ms |")
    print(f"| key press → screen update, median | {statistics.median(latencies) * 1000:.1f} ms | — |")
    print(f"| key press → screen update, p95 ({len(latencies)} presses) | {p95 * 1000:.1f} ms | < 50 ms |")
    print(f"| forming decode total, 100 KB | {small * 1000:.1f} ms | — |")
    print(f"| forming decode total, 1 MB | {big * 1000:.1f} ms | — |")
    print(f"| linearity (1 MB / 100 KB) | {big / small:.1f}× | ≤ 12× |")
    print(f"| call states at the end | {quiet['states']} / {typing['states']} | ran |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
