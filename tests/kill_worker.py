"""Stream a conversation into the store until killed (for the SIGKILL test).
Usage: python -m tests.kill_worker CONVERSATION_ID
Prints "started" once the first turn is under way."""

from __future__ import annotations

import asyncio
import sys

from app.config import Config, ProviderProfile
from app.runtime import open_runtime


async def main(conversation: str) -> None:
    config = Config(providers={"demo": ProviderProfile(name="demo", provider="demo", demo_speed=20.0,
                                                       demo_dialect="anthropic")}, default="demo")
    runtime = open_runtime(config=config)
    session = runtime.session()
    runtime.store._db.execute("UPDATE conversations SET id = ? WHERE id = ?", (conversation, session.conversation))
    session.conversation = conversation
    for listener in session.listeners:
        if hasattr(listener, "conversation"):
            listener.conversation = conversation
    print("started", flush=True)
    await session.send("Show me order A-1042")
    await session.send("/demo long")
    print("finished", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
