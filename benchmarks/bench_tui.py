"""What the TUI costs on top of the engine, measured headless.

    make bench-tui                 # three runs of each, medians
    python benchmarks/bench_tui.py --runs 1 --paragraphs 200   # quicker

A stream with one call whose arguments are 1 MB (a create_ticket body) and
50 KB of prose around it is served from 127.0.0.1 as fast as the socket
allows; a headless callstream app consumes it while keys are pressed in the
input. Reported, each against a reference measured in the same run:

- total time in the app vs the engine alone (``assemble``, the reference):
  the UI overhead ratio;
- the longest single forming decode (``FormingPreview.feed``), target ≤ 4 ms;
- key press → screen update while the stream runs, median and p95, on the
  machine as it is ("quiet") and with a busy-loop process started by the
  benchmark itself ("other core busy"); targets p95 < 33 ms (two frames at
  60 Hz) and < 50 ms; the reference is the same key press in the same app
  with no stream;
- the flush cost per paragraph as a reply grows to 500 paragraphs (the
  curve: each paragraph's best of the runs), for the prose widget and for
  the reference: Textual's own ``Markdown.append`` with the ``:last-child``
  rule the widget used to have;
- the forming decode's total cost at 100 KB and at 1 MB of arguments
  (linear: 1 MB at most 12× what 100 KB costs).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.containers import VerticalScroll  # noqa: E402
from textual.widgets import Markdown  # noqa: E402

from app.net.endpoint import Endpoint  # noqa: E402
from app.settings.config import Config  # noqa: E402
from app.stream import assemble  # noqa: E402
from app.stream.preview import FormingPreview  # noqa: E402
from app.tui.app import make_app  # noqa: E402
from tests import streamgen  # noqa: E402
from tests.faultserver import FaultServer, Reply  # noqa: E402
from widgets.prompt_input import PromptInput  # noqa: E402
from widgets.prose import ProseBlock  # noqa: E402

PROSE_WORDS = "The parcel left the hub on Tuesday and has not been scanned since; the carrier says a trace takes days. "


def body_for(args_size: int, prose_size: int = 50_000, fragment: int = 16) -> bytes:
    paragraph = PROSE_WORDS * 5 + "\n\n"  # models write paragraphs: about 550 characters each
    prose = (paragraph * (prose_size // len(paragraph) + 1))[:prose_size]
    text = (PROSE_WORDS * (args_size // len(PROSE_WORDS) + 1))[:args_size]
    args = json.dumps({"order_id": "A-1042", "subject": "Late parcel", "body": text, "priority": "high"})
    pieces = [prose[i : i + 12] for i in range(0, len(prose), 12)]
    script = [("text", p) for p in pieces] + streamgen.call_script(0, "t1", "create_ticket", args, fragment)
    return streamgen.anthropic(script)


async def _press(prompt: PromptInput) -> float:
    """One key as the terminal would deliver it (without waiting for the app
    to go idle), until the input shows it and has been redrawn."""
    before = prompt.text
    t0 = time.perf_counter()
    prompt.post_message(events.Key("x", "x"))
    while prompt.text == before:
        await asyncio.sleep(0.0005)
    await prompt.wait_for_refresh()
    return time.perf_counter() - t0


async def run_app(body: bytes | None, press_keys: bool, idle_presses: int = 60) -> dict[str, object]:
    """The app on ``body`` (None: no stream at all, the keys alone)."""
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
    total = 0.0
    states: list[str] = []
    try:
        with FaultServer() as server:
            if body is not None:
                server.replies.append(Reply(body, chunk=4096))
                server.replies.append(Reply(streamgen.anthropic([("text", "Filed.")], stop_reason="end_turn")))
            # create_ticket allowed without asking: the benchmark measures rendering, not a person deciding
            app = make_app(config=Config(allow=["create_ticket"]),
                           endpoint=Endpoint("anthropic", server.url, "m", "bench"))
            async with app.run_test(headless=True, size=(120, 40)) as pilot:
                prompt = app.screen.query_one(PromptInput)
                # a person reads the screen and types a prompt first: the app has warmed up by then
                while not app.warmed:
                    await asyncio.sleep(0.01)
                await pilot.pause()
                if body is None:
                    for _ in range(idle_presses):
                        latencies.append(await _press(prompt))
                        await asyncio.sleep(0.01)
                    return {"total": 0.0, "decodes": [], "latencies": latencies, "states": []}
                prompt.text = "file it"
                await pilot.pause()
                start = time.perf_counter()
                prompt.post_message(events.Key("enter", None))  # pilot.press would wait for the app to go idle
                while not app.session.busy and not app.session.turns:
                    await asyncio.sleep(0.001)
                while True:
                    if press_keys:
                        latencies.append(await _press(prompt))
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


@contextlib.contextmanager
def other_core_busy() -> Iterator[None]:
    """A busy loop in another process for as long as the block runs."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        yield
    finally:
        spinner.kill()
        spinner.wait()


