"""What a long conversation costs: reopening it, scrolling it, and typing on in one.

    make bench-long                          # 10, 100, 1,000 and 10,000 exchanges
    make bench-long BENCH_ARGS=--quick       # 10 and 100, a 50-exchange live session: minutes

Reopened (one row per size, measured in one run): a transcript is generated
(each exchange: a user message, a reply with two ``search`` calls that ran, a
Markdown reply with a list and a code block) as a Claude Code session file,
read in by the real ``callstream import``, then ``callstream open ID`` runs
in a 120×40 pseudo-terminal. Measured: the time from the exec to the first
output that draws the last message (its closing sentence), the time until
the app stops drawing (output quiet for half a second, the blinking cursor aside: the whole screen
drawn), the process's peak RSS (``VmHWM``), and key → screen p95 for PageUp,
End and Home (rounds of PageUp ×3, End, Home, End; a key's screen is the
first output after it that draws what the key must show: a screenful for
PageUp, the last message for End, the first for Home; a key with no answer
within ``--key-timeout`` counts as the timeout and is marked ``>``). Twenty
rounds by default (60 PageUps, 40 Ends, 20 Homes per size: a p95 of 20
samples or fewer is their worst, so one stray pause of a noisy machine would
be the figure); the worst of each key is printed below the table. Each key
is pressed once the last one's screen is drawn, at a random moment of the
cursor's blink (``BLINK``).

The conversations are opened under the demo model's own name, which no
price table knows: the price table is never loaded. The smallest size is
opened once more under a model the table prices (``PRICED``, unless
``--no-priced``): its meter asks the table for the window, so the process
loads it after the first screen, as under a hosted provider's profile; its
first screen and peak RSS are printed below the table. Before the first
open, the source tree is compiled to bytecode, as pip compiles Elia's.

No terminal emulator is pinned, so the screen is read from the raw bytes:
escape sequences stripped, the text searched. Each message carries a marker
no other message holds (``Question 7:``, ``Done with exchange 7.``).

Live (a fresh process, so the reopened runs lend it nothing): the demo model
at full speed (``speed = 0``) in a headless app, as ``bench_tui.py`` drives
it, through ``--live`` exchanges. At 10, 100 and 500 exchanges: Enter →
ready (median of the last ten exchanges), key → screen p95 while typing
``LIVE_KEYS`` keys at 10 keys a second, and the process's RSS. Three sittings
(``--live-runs``), each in its own process; each figure is the median of the
sittings' figures, and each sitting's Enter → ready is printed below the
table. One sitting's median of ten swings by a frame: an exchange whose
request's answer comes while a frame is drawn waits for that frame (15–20
ms at 120×40), and the same code gave 60 and 78 ms at 10 exchanges in two
sittings.

Peer: Elia (``make peers-startup``; skipped where ``.venv-peers/elia`` does
not exist) reads the same exchanges (its ChatGPT-export import; it has no
tool calls, so the searches are not in it) and opens the conversation from
its home screen (Tab to its chat list, Enter on the chat) in the same
pseudo-terminal: its start to the home screen plus Enter to the last
message, and peak RSS.

Each column's growth exponent is printed: the slope of log(value) against
log(exchanges) between the smallest and the largest size measured (0: flat,
1: linear). The 10-exchange row is the reference of the others (ratios).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import math
import os
import pty
import random
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
PYTHON = str(BIN / "python") if (BIN / "python").exists() else sys.executable
CALLSTREAM = str(BIN / "callstream")
ELIA = ROOT / ".venv-peers" / "elia" / "bin" / "elia"

ROWS, COLS = 40, 120
KEYS = {"pageup": b"\x1b[5~", "end": b"\x1b[F", "home": b"\x1b[H", "enter": b"\r"}
#: CSI and OSC sequences, and the two-byte escapes: what is left is the text drawn.
ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x1b[()][0-9A-Za-z]")


# -- the transcript ----------------------------------------------------------------------


def user_text(i: int) -> str:
    return f"Question {i}: what did the searches find about parcel A-{1000 + i}?"


def last_sentence(i: int) -> str:
    return f"Done with exchange {i}."


def reply_text(i: int) -> str:
    return (f"The searches found three things about parcel A-{1000 + i}:\n\n"
            f"- it left the hub on Tuesday\n- the carrier has no scan since\n- a trace takes **two days**\n\n"
            f"```python\ntrace = carrier.trace('A-{1000 + i}')\nprint(trace.status)\n```\n\n"
            f"{last_sentence(i)}")


def claude_code_session(n: int, path: Path) -> None:
    """A Claude Code session of ``n`` exchanges."""
    session = f"bench-long-{n}"
    parent: str | None = None
    with path.open("w") as out:
        def line(kind: str, uuid: str, message: dict[str, Any]) -> None:
            nonlocal parent
            out.write(json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": session,
                                  "timestamp": "2026-01-01T00:00:00Z", "message": message}) + "\n")
            parent = uuid

        for i in range(1, n + 1):
            line("user", f"u{i}", {"role": "user", "content": user_text(i)})
            calls: list[dict[str, Any]] = [{"type": "tool_use", "id": f"t{i}{x}", "name": "search",
                      "input": {"query": f"parcel A-{1000 + i} {what}"}}
                     for x, what in (("a", "scans"), ("b", "trace"))]
            line("assistant", f"a{i}", {"id": f"m{i}a", "model": "bench-model", "role": "assistant",
                                        "content": [{"type": "text", "text": "Let me search for it."}, *calls]})
            results = [{"type": "tool_result", "tool_use_id": c["id"], "content": f"3 hits for {c['input']['query']}"}
                       for c in calls]
            line("user", f"r{i}", {"role": "user", "content": results})
            line("assistant", f"b{i}", {"id": f"m{i}b", "model": "bench-model", "role": "assistant",
                                        "content": [{"type": "text", "text": reply_text(i)}]})


def chatgpt_export(n: int, path: Path) -> None:
    """The same exchanges as a ChatGPT export (``elia import``'s format): the
    user messages and the Markdown replies (Elia shows no tool calls)."""
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    parent = "root"
    for i in range(1, n + 1):
        for role, key, text in (("user", f"u{i}", user_text(i)),
                                ("assistant", f"b{i}", "Let me search for it.\n\n" + reply_text(i))):
            mapping[key] = {"id": key, "parent": parent, "children": [],
                            "message": {"id": key, "author": {"role": role}, "create_time": 1.7e9 + i,
                                        "content": {"content_type": "text", "parts": [text]}}}
            mapping[parent]["children"].append(key)
            parent = key
    path.write_text(json.dumps([{"title": f"bench long {n}", "create_time": 1.7e9, "update_time": 1.7e9 + n,
                                 "mapping": mapping, "id": f"bench-long-{n}"}]))


# -- a program in a pseudo-terminal ------------------------------------------------------------


class Terminal:
    """A program in a 120×40 pseudo-terminal, its output read by a thread
    (timestamped) so nothing it writes is held up by the reader."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.start = time.perf_counter()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ.clear()
            os.environ.update({**env, "TERM": "xterm-256color", "COLUMNS": str(COLS), "LINES": str(ROWS)})
            os.execv(argv[0], argv)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.chunks: list[tuple[float, bytes]] = []
        #: When the last chunk that drew something came (``_drawn``), and the last two chunks' text.
        self.drawn_at = self.start
        self._recent: list[bytes] = []
        self.lock = threading.Condition()
        self.done = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if not ready:
                if self.done:
                    return
                continue
            try:
                data = os.read(self.fd, 1 << 16)
            except OSError:
                data = b""
            with self.lock:
                if not data:
                    self.done = True
                    self.lock.notify_all()
                    return
                stamp = time.perf_counter()
                self.chunks.append((stamp, data))
                self._drawn(stamp, data)
                self.lock.notify_all()

    def wait_for(self, since: int, seen: Callable[[bytes], bool], timeout: float) -> float | None:
        """Seconds (from the perf_counter clock) at which the text drawn after
        chunk ``since`` first satisfies ``seen``; None after ``timeout``."""
        deadline = time.perf_counter() + timeout
        text = b""
        at = since
        with self.lock:
            while True:
                while at < len(self.chunks):
                    stamp, data = self.chunks[at]
                    at += 1
                    text += ESCAPES.sub(b"", data)
                    if seen(text):
                        return stamp
                left = deadline - time.perf_counter()
                if left <= 0 or self.done:
                    return None
                self.lock.wait(min(left, 0.1))

    def quiet(self, for_seconds: float, limit: float) -> float:
        """When the program stopped drawing: the last drawing chunk before ``for_seconds`` of silence
        (or ``limit``). See ``_drawn`` for what draws."""
        end = time.perf_counter() + limit
        while time.perf_counter() < end:
            with self.lock:
                last = self.drawn_at
            if time.perf_counter() - last >= for_seconds:
                return last
            time.sleep(0.05)
        return time.perf_counter()

    def _drawn(self, stamp: float, data: bytes) -> None:
        """The input box's blinking cursor (a redraw every half second, the same row each time) is not
        drawing: a chunk whose text is one of the two before it does not move ``drawn_at``."""
        text = ESCAPES.sub(b"", data)
        if text not in self._recent:
            self.drawn_at = stamp
        self._recent = [*self._recent[-1:], text]

    def mark(self) -> int:
        with self.lock:
            return len(self.chunks)

    def press(self, key: bytes) -> tuple[float, int]:
        at = self.mark()
        t0 = time.perf_counter()
        os.write(self.fd, key)
        return t0, at

    def peak_rss(self) -> int | None:
        """VmHWM of the program; None once it has exited (a zombie has no memory line)."""
        with open(f"/proc/{self.pid}/status") as status:
            found = [line.split()[1] for line in status if line.startswith("VmHWM:")]
        return int(found[0]) * 1024 if found else None

    def close(self) -> None:
        with self.lock:
            self.done = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self.reader.join(timeout=2)
        os.close(self.fd)



def marker(text: str) -> Callable[[bytes], bool]:
    needle = text.encode()
    return lambda drawn: needle in drawn


def screenful(drawn: bytes) -> bool:
    """A scroll redraws the conversation's rows: more text than a cursor blink or a status tick."""
    return len(drawn.strip()) >= 400


#: The input box's cursor blinks twice a second, and the frame after one comes 17–33 ms later
#: (Textual's update timer, after a pause, sets its next tick one to two frames ahead), so a key
#: pressed just after a blink waits for that frame. Keys pressed at a fixed time after the last
#: screen fell into step with the blink, and the same unlucky moment was measured again and again
#: (a third of the keys of some runs); a person's keys come at any moment of the blink, so each key
#: waits a random part of a blink more (seeded: the same moments every run).
BLINK = 0.5


def measure_keys(term: Terminal, n: int, first: str, rounds: int, timeout: float) -> dict[str, list[float]]:
    """Rounds of PageUp ×3, End, Home, End: each key's seconds to its screen (the timeout when none came)."""
    times: dict[str, list[float]] = {"pageup": [], "end": [], "home": []}
    last = last_sentence(n)
    moment = random.Random(n)
    for _ in range(rounds):
        for key, seen in (("pageup", screenful), ("pageup", screenful), ("pageup", screenful),
                          ("end", marker(last)), ("home", marker(first)), ("end", marker(last))):
            t0, at = term.press(KEYS[key])
            stamp = term.wait_for(at, seen, timeout)
            times[key].append(timeout if stamp is None else stamp - t0)
            term.quiet(0.15, timeout)  # the key's whole redraw, before the next key
            time.sleep(moment.uniform(0, BLINK))
    return times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * 0.95) - 1)] if ordered else math.nan


