"""A server's ``elicitation/create``, routed to the call it belongs to.

The SDK hands the request to one callback per connection, without saying
which of our calls it came from. A request arrives while a call is in
flight (the server asks in the middle of a tool call); it goes to the latest
call in flight to that server, whose ``ToolContext.elicit`` puts it on that
call's card and waits for the answer. A request with no call in flight (or
a call nobody can answer for) is declined. A URL request is shown, never
opened: accepting says the person went there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from ..stream.elicitation import Elicitation, parse_elicitation
from ..stream.redact import redact

__all__ = ["Asker", "Elicit"]

Elicit = Callable[[Elicitation], Awaitable[dict[str, Any] | None]]


class Asker:
    """The SDK's ``elicitation_callback`` for one server (its presence declares the capability)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._calls: list[Elicit] = []

    @contextlib.contextmanager
    def during(self, elicit: Elicit | None) -> Iterator[None]:
        """While one call is in flight, its requests for the person go to ``elicit``."""
        if elicit is None:
            yield
            return
        self._calls.append(elicit)
        try:
            yield
        finally:
            self._calls.remove(elicit)

    async def __call__(self, context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        data = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        data["message"] = redact(str(data.get("message") or ""))
        asked = parse_elicitation(self.server, data)
        if not self._calls:
            return ElicitResult(action="decline")
        values = await self._calls[-1](asked)
        if asked.state == "accept":
            return ElicitResult(action="accept", content=values if asked.mode == "form" else None)
        return ElicitResult(action="decline" if asked.state == "decline" else "cancel")
