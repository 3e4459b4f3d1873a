"""What a big call costs in memory and on disk, in ``callstream ask``.

    make bench-memory                      # a 10 MB call in 4-character fragments
    python benchmarks/bench_memory.py --mb 1 --fragment 16

A stream with one ``create_ticket`` call whose arguments are N MB (a long
body) is served from 127.0.0.1 by a separate process; ``callstream ask``
runs in a fresh process against it (tools run, transcript and recording
written, as a user would have them). The same is done with a 1 KB call: the
reference, measured in the same run, whose peak RSS is subtracted.

Printed: peak RSS above the reference per argument byte (target ≤ 4), the
transcript database's growth against the arguments (target ≤ 1.2×), the
recording against the raw stream's bytes (target ≤ 1×), and wall time, each
with whether it meets its target, and the machine's load average.

Peak RSS is the ask process's own ``VmHWM``, read as it exits (a small
wrapper runs the command and writes it to a file): ``ru_maxrss`` of a child
survives ``execve`` and can report the parent's peak instead.

Then the path table: every dialect (Anthropic, OpenAI chat, OpenAI
Responses, Gemini) × every kind of tool (the built-in ``create_ticket``; a
command tool from the config, the arguments piped to a program that counts
them; a tool of an MCP server, ``tests/mcp_fixture.py`` over stdio), each
at ``--matrix-mb`` sizes (10 and 1 MB) in 16-character fragments
(``--matrix-fragment``): bytes of peak RSS per argument byte above the same
cell's 1 KB call (target ≤ 4), then each cell's peaks in MiB. ``--quick`` runs the table at 1 MB only;
``--no-matrix`` skips it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import streamgen  # noqa: E402

WORDS = "The parcel left the hub on Tuesday and has not been scanned since; the carrier says a trace takes days. "

#: The stream is made and served by its own process: a parent that held it would
#: lend its resident pages to the ask process's peak (fork, then exec).
SERVER = """
import sys
sys.path.insert(0, {root!r})
from benchmarks.bench_memory import stream_for, closing_reply
from tests.faultserver import FaultServer, Reply
body, args = stream_for({size}, {fragment}, {dialect!r}, {tool!r})
with FaultServer() as server:
    server.replies.append(Reply(body, chunk=16384))
    server.replies.append(Reply(closing_reply({dialect!r})))
    print(server.url, len(body), args, flush=True)
    del body
    sys.stdin.read()
"""


#: The tool each kind calls: the built-in, the command tool and the MCP tool the config below declares.
TOOLS = {"built-in": "create_ticket", "command": "file_ticket", "MCP": "fixture__t0"}
DIALECTS = ("anthropic", "openai-chat", "openai-responses", "gemini")
KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai-chat": "OPENAI_API_KEY", "openai-responses": "OPENAI_API_KEY",
        "gemini": "GEMINI_API_KEY"}

#: The built-in path: a profile that offers the support store's create_ticket to a real provider.
BUILTIN = """
[providers.bench]
provider = "{dialect}"
model = "m"
tools = ["create_ticket"]
"""

#: The command tool counts what it was given; the MCP server's ``t0`` takes any object.
CONFIG = """
[tools.file_ticket]
command = [{python!r}, "-c", "import sys; print(len(sys.stdin.buffer.read()))"]
description = "File a ticket"
read_only = false
parameters = {{ type = "object", properties = {{ body = {{ type = "string" }} }} }}

[mcp.fixture]
command = {python!r}
args = ["-m", "tests.mcp_fixture", "stdio", "--tools", "1"]
env = {{ PYTHONPATH = {root!r} }}
tools = ["t0"]
"""


def stream_for(args_size: int, fragment: int, dialect: str = "anthropic",
               tool: str = "create_ticket") -> tuple[bytes, int]:
    body = (WORDS * (args_size // len(WORDS) + 1))[:args_size]
    args = json.dumps({"order_id": "A-1042", "subject": "Late parcel", "body": body, "priority": "high"})
    script = [("text", "Filing it.")] + streamgen.call_script(0, "t1", tool, args, fragment)
    if dialect == "anthropic":
        return streamgen.anthropic(script), len(args)
    return streamgen.ENCODERS[dialect](script), len(args)


def closing_reply(dialect: str) -> bytes:
    """The model's answer once the tool ran, in the same dialect."""
    script = [("text", "Filed.")]
    if dialect == "anthropic":
        return streamgen.anthropic(script, stop_reason="end_turn")
    if dialect == "openai-chat":
        return streamgen.openai_chat(script, finish="stop")
    return streamgen.ENCODERS[dialect](script)


