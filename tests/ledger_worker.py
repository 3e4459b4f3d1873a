"""Run one side-effecting call through a real Dispatcher and ledger, in its
own process (for the crash and race tests). Usage:
    python -m tests.ledger_worker LEDGER_DB EFFECT_FILE SLEEP_SECONDS
Prints the call's final state and whether this process ran the tool."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from app.ledger import SqliteLedger
from app.tools.base import Tool, ToolContext
from app.tools.dispatcher import CallUpdate, Dispatcher
from app.tools.registry import Registry


def main() -> None:
    ledger_path, effect, sleep = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])

    async def append(arguments: dict[str, Any], ctx: ToolContext) -> str:
        with effect.open("a") as handle:
            handle.write(ctx.idempotency_key + "\n")
            handle.flush()
        await asyncio.sleep(sleep)
        return "appended"

    registry = Registry([Tool("append", "append a line", {"type": "object"}, append, read_only=False, timeout=60)])
    updates: list[CallUpdate] = []

    async def go() -> None:
        dispatcher = Dispatcher(registry, SqliteLedger(ledger_path), "conv-1", 0, updates.append)
        dispatcher.submit(0, "append", {"line": "hello"})
        await dispatcher.wait()
        print(updates[-1].state, "ran-here" if dispatcher.runs else "not-here", flush=True)

    asyncio.run(go())


if __name__ == "__main__":
    main()
