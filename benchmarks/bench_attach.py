"""What attachments cost: memory in ``callstream ask -a``, and drawing time in the TUI.

    make bench-attach                       # a 20 MB image and a 20 MB PDF; 50 images drawn
    python benchmarks/bench_attach.py --mb 5 --images 20 --runs 1

The demo model runs as its own process (``callstream serve-demo``), so its
reading of the request is not counted; ``callstream ask`` runs in a fresh
process against it over OpenAI chat (whose 50 MB a request takes both files
as they are) with a noise PNG and a PDF, both written by Pillow, attached —
read, probed, stored by hash, base64-encoded into the request and sent. The
reference, measured in the same run, is the same ask with no attachment.

Printed: peak RSS above the reference per attachment byte (target ≤ 3), and
wall time. Peak RSS is the ask process's own ``VmHWM`` as it exits (the
wrapper of ``bench_memory.py``). The request body streams each attachment's
base64 a slice at a time (``stream.attachments.Base64Text``), so it is never
held whole beside the file's bytes.

The TUI half: a stored conversation of 50 messages, each with its own image
(a 640×480 photo-like PNG written by Pillow), reopened headless with every
page of it mounted (the window's page limits raised for the measure, so all 50
are drawn); the time until the screen is quiet, with
the images drawn inline (half-block thumbnails, what a terminal without
graphics and every test shows; and sixel pictures through textual-image),
against the same conversation with chips only (``CALLSTREAM_IMAGES=off``, the
reference). Target: inline ≤ 2× chips only. Each is the median of ``--runs``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_memory import PEAK  # noqa: E402


def make_files(work: Path, size: int) -> list[Path]:
    """A noise PNG and a PDF of about ``size`` bytes each (noise does not compress)."""
    from PIL import Image

    side = int((size / 3) ** 0.5)
    png = work / "photo.png"
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(png, "PNG", compress_level=1)
    pdf_side = int((size / 1.2) ** 0.5)  # Pillow writes RGB into a PDF as JPEG: about 1.2 B a pixel of noise
    out = io.BytesIO()
    Image.frombytes("RGB", (pdf_side, pdf_side), os.urandom(pdf_side * pdf_side * 3)).save(out, "PDF",
                                                                                            quality=95)
    pdf = work / "scan.pdf"
    pdf.write_bytes(out.getvalue())
    return [png, pdf]


def run_ask(url: str, files: list[Path], work: Path, name: str) -> dict[str, float]:
    home = work / f"home-{name}"
    home.mkdir()
    (home / "none.toml").touch()
    env = {**os.environ, "CALLSTREAM_HOME": str(home), "CALLSTREAM_CONFIG": str(home / "none.toml"),
           "OPENAI_API_KEY": "bench"}
    peak = work / f"peak-{name}"
    attach = [arg for path in files for arg in ("-a", str(path))]
    start = time.perf_counter()
    command = [sys.executable, "-c", PEAK, str(peak), "ask", "what are these?", "--provider", "openai-chat",
               "--base-url", f"{url}/v1", "--model", "demo", "--no-tools", *attach]
    ask = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, check=False)
    wall = time.perf_counter() - start
    if ask.returncode != 0:
        raise SystemExit(f"ask failed ({ask.returncode}): {ask.stderr.decode()[-2000:]}")
    return {"rss": int(peak.read_text()) * 1024, "wall": wall, "out": len(ask.stdout)}


def photo(n: int) -> bytes:
    """A 640×480 photo-like PNG (a gradient with noise), different for each ``n``."""
    from PIL import Image

    gradient = Image.linear_gradient("L").resize((640, 480)).convert("RGB")
    noise = Image.frombytes("RGB", (640, 480), os.urandom(640 * 480 * 3))
    out = io.BytesIO()
    Image.blend(gradient, noise, 0.2 + (n % 5) / 20).save(out, "PNG", compress_level=1)
    return out.getvalue()


def stored_conversation(work: Path, images: int) -> str:
    """``images`` messages to the demo model, each with its own image, through ``ask -a`` in this process."""
    from app import cli

    conversation = ""
    for n in range(images):
        path = work / f"photo-{n}.png"
        path.write_bytes(photo(n))
        more = ["--conversation", conversation] if conversation else []
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main(["ask", f"photo {n}?", "--no-tools", "--json", "-a", str(path), *more])
        if code != 0:
            raise SystemExit(f"ask failed ({code})")
        conversation = json.loads(out.getvalue())["conversation"]
    return conversation


async def draw_time(conversation: str, mode: str) -> tuple[float, int]:
    """Seconds from opening the stored conversation to a quiet screen scrolled to its top."""
    from app.tui import pictures, window
    from app.tui.app import make_app
    from tests.waiting import quiet

    pictures.set_mode(mode)  # type: ignore[arg-type]
    # the whole conversation mounted at once (the app mounts a few pages of a long one; here every
    # message is drawn, so the measure is of 50 images, not of the window's page size)
    window.FIRST_PAGES = window.MOST_PAGES = 1000
    app = make_app(conversation=conversation)
    app.cursor_blink = False
    start = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        await quiet(pilot)
        elapsed = time.perf_counter() - start
        drawn = len(app.screen.query("AttachmentChips"))
    if drawn < 1:
        raise SystemExit(f"nothing drawn in mode {mode}")
    return elapsed, drawn


def tui_half(work: Path, images: int, runs: int) -> None:
    os.environ["CALLSTREAM_HOME"] = str(work / "tui-home")
    (work / "tui-home").mkdir()
    config = work / "tui-home" / "config.toml"
    config.write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    os.environ["CALLSTREAM_CONFIG"] = str(config)
    conversation = stored_conversation(work, images)
    times: dict[str, list[float]] = {"off": [], "cells": [], "sixel": []}
    mounted: dict[str, int] = {}
    for _ in range(runs):
        for mode in times:  # interleaved, so a busy moment of the machine falls on all three alike
            elapsed, mounted[mode] = asyncio.run(draw_time(conversation, mode))
            times[mode].append(elapsed)
    reference = statistics.median(times["off"])
    print()
    print(f"TUI: reopen a stored conversation of {images} messages, each with its own 640×480 PNG, at 120×40, "
          f"every message mounted, until the screen is quiet (median of {runs}); reference: chips only")
    print()
    print("| images drawn as | messages with chips mounted | time to draw | against chips only | target | met |")
    print("|---|---|---|---|---|---|")
    print(f"| chips only (`CALLSTREAM_IMAGES=off`, reference) | {mounted['off']} | {reference:.2f} s | 1.00× | — | — |")
    for mode, label in (("cells", "inline half-block thumbnails (cells)"), ("sixel", "inline sixel (textual-image)")):
        value = statistics.median(times[mode])
        ratio = value / reference
        print(f"| {label} | {mounted[mode]} | {value:.2f} s | {ratio:.2f}× | ≤ 2× | "
              f"{'pass' if ratio <= 2 else '**miss**'} |")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=20, help="size of each attachment, in MB")
    parser.add_argument("--images", type=int, default=50, help="messages with an image, for the TUI half")
    parser.add_argument("--runs", type=int, default=3, help="runs of each TUI measure (the median is shown)")
    parser.add_argument("--only", choices=["rss", "tui"], help="one half only")
    opts = parser.parse_args()
    if opts.only == "tui":
        with tempfile.TemporaryDirectory(prefix="callstream-bench-attach-tui-") as tmp:
            tui_half(Path(tmp), opts.images, opts.runs)
        return 0
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="callstream-bench-attach-") as tmp:
        work = Path(tmp)
        files = make_files(work, int(opts.mb * 1_000_000))
        sizes = [p.stat().st_size for p in files]
        server = subprocess.Popen([sys.executable, "-m", "app", "serve-demo", "--port", "0", "--speed", "0"],
                                  cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                  env={**os.environ, "CALLSTREAM_HOME": str(work / "server")})
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split("listening on ")[1].strip()
            text_only = run_ask(url, [], work, "text")
            attached = run_ask(url, files, work, "attached")
        finally:
            server.terminate()
            server.wait()
    total = sum(sizes)
    per_byte = (attached["rss"] - text_only["rss"]) / total
    mib = 1 << 20
    print()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} (before: {load_before}); "
          "peak RSS is each ask process's VmHWM")
    print()
    print(f"`callstream ask -a photo.png -a scan.pdf` over OpenAI chat to the demo model (its own process): "
          f"a {sizes[0] / 1e6:.1f} MB PNG and a {sizes[1] / 1e6:.1f} MB PDF; reference: the same ask, text only")
    print()
    print("| measure | text only | with attachments | per attachment byte | target | met |")
    print("|---|---|---|---|---|---|")
    print(f"| peak RSS | {text_only['rss'] / mib:.0f} MiB | {attached['rss'] / mib:.0f} MiB | {per_byte:.2f} B/B | "
          f"≤ 3 B/B | {'pass' if per_byte <= 3 else '**miss**'} |")
    print(f"| wall time of ask | {text_only['wall']:.2f} s | {attached['wall']:.2f} s | — | — | — |")
    if opts.only != "rss":
        with tempfile.TemporaryDirectory(prefix="callstream-bench-attach-tui-") as tmp:
            tui_half(Path(tmp), opts.images, opts.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
