"""A quick before/after look at `callstream open ID` on a long conversation
(issue 31): time until the screen shows the last message, and peak RSS, for a
generated conversation of N exchanges. Not the benchmark (``make bench-long``
is): one run per size, each in a fresh process and a pseudo-terminal.

    .venv/bin/python scripts/measure_open.py 10 100 1000
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one(exchanges: int) -> None:
    """Write the conversation, then run ``callstream open ID`` in a pseudo-terminal until its
    screen shows the last question; its peak RSS (from /proc) once it has settled."""
    import importlib.util
    import pty
    import select
    import signal

    # the program measured: this tree, or another checkout's (MEASURE_ROOT=/path, the same generator)
    root = os.environ.get("MEASURE_ROOT", str(ROOT))
    sys.path.insert(0, root)
    spec = importlib.util.spec_from_file_location("long_transcript", ROOT / "tests" / "long_transcript.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    home = Path(os.environ["CALLSTREAM_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    conversation = generator.write_long(home / "callstream.db", exchanges)
    Path(os.environ["CALLSTREAM_CONFIG"]).write_text('default = "demo"\n[providers.demo]\nprovider = "demo"\n')
    last = f"Question {exchanges - 1}:".encode()
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(TERM="xterm-256color", COLUMNS="120", LINES="40")
        os.execv(sys.executable, [sys.executable, "-m", "app", "open", conversation])
    import fcntl
    import struct
    import termios
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

    def read_until(needle: bytes, limit: float) -> float | None:
        seen = b""
        began = time.perf_counter()
        while time.perf_counter() - began < limit:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return None
                seen = (seen + chunk)[-200_000:]
                if needle in seen:
                    return time.perf_counter()
        return None

    def quiet_for(seconds: float, limit: float) -> None:
        began = last_output = time.perf_counter()
        while time.perf_counter() - began < limit and time.perf_counter() - last_output < seconds:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                os.read(fd, 65536)
                last_output = time.perf_counter()

    shown = read_until(last, 300)
    first = (shown - start) if shown else float("nan")
    if shown:
        quiet_for(2.0, 120)  # settled: the warm-up after the first frame is done too
    rss = 0.0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                rss = int(line.split()[1]) / 1024
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print(f"{exchanges}\t{first:.2f}\t{rss:.0f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        one(int(sys.argv[2]))
        raise SystemExit
    print("exchanges\tfirst screen (s)\tpeak RSS (MB)")
    for n in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, CALLSTREAM_HOME=f"{tmp}/home", CALLSTREAM_CONFIG=f"{tmp}/config.toml")
            subprocess.run([sys.executable, __file__, "--one", n], env=env, check=False)