#: ``--priced``'s profile: the demo told the name of a model the price table knows, so the meter asks the
#: table for its window (as under a hosted provider's profile) and the table is loaded after the first screen.
PRICED = 'default = "priced"\n[providers.priced]\nprovider = "demo"\nmodel = "gpt-4o"\n'


def open_ours(n: int, work: Path, opts: argparse.Namespace, config: str = "", tag: str = "") -> dict[str, Any]:
    home = work / f"home-{n}{tag}"
    home.mkdir()
    (home / "config.toml").write_text(config)  # empty: the demo model under its own name
    env = {**os.environ, "CALLSTREAM_HOME": str(home), "CALLSTREAM_CONFIG": str(home / "config.toml")}
    session = work / f"session-{n}{tag}.jsonl"
    claude_code_session(n, session)
    t0 = time.perf_counter()
    subprocess.run([CALLSTREAM, "import", str(session)], env=env, check=True, stdout=subprocess.DEVNULL)
    imported = time.perf_counter() - t0
    # the id the importer chose (the only conversation in this home)
    listed = subprocess.run([CALLSTREAM, "transcripts", "--json"], env=env, check=True, capture_output=True, text=True)
    (conv,) = [row["id"] for row in json.loads(listed.stdout)]
    term = Terminal([CALLSTREAM, "open", conv], env)
    try:
        shown = term.wait_for(0, marker(last_sentence(n)), opts.open_timeout)
        first = None if shown is None else shown - term.start
        settled = term.quiet(0.5, opts.open_timeout) - term.start
        keys = measure_keys(term, n, user_text(1).split(":")[0] + ":", opts.rounds, opts.key_timeout) \
            if shown is not None else {"pageup": [], "end": [], "home": []}
        rss = term.peak_rss()
    finally:
        term.close()
    if rss is None:
        raise SystemExit(f"bench-long: `callstream open {conv}` exited before it was measured ({n} exchanges)")
    return {"n": n, "import": imported, "first": first, "settled": settled, "rss": rss, "keys": keys}


