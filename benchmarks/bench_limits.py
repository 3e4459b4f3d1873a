"""Peak RSS of ``callstream ask`` against a stream that never ends (issue 13's
fourth proof), at the default limits: an SSE line without a newline, and a
gzip bomb; and the time a long ordinary reply takes, to show the transcript
writes it in time linear in its size.

    make bench-limits          # --quick: the tighter limits and an 8 MiB reply only

A server process on 127.0.0.1 generates each stream as it sends it (it
never holds it), until the client hangs up:

- ``endless``: ``data: xxxx…`` with no newline, ever (stops at ``event_bytes``);
- ``bomb``: ``Content-Encoding: gzip`` over text-delta frames, about 1000:1,
  so a few hundred KB on the wire would be gigabytes decompressed (the text
  stops at ``content_bytes``; the body is decompressed 64 KiB at a time);
- ``proseN``: N bytes of ordinary prose in 1 KB deltas, then a normal end.

``callstream ask`` runs in a fresh process for each (tools, transcript and
recording as a user would have them); its peak RSS is its own ``VmHWM``,
read as it exits (``ru_maxrss`` would carry the peak of whatever started
it across ``execve``), and the bytes it wrote are its ``wchar``. The
reference, measured in the same run, is the same ask against a short
ordinary reply. Each hostile row also runs at a tighter limit, to show the
bound follows the limit.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.stream.limits import Limits, size_words  # noqa: E402

SERVER = r"""
import asyncio, sys, zlib

FRAME = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"a" * 1000 + b'"}}]}\n\n'
NORMAL = (b'data: {"choices":[{"index":0,"delta":{"content":"Hello."}}]}\n\n'
          b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


async def handle(reader, writer):
    sent = 0
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next((int(l.split(":", 1)[1]) for l in lines if l.lower().startswith("content-length:")), 0)
        await reader.readexactly(length)
        mode = lines[0].split()[1].strip("/").split("/")[0]
        extra = "Content-Encoding: gzip\r\n" if mode == "bomb" else ""
        writer.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                      f"{extra}Connection: close\r\n\r\n").encode())

        def chunk(data):
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))

        if mode == "normal":
            chunk(NORMAL)
        elif mode.startswith("prose"):
            # ordinary prose (words and spaces), then a normal end: a long reply, not a hostile one
            total = int(mode[len("prose"):])
            words = b"the quick brown fox jumps over a lazy dog and " * 20
            frame = b'data: {"choices":[{"index":0,"delta":{"content":"' + words + b'"}}]}\n\n'
            block = frame * 64
            while sent + len(words) * 64 <= total:
                chunk(block)
                sent += len(words) * 64
                await writer.drain()
            while sent < total:
                part = words[: total - sent]
                chunk(b'data: {"choices":[{"index":0,"delta":{"content":"' + part + b'"}}]}\n\n')
                sent += len(part)
            chunk(NORMAL.split(b"\n\n", 1)[1])
        elif mode == "endless":
            chunk(b"data: ")
            piece = b"x" * 65536
            while sent < 4 << 30:
                chunk(piece)
                sent += len(piece)
                await writer.drain()
        elif mode == "bomb":
            packer = zlib.compressobj(9, zlib.DEFLATED, 31)
            block = FRAME * 1024
            while sent < 4 << 30:
                data = packer.compress(block) + packer.flush(zlib.Z_SYNC_FLUSH)
                chunk(data)
                sent += len(block)
                await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()

asyncio.run(main())
"""


#: ``python -m app`` that writes its own peak RSS (``VmHWM``, this address space's alone:
#: ``ru_maxrss`` carries across ``execve`` from whatever started it) and the bytes it wrote
#: (``wchar``) to $BENCH_HWM as it exits.
RUNNER = r"""
import atexit, os, runpy, sys

def peak():
    with open("/proc/self/status") as status, open("/proc/self/io") as io, open(os.environ["BENCH_HWM"], "w") as out:
        hwm = next(line for line in status if line.startswith("VmHWM:")).split()[1]
        wchar = next(line for line in io if line.startswith("wchar:")).split()[1]
        out.write(f"{hwm} {wchar}")

