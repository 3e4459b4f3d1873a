"""One turn with N read-only calls, in a process of its own so its peak RSS
is its own (for the 10,000-calls test and benchmarks/bench_many_calls.py).
Usage: python -m tests.many_calls_worker N MAX_CALLS MAX_CONCURRENT DIR
Prints one JSON line: call states, ledger states, the most calls running at
once, peak RSS (KiB) and the elapsed seconds."""

from __future__ import annotations

import asyncio
import json
import resource
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from app.chat.session import ChatSession
from app.ledger import SqliteLedger
from app.net.endpoint import Endpoint
from app.net.stream import Timeouts
from app.settings.tools import CommandToolConfig
from app.tools.command import command_tool
from app.tools.dispatcher import Dispatcher
from app.tools.registry import Registry
from tests import streamgen
from tests.faultserver import FaultServer, Reply


def _peak_rss_kib() -> int:
    """This process's own peak RSS. ``ru_maxrss`` survives ``execve``, so a
    worker started from a big pytest process would report the parent's peak;
    ``VmHWM`` belongs to the new address space alone."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

def main(count: int, max_calls: int, max_concurrent: int, directory: Path) -> dict[str, Any]:
    cat = shutil.which("cat") or "/bin/cat"
    tool = command_tool(CommandToolConfig("lookup", [cat], read_only=True, timeout=60,
                                          parameters={"type": "object", "properties": {"n": {"type": "integer"}},
                                                      "required": ["n"]}))
    script: list[Any] = [("text", "Looking them all up. ")]
    for n in range(count):
        script += streamgen.call_script(n, f"t{n}", "lookup", json.dumps({"n": n}), 64)
    body = streamgen.anthropic(script)
    dispatchers: list[Dispatcher] = []

    def capture(*args: Any, **kwargs: Any) -> Dispatcher:
        dispatchers.append(Dispatcher(*args, **kwargs))
        return dispatchers[-1]

    ledger = SqliteLedger(directory / "ledger.db")
    started = time.monotonic()
    with FaultServer() as server:
        server.replies.append(Reply(body, chunk=65536))
        server.replies.append(Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")))
        session = ChatSession(Endpoint("anthropic", server.url, "m", "test"), Registry([tool]), ledger, "many",
                              timeouts=Timeouts(5, 60, 3600), max_rounds=2, dispatcher_class=capture,
                              max_calls_per_turn=max_calls, max_concurrent_tools=max_concurrent)

        async def go() -> str:
            try:
                return (await session.send("look them all up")).status
            finally:
                await session.aclose()

        status = asyncio.run(go())
    elapsed = time.monotonic() - started
    calls = [b for b in session.turns[0].blocks if b.type == "tool_call"]
    report = {
        "status": status,
        "calls": len(calls),
        "states": dict(Counter(b.state for b in calls)),
        "ledger": dict(Counter(e["state"] for e in ledger.entries())),
        "peak_running": dispatchers[0].peak_running,
        "note": session.turns[0].note,
        "max_rss_kib": _peak_rss_kib(),
        "seconds": round(elapsed, 2),
    }
    ledger.close()
    return report


if __name__ == "__main__":
    count, max_calls, max_concurrent = (int(a) for a in sys.argv[1:4])
    print(json.dumps(main(count, max_calls, max_concurrent, Path(sys.argv[4]))), flush=True)
