"""Run the demo conversation in the real runtime until a call awaits approval,
print "AWAITING <conversation>", and wait to be killed (the crash test).
Usage: python -m tests.approval_worker"""

from __future__ import annotations

import asyncio

from app.chat.events import CallState
from app.runtime.wiring import open_runtime
from app.settings.config import Config
from app.settings.profiles import ProviderProfile

PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."


async def main() -> None:
    config = Config(providers={"demo": ProviderProfile(name="demo", provider="demo", demo_speed=0.0)},
                    default="demo")
    runtime = open_runtime(config=config)
    session = runtime.session()

    def watch(event: object) -> None:
        if isinstance(event, CallState) and event.state == "awaiting approval":
            print(f"AWAITING {session.conversation}", flush=True)

    session.listeners.append(watch)
    await session.send(PROMPT)  # never returns: nobody answers


if __name__ == "__main__":
    asyncio.run(main())
