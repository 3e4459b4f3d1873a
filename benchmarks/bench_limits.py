"""Peak RSS of ``callstream ask`` against a stream that never ends (issue 13's
fourth proof): an SSE line without a newline, and a gzip bomb.

    make bench-limits

A server process on 127.0.0.1 generates the hostile stream as it sends it
(it never holds it), until the client hangs up:

- ``endless``: ``data: xxxx…`` with no newline, ever;
- ``bomb``: ``Content-Encoding: gzip`` over text-delta frames, about 1000:1,
  so a few hundred KB on the wire become hundreds of MB decompressed (the
  text they carry stops at ``content_bytes``; framing alone, at ``body_bytes``).

``callstream ask`` runs in a fresh process for each (tools, transcript and
recording as a user would have them) and its peak RSS is read with
``wait4``. The reference, measured in the same run, is the same ask against
a short ordinary reply. Each row also runs with a tighter limit, to show the
bound follows the limit. Printed: peak RSS, its ratio to the reference, what
the stream cost above the reference against the limit that stopped it, the
bytes that reached the client and the wall time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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


def run_ask(url: str, mode: str, work: Path, limits: str = "") -> dict[str, float]:
    home = work / f"home-{mode}-{len(list(work.iterdir()))}"
    home.mkdir()
    config = home / "config.toml"
    config.write_text(f'[providers.hostile]\nprovider = "openai-chat"\nmodel = "m"\nbase_url = "{url}/{mode}/v1"\n'
                      'retries = 0\nread_timeout = 30\n' + (f"\n[limits]\n{limits}\n" if limits else ""))
    env = {**os.environ, "CALLSTREAM_HOME": str(home / "data"), "CALLSTREAM_CONFIG": str(config)}
    start = time.perf_counter()
    ask = subprocess.Popen([sys.executable, "-m", "app", "ask", "hello", "--provider", "hostile", "--no-tools"],
                           env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(ask.pid, 0)
    wall = time.perf_counter() - start
    err = ask.stderr.read().decode() if ask.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if mode == "normal" and code != 0 or mode != "normal" and ("stopped" not in err or "Traceback" in err):
        raise SystemExit(f"ask on {mode} ended unexpectedly ({code}): {err[-2000:]}")
    recording = sum(p.stat().st_size for p in (home / "data").rglob("recordings/*"))
    return {"rss": usage.ru_maxrss * 1024, "wall": wall, "recording": recording, "message": err.strip()}


def main() -> int:
    argparse.ArgumentParser(description=__doc__).parse_args()
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    mib = 1 << 20
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory(prefix="callstream-bench-limits-") as tmp:
            work = Path(tmp)
            reference = run_ask(url, "normal", work)
            rows = [
                ("endless line", "event_bytes", 32 * mib, run_ask(url, "endless", work)),
                ("endless line", "event_bytes", 4 * mib, run_ask(url, "endless", work, f"event_bytes = {4 * mib}")),
                # the default 32 MiB takes minutes here: the transcript rewrites the growing prose twice a
                # second, so the time (not the memory) grows faster than the prose; two smaller limits give the slope
                ("gzip bomb", "content_bytes", 8 * mib, run_ask(url, "bomb", work, f"content_bytes = {8 * mib}")),
                ("gzip bomb", "content_bytes", 4 * mib, run_ask(url, "bomb", work, f"content_bytes = {4 * mib}")),
            ]
    finally:
        server.communicate("")
    print()
    print(f"`callstream ask` against streams that never end; reference: the same ask on a short reply, "
          f"peak RSS {reference['rss'] / mib:.0f} MiB, {reference['wall']:.2f} s")
    print()
    print("| stream | limit that stopped it | peak RSS | × reference | above reference ÷ limit | recording | wall |")
    print("|---|---|---|---|---|---|---|")
    for name, key, limit, row in rows:
        above = (row["rss"] - reference["rss"]) / limit
        print(f"| {name} | {key} = {limit // mib} MiB | {row['rss'] / mib:.0f} MiB | "
              f"{row['rss'] / reference['rss']:.2f}× | {above:.2f} | {row['recording'] / mib:.1f} MiB | "
              f"{row['wall']:.1f} s |")
    print()
    print("stated as:", rows[0][3]["message"].splitlines()[-1][:160])
    print("stated as:", rows[2][3]["message"].splitlines()[-1][:160])
    slope = (rows[2][3]["rss"] - rows[3][3]["rss"]) / (rows[2][2] - rows[3][2])
    print(f"gzip bomb: {slope:.1f} bytes of peak RSS per byte of content_bytes; at the default 32 MiB that is about "
          f"{(rows[3][3]['rss'] + slope * (32 * mib - rows[3][2])) / mib:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
