"""What attachments cost in memory, in ``callstream ask -a``.

    make bench-attach                       # a 20 MB image and a 20 MB PDF
    python benchmarks/bench_attach.py --mb 5

The demo model runs as its own process (``callstream serve-demo``), so its
reading of the request is not counted; ``callstream ask`` runs in a fresh
process against it over OpenAI chat (whose 50 MB a request takes both files
as they are) with a noise PNG and a PDF, both written by Pillow, attached —
read, probed, stored by hash, base64-encoded into the request and sent. The
reference, measured in the same run, is the same ask with no attachment.

Printed: peak RSS above the reference per attachment byte (target ≤ 3), and
wall time. Peak RSS is the ask process's own ``VmHWM`` as it exits (the
wrapper of ``bench_memory.py``).
"""

from __future__ import annotations

import argparse
import io
import os
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=20, help="size of each attachment, in MB")
    opts = parser.parse_args()
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
