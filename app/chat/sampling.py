"""A running tool's requests to the model (MCP sampling), through the person.

The dispatcher hands each request to ``Sampling.sample`` with the call's key
and a ``changed`` callback (the card redraws from the request). With the
server's ``sampling = "ask"`` (the default) the request waits, shown on the
call's card, until the person sends it or refuses it (``answer``); it then runs
through the current provider — the model the server's hints pick among those
the current profile offers (``choose_model``), else the current one, said on
the card — and the reply waits again, for the person to return it (as it is,
or edited) or refuse it. With ``"allow"`` nobody is asked. ``ask`` (the command)
uses ``Refusing``: it never prompts, so a request is refused unless allowed.

Why the request runs through a session of its own: the model is asked exactly
what the server asked (its messages, its system prompt, its ``maxTokens``),
offered no tools and stored nowhere, as the compaction's summary is; what it
cost is added to the turn of the call that asked (``for_turn``), so the usage
line counts it. The tool call itself — its key, its ledger claim — is
untouched: the reply goes to the server inside the same call.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from ..stream import TextBlock
from ..stream.dialects import max_tokens_option
from ..stream.history import Assistant, Entry, User
from ..stream.limits import one_line
from ..stream.sampling import SamplingRequest, choose_model
from ..stream.usage import total
from ..tools.registry import Registry
from .turns import LiveTurn

__all__ = ["Sampling", "Refusing", "ASK_REFUSES", "SampleFn"]

SampleFn = Callable[[str, SamplingRequest, Callable[[], None]], Awaitable[None]]

#: Why ``ask`` refused a request to the model.
ASK_REFUSES = 'callstream ask never prompts, so it refused it (sampling = "allow" for the server lets it through)'


class Sampling:
    """Requests to the model waiting for the person, by call key (the latest per call)."""

    def __init__(self, session: Any) -> None:
        #: The ``ChatSession`` whose provider runs them (Any: this module is the session's, not the other way).
        self.session = session
        #: The models the current profile may be asked for besides its own (the runtime's; server hints pick).
        self.models: list[str] = []
        self._waiting: dict[str, tuple[SamplingRequest, asyncio.Future[tuple[str, str | None]]]] = {}

    def for_turn(self, record: LiveTurn) -> SampleFn:
        """The dispatcher's ``sampler`` for one turn: what a request costs is added to that turn's usage."""

        async def sample(key: str, asked: SamplingRequest, changed: Callable[[], None]) -> None:
            try:
                await self.sample(key, asked, changed)
            finally:
                if asked.usage is not None:
                    record.usage = total([record.usage, asked.usage])

        return sample

    async def sample(self, key: str, asked: SamplingRequest, changed: Callable[[], None]) -> None:
        if asked.state != "asked":  # refused on arrival (a request callstream cannot send)
            return
        asked.model, asked.chosen = choose_model(asked.hints, self.session.endpoint.model, self.models)
        changed()
        if asked.mode != "allow":
            action, _ = await self._wait(key, asked)
            if action != "send":
                asked.state, asked.reason = "refused", asked.reason or "the person refused to send it to the model"
                return
        asked.state = "running"
        changed()
        if not await self.run(asked):
            return
        if asked.mode == "allow":
            asked.state, asked.returned = "returned", asked.reply
            return
        asked.state = "replied"
        changed()
        action, text = await self._wait(key, asked)
        if action == "return":
            asked.state, asked.returned = "returned", asked.reply if text is None else text
        else:
            asked.state, asked.reason = "refused", asked.reason or "the person refused the reply"

    async def _wait(self, key: str, asked: SamplingRequest) -> tuple[str, str | None]:
        """The person's answer to ``asked`` in its present state: ("send" | "return" | "refuse", text)."""
        future: asyncio.Future[tuple[str, str | None]] = asyncio.get_running_loop().create_future()
        self._waiting[key] = (asked, future)
        try:
            return await future
        except asyncio.CancelledError:
            asked.state, asked.reason = "refused", "the call ended before it was answered"
            raise
        finally:
            self._waiting.pop(key, None)

    def waiting(self, key: str) -> SamplingRequest | None:
        """The request waiting for the person under ``key`` (None: none, or already answered)."""
        held = self._waiting.get(key)
        return held[0] if held is not None and not held[1].done() else None

    def answer(self, key: str, action: str, text: str | None = None) -> bool:
        """The person's answer to the request waiting under ``key``: "send" (asked: to the model),
        "return" (replied: ``text``, the reply as edited, else as written, to the server) or "refuse".
        False when nothing waits for that answer."""
        held = self._waiting.get(key)
        if held is None or held[1].done():
            return False
        asked, future = held
        expected = "send" if asked.state == "asked" else "return"
        if action not in (expected, "refuse"):
            return False
        future.set_result((action, text))
        return True

    async def run(self, asked: SamplingRequest) -> bool:
        """``asked`` through the current provider: its reply and what it cost (True), or why it failed."""
        session = self.session
        endpoint = session.endpoint
        if asked.model and asked.model != endpoint.model:
            endpoint = dataclasses.replace(endpoint, model=asked.model, closer=None)
        history: list[Entry] = [User(m.text) if m.role == "user" else Assistant(m.text) for m in asked.messages[:-1]]
        options = {**session.options, **max_tokens_option(endpoint.dialect, asked.max_tokens)}
        writer = type(session)(
            endpoint,
            Registry([]),
            session.ledger,
            session.conversation,
            history,
            retries=session.retries,
            max_rounds=1,
            timeouts=session.timeouts,
            offer_tools=False,
            system=asked.system,
            options=options,
            limits=session.limits,
            backoff=session.backoff,
        )
        writer.request_usage = session.request_usage
        try:
            done = await writer.send(asked.messages[-1].text)
        finally:
            await writer.aclose()
        asked.usage = total(t.usage for t in writer.turns)
        asked.model = done.model or asked.model
        text = "".join(b.text for t in writer.turns for b in t.blocks if isinstance(b, TextBlock)).strip()
        if done.status != "done" or not text:
            why = done.message or next((t.note for t in reversed(writer.turns) if t.note), None) or "no reply came"
            asked.state, asked.reason = "failed", f"the model did not answer: {one_line(why, 200)}"
            return False
        asked.reply = text
        return True


class Refusing(Sampling):
    """``ask``'s: nobody is asked, so a request is refused unless its server's ``sampling`` is "allow" (the
    command says what became of each from the calls' cards: ``cli.ask.sampling_words``)."""

    async def sample(self, key: str, asked: SamplingRequest, changed: Callable[[], None]) -> None:
        if asked.state == "asked" and asked.mode != "allow":
            asked.state, asked.reason = "refused", ASK_REFUSES
        await super().sample(key, asked, changed)