atexit.register(peak)
sys.argv = ["callstream", *sys.argv[1:]]
runpy.run_module("app", run_name="__main__")
"""


def run_ask(url: str, mode: str, work: Path, limits: str = "") -> dict[str, Any]:
    home = work / f"home-{mode}-{len(list(work.iterdir()))}"
    home.mkdir()
    config = home / "config.toml"
    config.write_text(f'[providers.hostile]\nprovider = "openai-chat"\nmodel = "m"\nbase_url = "{url}/{mode}/v1"\n'
                      'retries = 0\nread_timeout = 120\n' + (f"\n[limits]\n{limits}\n" if limits else ""))
    hwm = home / "hwm"
    env = {**os.environ, "CALLSTREAM_HOME": str(home / "data"), "CALLSTREAM_CONFIG": str(config),
           "BENCH_HWM": str(hwm)}
    start = time.perf_counter()
    ask = subprocess.run([sys.executable, "-c", RUNNER, "ask", "hello", "--provider", "hostile", "--no-tools"],
                         env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    err = ask.stderr.decode()
    hostile = not mode.startswith(("normal", "prose"))
    if not hostile and ask.returncode != 0 or hostile and ("stopped" not in err or "Traceback" in err):
        raise SystemExit(f"ask on {mode} ended unexpectedly ({ask.returncode}): {err[-2000:]}")
    recording = sum(p.stat().st_size for p in (home / "data").rglob("recordings/*"))
    store = sum(p.stat().st_size for p in (home / "data").glob("*.db*"))
    peak_kib, wrote = hwm.read_text().split()
    return {"rss": int(peak_kib) * 1024, "wrote": int(wrote), "wall": wall, "recording": recording, "store": store,
            "message": err.strip()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="skip the rows at the default limits")
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    mib = 1 << 20
    defaults = Limits()
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory(prefix="callstream-bench-limits-") as tmp:
            work = Path(tmp)
            reference = run_ask(url, "normal", work)
            rows: list[tuple[str, str, int, dict[str, Any]]] = []
            if not args.quick:
                rows.append(("endless line", "event_bytes", defaults.event_bytes, run_ask(url, "endless", work)))
            rows.append(("endless line", "event_bytes", 4 * mib, run_ask(url, "endless", work,
                                                                       f"event_bytes = {4 * mib}")))
            if not args.quick:
                rows.append(("gzip bomb", "content_bytes", defaults.content_bytes, run_ask(url, "bomb", work)))
            rows.append(("gzip bomb", "content_bytes", 4 * mib, run_ask(url, "bomb", work,
                                                                      f"content_bytes = {4 * mib}")))
            small = run_ask(url, f"prose{mib}", work)
            big_size = 8 * mib if args.quick else defaults.content_bytes
            big = run_ask(url, f"prose{big_size}", work)
    finally:
        server.communicate("")
    print()
    print(f"`callstream ask` against streams that never end, at the default limits and at a tighter one; "
          f"reference: the same ask on a short reply, peak RSS {reference['rss'] / mib:.0f} MiB, "
          f"{reference['wall']:.2f} s")
    print()
    print("| stream | limit that stopped it | peak RSS | × reference | above reference ÷ limit | recording | wall |")
    print("|---|---|---|---|---|---|---|")
    for name, key, limit, row in rows:
        above = (row["rss"] - reference["rss"]) / limit
        print(f"| {name} | {key} = {size_words(limit)} | {row['rss'] / mib:.0f} MiB | "
              f"{row['rss'] / reference['rss']:.2f}× | {above:.2f} | {row['recording'] / mib:.1f} MiB | "
              f"{row['wall']:.1f} s |")
    print()
    for name, _, _, row in rows[:: 2 if not args.quick else 1]:
        print(f"{name} stated as:", row["message"].splitlines()[-1][:200])
    print()
    print("A long ordinary reply (prose in 1 KB deltas, then a normal end), stored as it streams:")
    print()
    print("| reply | wall | wall above reference | written (wchar) | written ÷ reply | peak RSS | transcript |")
    print("|---|---|---|---|---|---|---|")
    for size, row in ((mib, small), (big_size, big)):
        print(f"| {size_words(size)} | {row['wall']:.2f} s | {row['wall'] - reference['wall']:.2f} s | "
              f"{row['wrote'] / mib:.1f} MiB | {row['wrote'] / size:.2f} | {row['rss'] / mib:.0f} MiB | "
              f"{row['store'] / mib:.1f} MiB |")
    writes = big["wrote"] / small["wrote"]
    print()
    print(f"{size_words(big_size)} against 1 MiB ({big_size // mib}× the text): {writes:.1f}× the bytes written "
          f"(linear is at most {big_size // mib}×); {(big['wall'] - reference['wall']) / (big_size / mib):.3f} s "
          "per MiB above the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
