"""How long callstream takes to start, against the interpreter measured in the same run.

    make bench-startup
    python benchmarks/bench_startup.py --runs 5

Measured, each as the median of ``--runs`` fresh processes (wall time):

- ``callstream --help`` (target: no slower than ~100 ms, what it took before);
- ``callstream transcripts`` on a store holding one conversation (target ≤ 150 ms);
- the TUI's first frame: ``callstream`` (the demo model, as ``make run``
  starts it) in a pseudo-terminal, from the exec to the first screen that
  shows the welcome text (target ≤ 400 ms);

and the references: ``python -c pass`` (the interpreter's own start),
``python -c "import textual.app"`` (the toolkit's import) and the first frame
of a bare Textual ``App`` showing one ``Static`` with the same marker, started
the same way (the floor for the first frame: nothing of ours is in it). The
load average is printed with the table: on a shared machine read the ratios
to the references, which are measured in the same run. Peers (llm, elia, oterm) are measured the same way when their
virtualenvs exist under ``.venv-peers/`` (``.venv-peers/<name>/bin/<name>``; ``make peers-startup`` makes them).
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
PYTHON = str(BIN / "python") if (BIN / "python").exists() else sys.executable
CALLSTREAM = str(BIN / "callstream") if (BIN / "callstream").exists() else None


def _env(home: Path) -> dict[str, str]:
    (home / "none.toml").touch()  # an empty config: the defaults (the demo model)
    return {**os.environ, "CALLSTREAM_HOME": str(home), "CALLSTREAM_CONFIG": str(home / "none.toml")}


def timed_run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def first_frame(argv: list[str], env: dict[str, str], marker: bytes, timeout: float = 20.0) -> float:
    """Seconds from the fork to the first output that holds ``marker``, in a 120×40 pseudo-terminal."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI, as a person starts it
        os.environ.clear()
        os.environ.update({**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
        os.execv(argv[0], argv)
    seen = b""
    try:
        import fcntl
        import struct
        import termios

        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            seen += data
            if marker in seen.replace(b"\x1b", b""):
                return time.perf_counter() - start
            seen = seen[-4096:]
        raise SystemExit(f"no frame with {marker!r} within {timeout:g} s")
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)


#: The floor: Textual's own first frame, one Static holding the marker.
BARE_APP = """
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("You are talking to the demo model")

Bare().run()
"""


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def verdict(ms: float, target: str) -> str:
    """pass / miss against a target written "≤ N ms" or "≈ N ms" (≈: within 10 %)."""
    if target == "—":
        return "—"
    bound = float(target.split()[1])
    return "pass" if ms <= (bound * 1.1 if target.startswith("≈") else bound) else "miss"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    opts = parser.parse_args()
    before = os.getloadavg()
    if CALLSTREAM is None:
        raise SystemExit("no .venv/bin/callstream: run make setup first")
    with tempfile.TemporaryDirectory(prefix="callstream-bench-startup-") as tmp:
        home = Path(tmp)
        env = _env(home)
        seed = "from tests.conversations import converse; converse(['Show me order A-1042'])"
        subprocess.run([PYTHON, "-c", seed], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        marker = b"talking to the demo model"
        # (row, how one sample is taken, target); the rounds take turns through the rows, so
        # every row meets the same moments of a machine whose speed drifts (a shared VM)
        measures: list[tuple[str, Callable[[], float], str]] = [
            ("`python -c pass` (reference)", lambda: timed_run([PYTHON, "-c", "pass"], env), "—"),
            ("`python -c 'import textual.app'` (reference)",
             lambda: timed_run([PYTHON, "-c", "import textual.app"], env), "—"),
            ("`callstream --help`", lambda: timed_run([CALLSTREAM, "--help"], env), "≈ 100 ms"),
            ("`callstream transcripts`", lambda: timed_run([CALLSTREAM, "transcripts"], env), "≤ 150 ms"),
            ("first frame of a bare Textual App (reference: the floor)",
             lambda: first_frame([PYTHON, "-c", BARE_APP], env, marker), "—"),
            ("first frame of the TUI (`callstream`, demo model)", lambda: first_frame([CALLSTREAM], env, marker),
             "≤ 400 ms"),
        ]
        peers = 0
        for name in ("llm", "elia", "oterm"):
            exe = ROOT / ".venv-peers" / name / "bin" / name
            if exe.exists():
                peers += 1
                measures.append((f"`{name} --help` (peer)", lambda exe=exe: timed_run([str(exe), "--help"], env),
                                 "—"))
        samples: dict[str, list[float]] = {what: [] for what, _, _ in measures}
        for _ in range(opts.runs):
            for what, sample, _ in measures:
                samples[what].append(sample())
        rows = [(what, median_ms(samples[what]), target) for what, _, target in measures]
        interpreter, bare = rows[0][1], rows[4][1]
    after = os.getloadavg()
    print()
    print(f"Start-up, median of {opts.runs} fresh processes, the rows taking turns (wall time; the machine's "
          "load is in every row, so read the ratios to the references)")
    print(f"load average (1 min) before {before[0]:.2f}, after {after[0]:.2f} on {os.cpu_count()} cores"
          + ("" if max(before[0], after[0]) < 1.5 else " — a loaded machine: the absolute times are inflated"))
    print()
    print("| what | median | × `python -c pass` | × bare App's first frame | target | pass/miss |")
    print("|---|---|---|---|---|---|")
    for what, ms, target in rows:
        print(f"| {what} | {ms:.0f} ms | {ms / interpreter:.1f}× | {ms / bare:.2f}× | {target} | "
              f"{verdict(ms, target)} |")
    if not peers:
        print("\n(llm, elia, oterm: not installed under .venv-peers/ (`make peers-startup`), not measured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