def verdict(passed: bool) -> str:
    return "pass" if passed else "miss"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)] if ordered else float("nan")


# -- the flush cost per paragraph as a reply grows ------------------------------


class OldProse(Markdown):
    """The reference: Textual's Markdown.append, with the rule the prose widget used to have."""

    DEFAULT_CSS = """
    OldProse { margin: 1 0 0 0; padding: 0 1; background: transparent; }
    OldProse > MarkdownBlock:last-child { margin-bottom: 0; }
    """


class Holder(App[None]):
    def __init__(self, widget: Markdown) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield VerticalScroll(self.widget)


async def flush_curve(widget: Markdown, paragraphs: int) -> list[float]:
    """CPU seconds per paragraph appended (one flush, then the app idle again:
    layout and paint included). CPU time, not wall time: on a shared machine
    the wall clock mostly measures the neighbours."""
    paragraph = PROSE_WORDS * 5 + "\n\n"
    times: list[float] = []
    app = Holder(widget)
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(paragraphs):
            t0 = time.process_time()
            if isinstance(widget, ProseBlock):
                widget.add(paragraph)
                await widget._flush()
            else:
                await widget.append(paragraph)
            await pilot.pause()
            times.append(time.process_time() - t0)
    return times


def best_curve(make: type[Markdown], paragraphs: int, runs: int) -> list[float]:
    """Each paragraph's cheapest flush over ``runs`` fresh replies. This
    machine's speed drifts by half over seconds (a shared VM), and one curve
    takes many seconds, so a single run's 50th and 500th paragraphs meet
    different machines; the best of a few runs at each point compares the
    widget with itself."""
    curves = [asyncio.run(flush_curve(make(), paragraphs)) for _ in range(max(1, runs))]
    return [min(costs) for costs in zip(*curves, strict=True)]


