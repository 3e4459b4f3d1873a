"""A running tool's requests for the person (MCP elicitation), answered in-band.

The dispatcher hands each request to ``Asking.ask`` with the call's key; the
request waits, shown on the call's card, until the person answers it
(``answer``: accept with values, decline, cancel) or the call ends. ``ask``
(the command) uses ``Declining``: it never prompts, so every request is
declined and the reason kept, for the command to say. Either way the tool
call itself — its key, its ledger claim — is untouched: the answer goes to
the server inside the same call.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..stream.elicitation import Elicitation, answer_values, kept_answer

__all__ = ["Asking", "Declining", "ASK_DECLINES"]

#: Why ``ask`` declined a request for the person.
ASK_DECLINES = "callstream ask never prompts, so it declined"


class Asking:
    """Requests waiting for the person, by call key (the latest per call)."""

    def __init__(self) -> None:
        self._waiting: dict[str, tuple[Elicitation, asyncio.Future[tuple[str, dict[str, Any]]]]] = {}

    async def ask(self, key: str, asked: Elicitation) -> dict[str, Any] | None:
        if asked.state != "asked":  # declined on arrival (a form we cannot build)
            return None
        future: asyncio.Future[tuple[str, dict[str, Any]]] = asyncio.get_running_loop().create_future()
        self._waiting[key] = (asked, future)
        try:
            action, values = await future
        except asyncio.CancelledError:
            asked.state, asked.reason = "cancel", "the call ended before it was answered"
            raise
        finally:
            self._waiting.pop(key, None)
        asked.state = action  # type: ignore[assignment]
        if action != "accept":
            return None
        asked.answer = kept_answer(asked.fields, values)
        return values

    def waiting(self, key: str) -> Elicitation | None:
        held = self._waiting.get(key)
        return held[0] if held is not None else None

    def answer(self, key: str, action: str, entered: dict[str, Any] | None = None) -> dict[str, str]:
        """The person's answer to the request waiting under ``key``: the problems by field (the
        form stays; nothing is sent) or {} (sent). ``entered``: field → text, bool or chosen values."""
        held = self._waiting.get(key)
        if held is None or held[1].done():
            return {}
        asked, future = held
        values: dict[str, Any] = {}
        if action == "accept" and asked.mode == "form":
            values, problems = answer_values(asked.fields, entered or {})
            if problems:
                return problems
        future.set_result((action if action in ("accept", "decline", "cancel") else "cancel", values))
        return {}


class Declining(Asking):
    """``ask``'s: every request declined, saying why (``declined`` keeps them for the command's words)."""

    def __init__(self) -> None:
        super().__init__()
        self.declined: list[Elicitation] = []

    async def ask(self, key: str, asked: Elicitation) -> dict[str, Any] | None:
        if asked.state == "asked":
            asked.state, asked.reason = "decline", ASK_DECLINES
        self.declined.append(asked)
        return None


class AcceptingDefaults(Declining):
    """``--elicit-defaults`` (``mcp call``): a form whose every field the person would have to fill has a
    default in the server's schema is accepted with those defaults (SEP-1034: the client applies them);
    any other request is declined as ``Declining`` does, saying which field had none. Nobody is asked."""

    async def ask(self, key: str, asked: Elicitation) -> dict[str, Any] | None:
        if asked.state != "asked" or asked.mode != "form":
            return await super().ask(key, asked)
        entered = {f.name: f.default if f.kind in ("boolean", "choices") else str(f.default)
                   for f in asked.fields if f.default is not None}
        values, problems = answer_values(asked.fields, entered)
        if problems:
            asked.state = "decline"
            asked.reason = "no default the schema allows for " + ", ".join(sorted(problems))
            self.declined.append(asked)
            return None
        asked.state, asked.answer = "accept", kept_answer(asked.fields, values)
        return values
