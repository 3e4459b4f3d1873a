"""A callstream client for the two-host tests: runs CALLS side-effecting calls
through real Dispatchers and the ledger the config names (a PostgreSQL URL,
the team namespace, a lease), 8 at a time, in a shuffled order. Usage:
    python -m tests.ledger_racer URL CONVERSATION EFFECTS CALLS SEED SLEEP LEASE
The tool appends ``<key> <pid>`` to EFFECTS (one shared file: the side effect
to count); each call's outcome is one JSON line on stdout."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from typing import Any

from app.ledger import conversation_scope, open_ledger
from app.ledger.postgres import migrate
from app.settings.config import Config
from app.tools.base import Tool, ToolContext
from app.tools.dispatcher import CallUpdate, Dispatcher
from app.tools.registry import Registry


def main() -> None:
    url, conversation, effects = sys.argv[1], sys.argv[2], sys.argv[3]
    calls, seed, sleep, lease = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
    migrate(url)  # idempotent, under an advisory lock: both clients may do it
    config = Config(ledger=url, team="support", ledger_lease=lease)
    ledger = open_ledger(config)
    scope = conversation_scope(conversation, config.team)

    async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
        with open(effects, "a") as handle:
            handle.write(f"{ctx.idempotency_key} {os.getpid()}\n")
        await asyncio.sleep(sleep)
        return f"done {arguments['n']}"

    registry = Registry([Tool("effect", "a side effect", {"type": "object"}, effect, read_only=False, timeout=60)])
    order = list(range(calls))
    random.Random(seed).shuffle(order)

    async def go() -> None:
        gate = asyncio.Semaphore(8)

        async def one(n: int) -> None:
            async with gate:
                updates: list[CallUpdate] = []
                dispatcher = Dispatcher(registry, ledger, scope, n, updates.append)
                dispatcher.submit(0, "effect", {"n": n})
                await dispatcher.wait()
                last = updates[-1]
                print(json.dumps({"n": n, "key": last.key, "state": last.state, "result": last.result,
                                  "reused": last.reused, "ran_here": dispatcher.runs}), flush=True)

        await asyncio.gather(*(one(n) for n in order))

    print(json.dumps({"ready": os.getpid()}), flush=True)
    asyncio.run(go())
    ledger.close()


if __name__ == "__main__":
    main()
