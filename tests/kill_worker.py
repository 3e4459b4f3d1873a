"""Stream a conversation into the store until killed (for the SIGKILL test).
Usage: python -m tests.kill_worker CONVERSATION_ID [forming [SPEED]]
Prints "started" once the first turn is under way. With ``forming``: only
"/demo long" (a 200 KB ticket call), and "forming" once the call is announced
(after the store has written it), "formed" once it ended."""

from __future__ import annotations

import asyncio
import sys

from app.chat.events import BlockOpened, CallState, ChatEvent
from app.runtime.wiring import open_runtime
from app.settings.config import Config
from app.settings.profiles import ProviderProfile
from app.tools.approvals import Approvals
from tests import storefaults


async def main(conversation: str, forming: bool = False, speed: float = 20.0) -> None:
    config = Config(providers={"demo": ProviderProfile(name="demo", provider="demo", demo_speed=speed,
                                                       demo_dialect="anthropic")}, default="demo")
    runtime = open_runtime(config=config)
    session = runtime.session(approvals=Approvals.from_config(runtime.config, approve="all"))
    storefaults.rename_conversation(runtime.store.path, session.conversation, conversation)
    session.conversation = conversation
    for listener in session.listeners:
        if hasattr(listener, "conversation"):
            listener.conversation = conversation
    print("started", flush=True)
    if forming:
        def say(event: ChatEvent) -> None:
            if isinstance(event, BlockOpened) and event.block.type == "tool_call":
                print("forming", flush=True)
            elif isinstance(event, CallState) and event.state != "preparing":
                print("formed", flush=True)

        session.listeners.append(say)  # after the transcript writer: what it prints is already stored
        await session.send("/demo long")
        return
    await session.send("Show me order A-1042")
    await session.send("/demo long")
    print("finished", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:3] == ["forming"], float(sys.argv[3]) if len(sys.argv) > 3 else 20.0))
