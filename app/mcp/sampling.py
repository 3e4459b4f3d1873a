"""A server's ``sampling/createMessage``, routed to the call it belongs to.

As with elicitation (``elicitation.Asker``), the SDK hands the request to one
callback per connection without saying which of our calls it came from: it
goes to the latest call in flight to that server, whose ``ToolContext.sample``
puts it on that call's card, asks the person, runs it through the current
provider and lets the person edit or refuse the reply. A request with no call
in flight is refused: nothing the person started asked for it.

The answer to the server is the reply as text (``CreateMessageResult``), or the
JSON-RPC error the specification names for a refusal (code -1, "User rejected
sampling request") with the reason. Whether a server may ask at all is its
``sampling`` setting: with ``deny`` this callback is not handed to the SDK, so
the capability is not declared (``capabilities.client_options``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from ..stream.sampling import SamplingRequest, parse_sampling

__all__ = ["Sampler", "Sample", "REJECTED"]

Sample = Callable[[SamplingRequest], Awaitable[None]]
#: The specification's message for a request the person (or the client for them) did not let through.
REJECTED = "User rejected sampling request"


class Sampler:
    """The SDK's ``sampling_callback`` for one server (its presence declares the capability)."""

    def __init__(self, server: str, mode: str = "ask") -> None:
        self.server = server
        self.mode = mode
        self._calls: list[Sample] = []

    @contextlib.contextmanager
    def during(self, sample: Sample | None) -> Iterator[None]:
        """While one call is in flight, its server's requests to the model go to ``sample``."""
        if sample is None:
            yield
            return
        self._calls.append(sample)
        try:
            yield
        finally:
            self._calls.remove(sample)

    async def __call__(self, context: Any, params: Any) -> Any:
        from mcp_types import CreateMessageResult, ErrorData, TextContent

        asked = parse_sampling(self.server, params.model_dump(by_alias=True, mode="json", exclude_none=True), self.mode)
        if asked.state == "asked" and self.mode == "deny":
            asked.state, asked.reason = "refused", f'sampling = "deny" for the {self.server} server'
        if asked.state == "asked" and not self._calls:
            asked.state, asked.reason = "refused", "it came while none of callstream's calls to it was running"
        if self._calls:
            await self._calls[-1](asked)  # shown on the call's card, whatever became of it
        if asked.state == "returned" and asked.returned is not None:
            return CreateMessageResult(
                role="assistant",
                content=TextContent(type="text", text=asked.returned),
                model=asked.model or "unknown",
                stop_reason="endTurn",
            )
        return ErrorData(code=-1, message=f"{REJECTED}: {asked.reason or asked.state}")