def open_elia(n: int, work: Path, opts: argparse.Namespace) -> dict[str, Any]:
    """Elia on the same exchanges: imported (its ChatGPT-export reader), then
    its home screen, Enter on the newest chat, until the last message shows."""
    home = work / f"elia-{n}"
    (home / "config").mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CONFIG_HOME": str(home / "config"), "OPENAI_API_KEY": "bench"}
    export = work / f"chatgpt-{n}.json"
    chatgpt_export(n, export)
    # its database is made by its first start or by ``reset`` (which asks first)
    subprocess.run([str(ELIA), "reset"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   input=b"y\n")
    subprocess.run([str(ELIA), "import", str(export)], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, input=b"")
    term = Terminal([str(ELIA)], env)
    try:
        home_shown = term.wait_for(0, marker(f"bench long {n}"), opts.open_timeout)
        first = None
        if home_shown is not None:
            for _ in range(10):  # the focus from its message box to its chat list, once it takes keys
                term.quiet(0.5, opts.open_timeout)
                _, at = term.press(b"\t")
                if term.wait_for(at, lambda drawn: bool(drawn.strip()), 3.0) is not None:
                    break
            term.quiet(0.5, opts.open_timeout)
            t0, at = term.press(KEYS["enter"])
            shown = term.wait_for(at, marker(last_sentence(n)), opts.open_timeout)
            # its start to its home screen, plus Enter to the last message: the pauses between are ours
            first = None if shown is None else (home_shown - term.start) + (shown - t0)
        term.quiet(0.5, opts.open_timeout)
        rss = term.peak_rss()
    finally:
        term.close()
    if rss is None:
        raise SystemExit(f"bench-long: Elia exited before it was measured ({n} exchanges)")
    return {"n": n, "first": first, "rss": rss}


# -- the live session ---------------------------------------------------------------------------


#: Keys typed at each point of a live sitting. Their p95 is a real percentile only with enough keys: of
#: 20 it was the worst but one, and 3 against 4 ms (one key meeting the cursor's blink) read as 1.4×.
LIVE_KEYS = 60


def rss_now() -> int:
    with open("/proc/self/status") as status:
        return int(next(line.split()[1] for line in status if line.startswith("VmRSS:"))) * 1024


async def live_session(exchanges: int, points: list[int]) -> dict[str, Any]:
    from textual import events

    from app.tui.app import make_app
    from widgets.prompt_input import PromptInput

    app = make_app()
    results: dict[str, Any] = {}
    enter_times: list[float] = []
    async with app.run_test(headless=True, size=(COLS, ROWS)) as pilot:
        prompt = app.screen.query_one(PromptInput)
        while not app.warmed:
            await asyncio.sleep(0.01)
        await pilot.pause()
        for i in range(1, exchanges + 1):
            prompt.text = f"Show me order A-{1000 + i % 40}"
            await pilot.pause()
            started = len(app.session.turns)  # (an exchange runs one turn or more: a call, then the reply)
            t0 = time.perf_counter()
            prompt.post_message(events.Key("enter", None))
            while len(app.session.turns) <= started:
                await asyncio.sleep(0.001)
            while app.session.busy or app.screen.status.state != "ready":  # type: ignore[attr-defined]
                await asyncio.sleep(0.002)
            enter_times.append(time.perf_counter() - t0)
            if i in points:
                await pilot.pause()
                latencies = []
                for _ in range(LIVE_KEYS):  # 10 keys a second, as a person types
                    t1 = time.perf_counter()
                    before = prompt.text
                    prompt.post_message(events.Key("x", "x"))
                    while prompt.text == before:
                        await asyncio.sleep(0.0005)
                    await prompt.wait_for_refresh()
                    latencies.append(time.perf_counter() - t1)
                    await asyncio.sleep(max(0.0, 0.1 - (time.perf_counter() - t1)))
                prompt.text = ""
                results[str(i)] = {"enter": statistics.median(enter_times[-10:]),
                                   "enter_mean": statistics.mean(enter_times[-10:]), "key": p95(latencies),
                                   "rss": rss_now()}
    return results


def live_in_child(exchanges: int, points: list[int], work: Path, run: int = 0) -> dict[str, Any]:
    home = work / f"live-home-{run}"
    home.mkdir()
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    env = {**os.environ, "CALLSTREAM_HOME": str(home), "CALLSTREAM_CONFIG": str(home / "config.toml")}
    out = subprocess.run([PYTHON, __file__, "--live-child", str(exchanges), "--points", ",".join(map(str, points))],
                         env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# -- the table ---------------------------------------------------------------------------


def slope(points: list[tuple[int, float | None]]) -> str:
    """The growth exponent: log-log slope between the smallest and the largest size measured."""
    known = [(n, v) for n, v in points if v is not None and v > 0]
    if len(known) < 2:
        return "—"
    (n0, v0), (n1, v1) = known[0], known[-1]
    return f"{math.log(v1 / v0) / math.log(n1 / n0):.2f}"


def ms(value: float | None, timeout: float | None = None) -> str:
    if value is None:
        return "no answer"
    text = f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"
    return f"> {text}" if timeout is not None and value >= timeout else text


def sec(value: float | None) -> str:
    return "not drawn" if value is None else f"{value:.2f} s"


def mib(value: float) -> str:
    return f"{value / (1 << 20):.0f} MB"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10 and 100 exchanges, a 50-exchange live session")
    parser.add_argument("--sizes", default="", help="comma-separated sizes (default 10,100,1000,10000)")
    parser.add_argument("--live", type=int, default=None, help="exchanges of the live session (default 500; 0: none)")
    parser.add_argument("--live-runs", type=int, default=None,
                        help="live sittings, each in its own process; the medians are printed (default 3; quick 1)")
    parser.add_argument("--rounds", type=int, default=None, help="key rounds per size (default 20; quick 2)")
    parser.add_argument("--open-timeout", type=float, default=180.0)
    parser.add_argument("--key-timeout", type=float, default=10.0)
    parser.add_argument("--no-elia", action="store_true")
    parser.add_argument("--no-priced", action="store_true", help="skip the smallest size under a priced model")
    parser.add_argument("--live-child", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--points", default="", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.live_child:
        points = [int(p) for p in opts.points.split(",") if p]
        sys.path.insert(0, str(ROOT))
        print(json.dumps(asyncio.run(live_session(opts.live_child, points))))
        return 0
    sizes = [int(s) for s in opts.sizes.split(",") if s] or ([10, 100] if opts.quick else [10, 100, 1000, 10_000])
    live = opts.live if opts.live is not None else (50 if opts.quick else 500)
    runs = max(1, opts.live_runs if opts.live_runs is not None else (1 if opts.quick else 3))
    points = sorted({p for p in (10, 100, 500) if p <= live} | {live})
    opts.rounds = opts.rounds or (2 if opts.quick else 20)
    if not Path(CALLSTREAM).exists():
        raise SystemExit("no .venv/bin/callstream: run make setup first")
    # our source tree's bytecode, as Elia's install has its own (pip compiles what it installs; our
    # editable install leaves app/ and widgets/ to the first run, which writes none where
    # PYTHONDONTWRITEBYTECODE is set): every run then measures a start as a person's second one is
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(ROOT / "app"), str(ROOT / "widgets")], check=True)
    before = os.getloadavg()
    ours: list[dict[str, Any]] = []
    elia: list[dict[str, Any]] = []
    use_elia = ELIA.exists() and not opts.no_elia
    with tempfile.TemporaryDirectory(prefix="callstream-bench-long-") as tmp:
        work = Path(tmp)
        for n in sizes:
            ours.append(open_ours(n, work, opts))
            print(f"  open {n}: {ours[-1]['first']}", file=sys.stderr, flush=True)
            if use_elia:
                elia.append(open_elia(n, work, opts))
                print(f"  elia {n}: {elia[-1]['first']}", file=sys.stderr, flush=True)
        priced = None if opts.no_priced else open_ours(sizes[0], work, opts, PRICED, "-priced")
        sittings = [live_in_child(live, points, work, run) for run in range(runs)] if live else []
        lived = {str(p): {key: statistics.median(sitting[str(p)][key] for sitting in sittings)
                          for key in ("enter", "enter_mean", "key", "rss")} for p in points}
    after = os.getloadavg()
    print()
    print(f"Long conversations: reopened in a {COLS}×{ROWS} pseudo-terminal, and typed on live with the demo model "
          f"at full speed. Load average (1 min) before {before[0]:.2f}, after {after[0]:.2f} on {os.cpu_count()} "
          "cores" + ("" if max(before[0], after[0]) < 1.5 else " — a loaded machine: read the ratios"))
    if 10_000 not in sizes:
        print("10,000 exchanges not run (--sizes without it)")
    print()
    print("`callstream open ID` (× the smallest size's value in brackets)")
    print()
    print("| exchanges | import | first screen with the last message | screen drawn (quiet 0.5 s) | peak RSS | "
          "PageUp p95 | End p95 | Home p95 |")
    print("|---|---|---|---|---|---|---|---|")
    ref = ours[0]
    for row in ours:
        ratio = ("" if row is ref or row["first"] is None or not ref["first"]
                 else f" ({row['first'] / ref['first']:.1f}×)")
        keys = row["keys"]
        print(f"| {row['n']:,} | {row['import']:.2f} s | {sec(row['first'])}{ratio} | {sec(row['settled'])} | "
              f"{mib(row['rss'])} ({row['rss'] / ref['rss']:.1f}×) | "
              + " | ".join(ms(p95(keys[k]) if keys[k] else None, opts.key_timeout) for k in ("pageup", "end", "home"))
              + " |")
    print(f"| growth exponent | {slope([(r['n'], r['import']) for r in ours])} | "
          f"{slope([(r['n'], r['first']) for r in ours])} | {slope([(r['n'], r['settled']) for r in ours])} | "
          f"{slope([(r['n'], r['rss']) for r in ours])} | "
          + " | ".join(slope([(r["n"], p95(r["keys"][k]) if r["keys"][k] else None) for r in ours])
                       for k in ("pageup", "end", "home")) + " |")
    if priced is not None:
        print()
        print(f"Under a model the price table knows (the demo told `gpt-4o`: its meter asks the table for the "
              f"window, which is loaded after the first screen), {priced['n']:,} exchanges: first screen "
              f"{sec(priced['first'])}, peak RSS {mib(priced['rss'])} ({priced['rss'] / ref['rss']:.2f}× the "
              "demo's own name" + (f", {priced['rss'] / elia[0]['rss']:.2f}× Elia's" if elia else "") + ")")
    print()
    print(f"Worst key → screen of {opts.rounds} rounds (PageUp, End, Home): "
          + "; ".join(f"{r['n']:,}: " + ", ".join(ms(max(r["keys"][k]) if r["keys"][k] else None, opts.key_timeout)
                                                  for k in ("pageup", "end", "home")) for r in ours))
    if elia:
        print()
        print("Peer: Elia (Enter on its home screen's newest chat; its messages only, no tool calls)")
        print()
        print("| exchanges | Elia: last message shown | Elia peak RSS | ours ÷ Elia, time | ours ÷ Elia, RSS |")
        print("|---|---|---|---|---|")
        for mine, theirs in zip(ours, elia, strict=True):
            t = f"{mine['first'] / theirs['first']:.2f}×" if mine["first"] and theirs["first"] else "—"
            print(f"| {theirs['n']:,} | {sec(theirs['first'])} | {mib(theirs['rss'])} | {t} | "
                  f"{mine['rss'] / theirs['rss']:.2f}× |")
        print(f"| growth exponent | {slope([(r['n'], r['first']) for r in elia])} | "
              f"{slope([(r['n'], r['rss']) for r in elia])} | — | — |")
    else:
        print("\n(Elia: not installed under .venv-peers/elia (`make peers-startup`), not measured)")
    if not live:
        print("\n(Live session: not run, --live 0)")
        return 0
    print()
    print(f"Live session: the demo model at full speed, {live} exchanges in one sitting (headless app, in its own "
          f"process); the median of {runs} sitting{'s' if runs != 1 else ''}")
    print()
    print("| exchanges so far | Enter → ready (median of the last 10) | mean of the last 10 (re-shows included) | "
          f"key → screen p95 ({LIVE_KEYS} keys at 10/s) | RSS |")
    print("|---|---|---|---|---|")
    first_point = lived[str(points[0])]
    for p in points:
        row = lived[str(p)]
        print(f"| {p} | {ms(row['enter'])} ({row['enter'] / first_point['enter']:.1f}×) | "
              f"{ms(row['enter_mean'])} ({row['enter_mean'] / first_point['enter_mean']:.1f}×) | "
              f"{row['key'] * 1000:.1f} ms ({row['key'] / first_point['key']:.1f}×) | "
              f"{mib(row['rss'])} ({row['rss'] / first_point['rss']:.2f}×) |")
    print(f"| growth exponent | {slope([(p, lived[str(p)]['enter']) for p in points])} | "
          f"{slope([(p, lived[str(p)]['enter_mean']) for p in points])} | "
          f"{slope([(p, lived[str(p)]['key']) for p in points])} | "
          f"{slope([(p, lived[str(p)]['rss']) for p in points])} |")
    if runs > 1:
        print()
        print("Each sitting's Enter → ready (median of the last 10) at " + " / ".join(map(str, points)) + ": "
              + "; ".join(f"{n}: " + " / ".join(ms(sitting[str(p)]["enter"]) for p in points)
                          for n, sitting in enumerate(sittings, start=1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