#: Runs ``python -m app`` (argv after the file name) and writes this process's VmHWM (KiB) to the file.
PEAK = """
import atexit, runpy, sys
out = sys.argv.pop(1)

def peak():
    with open("/proc/self/status") as status:
        hwm = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(out, "w") as f:
        f.write(hwm)

atexit.register(peak)
sys.argv[0] = "callstream"
runpy.run_module("app", run_name="__main__", alter_sys=True)
"""


def run_ask(args_size: int, fragment: int, work: Path, dialect: str = "anthropic",
            kind: str = "built-in") -> dict[str, float]:
    home = work / f"home-{args_size}-{dialect}-{kind}"
    home.mkdir()
    # the support-store tools are offered to a real provider only by a profile that names them
    config = (BUILTIN.format(dialect=dialect) if kind == "built-in"
              else CONFIG.format(python=sys.executable, root=str(ROOT)))
    (home / "none.toml").write_text(config)
    tool = TOOLS[kind]
    code = SERVER.format(root=str(ROOT), size=args_size, fragment=fragment, dialect=dialect, tool=tool)
    server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url, stream_bytes, args_bytes = server.stdout.readline().split()
        env = {**os.environ, "CALLSTREAM_HOME": str(home), "CALLSTREAM_CONFIG": str(home / "none.toml"),
               KEYS[dialect]: "bench"}
        start = time.perf_counter()
        peak = home / "peak"
        ask = subprocess.Popen([sys.executable, "-c", PEAK, str(peak), "ask", "file it", "--provider",
                                "bench" if kind == "built-in" else dialect, "--base-url", url, "--model", "m",
                                "--approve", tool], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out_bytes, err_bytes = ask.communicate()
        wall = time.perf_counter() - start
        err = err_bytes.decode()
        if ask.returncode != 0:
            raise SystemExit(f"ask failed ({dialect}, {kind}, {ask.returncode}): {err[-2000:]}")
        if f"{tool} · ran" not in out_bytes.decode():  # a call that never ran measures nothing of the tool's path
            raise SystemExit(f"the {tool} call did not run ({dialect}, {kind}): {out_bytes.decode()[-500:]}")
    finally:
        server.communicate("")
    data = home / "data" if (home / "data").exists() else home
    db = sum(p.stat().st_size for p in data.rglob("callstream.db*"))
    recording = sum(p.stat().st_size for p in data.rglob("recordings/*"))
    return {"rss": int(peak.read_text()) * 1024, "db": db, "recording": recording, "stream": int(stream_bytes),
            "args": int(args_bytes), "wall": wall}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=10)
    parser.add_argument("--fragment", type=int, default=4, help="characters per argument fragment")
    parser.add_argument("--matrix-mb", default="10,1", help="the path table's sizes in MB (comma-separated)")
    parser.add_argument("--matrix-fragment", type=int, default=16,
                        help="characters per argument fragment in the path table (4 takes four times as long)")
    parser.add_argument("--quick", action="store_true", help="the path table at 1 MB only")
    parser.add_argument("--no-matrix", action="store_true", help="skip the dialect × tool table")
    parser.add_argument("--matrix-only", action="store_true", help="only the dialect × tool table")
    parser.add_argument("--dialects", default=",".join(DIALECTS))
    parser.add_argument("--kinds", default=",".join(TOOLS))
    opts = parser.parse_args()
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if opts.matrix_only:
        path_table([1.0] if opts.quick else [float(x) for x in opts.matrix_mb.split(",") if x], opts.matrix_fragment,
                   opts.dialects.split(","), opts.kinds.split(","))
        return 0
    with tempfile.TemporaryDirectory(prefix="callstream-bench-memory-") as tmp:
        work = Path(tmp)
        small = run_ask(1_000, opts.fragment, work)
        big = run_ask(int(opts.mb * 1_000_000), opts.fragment, work)
    args = big["args"]
    per_byte = (big["rss"] - small["rss"]) / args
    db = (big["db"] - small["db"]) / args
    rec = big["recording"] / big["stream"]
    mib = 1 << 20

    def verdict(ok: bool) -> str:
        return "pass" if ok else "**miss**"

    print()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} (before: {load_before}); "
          "peak RSS is each ask process's VmHWM")
    print()
    print(f"`callstream ask` on one create_ticket call of {args / 1e6:.1f} MB of arguments in "
          f"{opts.fragment}-character fragments (Anthropic framing, {big['stream'] / 1e6:.0f} MB of stream), "
          "reference: the same with a 1 KB call")
    print()
    print("| measure | reference (1 KB call) | big call | per argument byte | target | met |")
    print("|---|---|---|---|---|---|")
    print(f"| peak RSS | {small['rss'] / mib:.0f} MiB | {big['rss'] / mib:.0f} MiB | {per_byte:.1f} B/B | ≤ 4 B/B | "
          f"{verdict(per_byte <= 4)} |")
    print(f"| transcript database | {small['db'] / 1024:.0f} KiB | {big['db'] / mib:.1f} MiB | {db:.2f}× | ≤ 1.2× | "
          f"{verdict(db <= 1.2)} |")
    print(f"| recording | {small['recording'] / 1024:.0f} KiB | {big['recording'] / mib:.1f} MiB | "
          f"{rec:.2f}× the raw stream ({big['stream'] / mib:.1f} MiB) | ≤ 1× | {verdict(rec <= 1)} |")
    print(f"| wall time of ask | {small['wall']:.2f} s | {big['wall']:.2f} s | — | — | — |")
    if not opts.no_matrix:
        sizes = [1.0] if opts.quick else [float(x) for x in opts.matrix_mb.split(",") if x]
        path_table(sizes, opts.matrix_fragment, opts.dialects.split(","), opts.kinds.split(","))
    return 0


