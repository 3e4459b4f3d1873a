"""A turn as this session ran it (``LiveTurn``: every attempt, the current
attempt's blocks, how it ended), and the rules that close it: which
failures are worth another attempt, and what its note says. The stored
counterpart is ``app.store.StoredTurn``; the assembled reply of one attempt
is ``app.stream.Turn``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from ..mcp.instructions import with_instructions
from ..rules.told import approval_note, cause_words, interruption_note
from ..stream import Block, ToolCallBlock, Turn
from ..stream.usage import Usage

__all__ = ["LiveTurn", "let_go", "retryable", "retry_delay", "failure_words", "stop_unfinished", "ending_note",
           "answered_note", "system_prompt"]


@dataclass(slots=True)
class LiveTurn:
    """One turn as shown: the current attempt's blocks and how it ended."""

    index: int
    attempts: int = 0
    blocks: list[Block] = field(default_factory=list)
    result: Turn | None = None
    note: str | None = None
    failures: list[str] = field(default_factory=list)
    #: What its requests cost, every attempt's together (None: the provider never said).
    usage: Usage | None = None
    #: The model that answered (as the provider named it, else as it was asked for).
    model: str | None = None

    def let_go(self) -> None:
        """What a turn of an earlier exchange keeps once the store holds it whole: how it ran and
        ended (its index, attempts, note, failures, usage, model, outcome), not its blocks. The store
        has them, the screen reads them back from it, and the session never asks again (only the
        turn in progress, a Ctrl+R retry of the last exchange and a resumed approval are read); kept,
        they were about 4 KB a turn that a sitting only ever added to."""
        self.blocks = []  # (a new list: the parser's, which a write may still be reading, is left whole)
        if self.result is not None and self.result.blocks:
            self.result = replace(self.result, blocks=[])

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "outcome": self.result.outcome if self.result else None,
            "attempts": self.attempts,
            "stop_reason": self.result.stop_reason if self.result else None,
            "error": self.result.error if self.result else None,
            "blocks": [b.to_dict() for b in self.blocks],
        }
        if self.note:
            out["note"] = self.note
        if self.failures:
            out["failed_attempts"] = list(self.failures)
        if self.model is not None:
            out["model"] = self.model
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        if self.result is not None and self.result.detail:
            out["detail"] = self.result.detail  # the provider's whole error text, beside its one line
        return out


def let_go(turns: list[LiveTurn], start: int, end: int) -> int:
    """Turns ``start`` to ``end`` (the stored turns of exchanges before the last) keep how they ran only
    (``LiveTurn.let_go``); where to start next time."""
    for record in turns[start:end]:
        record.let_go()
    return max(start, end)


def retry_delay(backoff: float, attempt: int) -> float:
    """How long to wait before attempt ``attempt + 1``: doubling from ``backoff``, at most 8 s, with jitter."""
    return min(backoff * 2.0 ** (attempt - 1), 8.0) + random.uniform(0, backoff / 2)


def retryable(turn: Turn) -> bool:
    """A transient failure: the provider said so, or the stream was cut (not by us)."""
    return turn.outcome == "provider_error" or (turn.outcome == "cut_off" and turn.cause != "cancelled")


def failure_words(turn: Turn) -> str:
    if turn.outcome == "cut_off" and turn.error:
        return turn.error
    return cause_words(turn)



def ending_note(turn: Turn, failed: bool, pending: list[str], unfinished: list[str], max_calls: int,
                capped: int) -> str | None:
    """The one line a settled turn carries into the history: why it is
    incomplete (interrupted, with the calls that did not run), or the calls
    waiting for approval; and the calls the per-turn cap kept from running."""
    note = approval_note(pending) if pending and not failed else None
    if failed:
        note = interruption_note(turn, unfinished)
    if capped:
        limit = (f"Only the first {max_calls} calls of this turn were run (the max_calls_per_turn limit); "
                 f"{capped} more were not run.")
        note = f"{note} {limit}" if note else limit
    return note


#: How ``approval_note`` (``rules/told.py``) begins and where its line ends.
_WAITING, _WAITED = "Waiting for approval:", "has not run yet."


def answered_note(note: str | None, waiting: list[str]) -> str | None:
    """A stored turn's note once the calls it waited on were answered after a
    reopen (``waiting``: the names still waiting): its "Waiting for approval"
    line becomes the line for those still waiting, or goes when none is (the
    calls' cards and results say how each ended: ran, denied, not run,
    rejected); the rest (the per-turn cap's line) stays. So neither the store
    nor the history goes on saying the turn waits."""
    if note is None or not note.startswith(_WAITING):
        return note
    _, cut, rest = note.partition(_WAITED)
    kept = [approval_note(waiting)] if waiting else []
    kept += [rest.strip()] if cut and rest.strip() else []
    return " ".join(kept) or None


def stop_unfinished(blocks: list[Block], capped: str) -> tuple[list[int], list[str]]:
    """The turn's own calls still preparing, waiting or running when it
    settled did not run: (the indices of those it stopped, the names of every
    call that did not run but for those the per-turn cap held back — the
    ``capped`` reason)."""
    stopped: list[int] = []
    unfinished: list[str] = []
    for index, call in enumerate(blocks):
        if not isinstance(call, ToolCallBlock) or call.provider_executed:
            continue
        if call.state in ("preparing", "waiting", "running"):
            if call.result is None:
                call.stop(call.problem or "the turn ended first")
            else:
                call.state = "not run"
            stopped.append(index)
        if call.state == "not run" and call.not_run != capped:
            unfinished.append(call.name or "a call")
    return stopped, unfinished


def system_prompt(system: str | None, registry: Any, tools: list[Any]) -> str | None:
    """A turn's system prompt: the session's, then the instructions of each
    MCP server whose tools the turn offers (``mcp.instructions``)."""
    return with_instructions(system, registry, [spec.name for spec in tools])
