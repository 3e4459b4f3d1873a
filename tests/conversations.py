"""Run a conversation through the real runtime (store, ledger, recorder) for
tests: the messages in order, then everything closed."""

from __future__ import annotations

import asyncio
from typing import Any

from app.chat.session import ChatSession
from app.net.endpoint import Endpoint
from app.runtime.wiring import open_runtime
from app.settings.config import Config
from app.settings.profiles import ProviderProfile
from app.tools.approvals import Approvals


def demo_config(dialect: str = "openai-chat", retries: int = 3) -> Config:
    profile = ProviderProfile(name="demo", provider="demo", demo_speed=0.0, demo_dialect=dialect, retries=retries)
    return Config(providers={"demo": profile}, default="demo")


def converse(messages: list[str], config: Config | None = None, endpoint: Endpoint | None = None,
             conversation: str | None = None) -> ChatSession:
    runtime = open_runtime(config=config or demo_config(), endpoint=endpoint)
    # nobody answers here: every call runs as it did before approvals (their tests are tests/test_approvals.py)
    session = runtime.session(conversation, approvals=Approvals.from_config(runtime.config, approve="all"))

    async def go() -> None:
        try:
            for message in messages:
                await session.send(message)
        finally:
            await session.aclose()
            runtime.close()

    asyncio.run(go())
    return session


def stored(conversation: str) -> Any:
    """The conversation as the data dir's store holds it now, read by a store of its own."""
    from app.files.paths import data_dir
    from app.store.transcripts import Store

    store = Store(data_dir() / "callstream.db")
    try:
        return store.load(conversation)
    finally:
        store.close()
