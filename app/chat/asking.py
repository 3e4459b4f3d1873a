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

from ..stream.elicitation import Elicitation, FormField, answer_values, kept_answer

__all__ = ["Asking", "Declining", "AcceptingGiven", "AcceptingDefaults", "ASK_DECLINES"]

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


class AcceptingGiven(Declining):
    """``ask --elicit NAME=VALUE`` (and ``--elicit-defaults``): a form is accepted with the values given on the
    command line, checked against the schema as the card checks the person's (a yes/no field takes
    true/false, a multiple choice comma-separated values), and — with ``defaults`` — the schema's defaults
    for the fields not given (SEP-1034: the client applies them). A form that still lacks a value, or whose
    given value the schema refuses, is declined as ``Declining`` does, saying which field. Nobody is asked."""

    def __init__(self, given: dict[str, str] | None = None, defaults: bool = False) -> None:
        super().__init__()
        self.given = dict(given or {})
        self.defaults = defaults

    def _entered(self, spec: FormField) -> Any:
        text = self.given.get(spec.name)
        if text is None:
            if not self.defaults or spec.default is None:
                return None
            return spec.default if spec.kind in ("boolean", "choices") else str(spec.default)
        if spec.kind == "boolean":
            return text.strip().lower() in ("true", "yes", "1", "on")
        if spec.kind == "choices":
            return [part.strip() for part in text.split(",") if part.strip()]
        return text

    async def ask(self, key: str, asked: Elicitation) -> dict[str, Any] | None:
        if asked.state != "asked" or asked.mode != "form":
            return await super().ask(key, asked)
        entered = {f.name: value for f in asked.fields if (value := self._entered(f)) is not None}
        values, problems = answer_values(asked.fields, entered)
        if problems:
            asked.state = "decline"
            missing = sorted(name for name, problem in problems.items() if name not in self.given)
            wrong = sorted(f"{name}: {problem}" for name, problem in problems.items() if name in self.given)
            if self.given or not self.defaults:
                why = ([f"no value given{' or default' if self.defaults else ''} for " + ", ".join(missing)]
                       if missing else []) + ([f"the value given is refused ({'; '.join(wrong)})"] if wrong else [])
            else:
                why = ["no default the schema allows for " + ", ".join(missing)]
            asked.reason = "; ".join(why)
            self.declined.append(asked)
            return None
        asked.state, asked.answer = "accept", kept_answer(asked.fields, values)
        return values


class AcceptingDefaults(AcceptingGiven):
    """``--elicit-defaults`` (``mcp call``): a form whose every field the person would have to fill has a
    default in the server's schema is accepted with those defaults; any other request is declined, saying
    which field had none."""

    def __init__(self) -> None:
        super().__init__({}, defaults=True)