def path_table(sizes: list[float], fragment: int, dialects: list[str], kinds: list[str]) -> None:
    """Bytes of peak RSS per argument byte, above each cell's own 1 KB call, for every dialect × tool kind."""
    cells: dict[tuple[str, str], list[float]] = {}
    peaks: dict[tuple[str, str], list[float]] = {}  # MiB: the 1 KB reference, then each size
    with tempfile.TemporaryDirectory(prefix="callstream-bench-memory-") as tmp:
        work = Path(tmp)
        for dialect in dialects:
            for kind in kinds:
                base = work / f"{dialect}-{kind}"
                base.mkdir()
                small = run_ask(1_000, fragment, base, dialect, kind)
                row = []
                mibs = [small["rss"] / (1 << 20)]
                for mb in sizes:
                    big = run_ask(int(mb * 1_000_000), fragment, base, dialect, kind)
                    row.append((big["rss"] - small["rss"]) / big["args"])
                    mibs.append(big["rss"] / (1 << 20))
                cells[(dialect, kind)] = row
                peaks[(dialect, kind)] = mibs
                print(f"  {dialect} × {kind}: " + ", ".join(f"{v:.1f}" for v in row), file=sys.stderr, flush=True)
    print()
    print(f"Peak RSS per argument byte (B/B) above the same path's 1 KB call, `callstream ask`, "
          f"{fragment}-character fragments; target ≤ 4 in every cell")
    print()
    print("| dialect | " + " | ".join(f"{kind}, {mb:g} MB" for kind in kinds for mb in sizes) + " |")
    print("|---|" + "---|" * (len(kinds) * len(sizes)))
    worst = 0.0
    for dialect in dialects:
        values = [v for kind in kinds for v in cells[(dialect, kind)]]
        worst = max([worst, *values])
        print(f"| {dialect} | " + " | ".join(f"{v:.1f}" + ("" if v <= 4 else " **miss**") for v in values) + " |")
    print(f"\nworst cell {worst:.1f} B/B (target ≤ 4): {'pass' if worst <= 4 else '**miss**'}")
    print()
    print("Peak RSS (MiB) of each cell's runs: the 1 KB reference, then " + ", ".join(f"{mb:g} MB" for mb in sizes))
    print()
    print("| dialect | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    for dialect in dialects:
        print(f"| {dialect} | " + " | ".join(" → ".join(f"{v:.0f}" for v in peaks[(dialect, kind)]) for kind in kinds)
              + " |")


if __name__ == "__main__":
    sys.exit(main())