def window(times: list[float], at: int, width: int = 10) -> float:
    """The median cost around paragraph ``at`` (1-based)."""
    part = times[max(0, at - width) : at]
    return statistics.median(part) if part else float("nan")


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

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3, help="runs of each app measurement (medians reported)")
    parser.add_argument("--paragraphs", type=int, default=500, help="length of the reply for the flush curve")
    parser.add_argument("--reference-paragraphs", type=int, default=300,
                        help="length of the reference's curve (it grows quadratically)")
    opts = parser.parse_args()
    before = os.getloadavg()
    os.environ.setdefault("CALLSTREAM_HOME", tempfile.mkdtemp(prefix="callstream-bench-"))
    os.environ.setdefault("CALLSTREAM_CONFIG", os.path.join(os.environ["CALLSTREAM_HOME"], "none.toml"))
    body = body_for(1_000_000)
    engine = engine_alone(body)
    quiet_totals, decodes, states = [], [], []
    keys: dict[str, list[list[float]]] = {"idle": [], "quiet": [], "busy": []}
    for _ in range(opts.runs):
        keys["idle"].append(list(asyncio.run(run_app(None, press_keys=True))["latencies"]))  # type: ignore[arg-type]
        quiet = asyncio.run(run_app(body, press_keys=False))
        quiet_totals.append(float(quiet["total"]))  # type: ignore[arg-type]
        typing = asyncio.run(run_app(body, press_keys=True))
        keys["quiet"].append(list(typing["latencies"]))  # type: ignore[arg-type]
        decodes += list(quiet["decodes"]) + list(typing["decodes"])  # type: ignore[arg-type]
        states += [quiet["states"], typing["states"]]
        with other_core_busy():
            busy = asyncio.run(run_app(body, press_keys=True))
        keys["busy"].append(list(busy["latencies"]))  # type: ignore[arg-type]
        states.append(busy["states"])
    small, big = decode_total(100_000), decode_total(1_000_000)
    total = statistics.median(quiet_totals)

    def med(mode: str, stat: str) -> float:
        runs = keys[mode]
        values = [statistics.median(r) if stat == "median" else p95(r) for r in runs if r]
        return statistics.median(values) * 1000 if values else float("nan")

    presses = {mode: sum(len(r) for r in runs) for mode, runs in keys.items()}
    after = os.getloadavg()
    print()
    print(f"TUI on a 1 MB-argument call + 50 KB of prose, served from 127.0.0.1 at full speed (headless, 120×40); "
          f"medians of {opts.runs} runs")
    print(f"load average (1 min) before {before[0]:.2f}, after {after[0]:.2f} on {os.cpu_count()} cores"
          + ("" if max(before[0], after[0]) < 1.5 else
             " — a loaded machine: the key targets are for a quiet one (read the ratios to the no-stream reference)"))
    print()
    print("| measure | value | reference (same run) | ratio | target | pass/miss |")
    print("|---|---|---|---|---|---|")
    print(f"| app, stream to done (no typing) | {total * 1000:.0f} ms | engine alone {engine * 1000:.0f} ms | "
          f"{total / engine:.1f}× | — | — |")
    longest = max(decodes) * 1000
    print(f"| longest single forming decode ({len(decodes):,}) | {longest:.2f} ms | — | — | ≤ 4 ms | "
          f"{verdict(longest <= 4)} |")
    for mode, words, bound in (("quiet", "machine as it is", 33.0), ("busy", "other core busy", 50.0)):
        for stat in ("median", "p95"):
            ref = med("idle", stat)
            value = med(mode, stat)
            target, passed = (f"< {bound:.0f} ms", verdict(value < bound)) if stat == "p95" else ("—", "—")
            print(f"| key → screen, {words}, {stat} ({presses[mode]} presses) | {value:.1f} ms | "
                  f"no stream {ref:.1f} ms | {value / ref:.1f}× | {target} | {passed} |")
    print(f"| forming decode total, 100 KB → 1 MB | {small * 1000:.1f} → {big * 1000:.1f} ms | — | "
          f"{big / small:.1f}× | ≤ 12× | {verdict(big / small <= 12)} |")
    ended = sorted({s for run in states for s in run})
    print(f"| call states at the end | {ended} | — | — | ran | {verdict(ended == ['ran'])} |")

    ours = best_curve(ProseBlock, opts.paragraphs, opts.runs)
    theirs = best_curve(OldProse, min(opts.paragraphs, opts.reference_paragraphs), opts.runs)
    print()
    print(f"Flush cost per paragraph as one reply grows: CPU ms, each paragraph's best of {opts.runs} replies, "
          "median of the 10 paragraphs up to each point (one paragraph ≈ 550 characters; layout and paint "
          "included)")
    print()
    print("| paragraphs | prose widget | reference: Markdown.append + :last-child | ratio |")
    print("|---|---|---|---|")
    for at in (10, 50, 100, 200, 300, 400, 500):
        if at > opts.paragraphs:
            break
        mine = window(ours, at) * 1000
        ref = window(theirs, at) * 1000 if at <= len(theirs) else float("nan")
        ref_text = f"{ref:.1f} ms" if ref == ref else "— (not run that far)"
        ratio = f"{ref / mine:.1f}× cheaper" if ref == ref else "—"
        print(f"| {at} | {mine:.1f} ms | {ref_text} | {ratio} |")
    flat = window(ours, len(ours)) / window(ours, 50)
    print(f"\nprose widget, cost at {len(ours)} paragraphs / cost at 50: {flat:.2f}× "
          f"(target: flat, ≤ 1.5×): {verdict(flat <= 1.5)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
