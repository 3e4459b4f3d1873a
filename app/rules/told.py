"""What a finished turn tells the model: one rule, read by the loop when a
turn ends and by the store when a stored conversation is continued.

A turn goes into the history as its prose, the calls that were answered
(with their real results, in the order they were made), and nothing for the
calls that did not run; a one-line note says why the turn is incomplete (an
interruption, calls waiting for approval). Pure: blocks in, history entries
out.
"""

from __future__ import annotations

from ..stream.blocks import ANSWERED, PENDING_APPROVAL, Block, TextBlock, ToolCallBlock, Turn
from ..stream.history import Assistant, CallRecord, Entry, ToolResult
from .words import interrupted_note

__all__ = ["told", "answered_calls", "call_ids", "interruption_note", "approval_note", "pending_names",
           "cause_words", "turn_note"]


def answered_calls(blocks: list[Block]) -> list[ToolCallBlock]:
    """The turn's own calls whose result goes back to the model, in order."""
    return [b for b in blocks if isinstance(b, ToolCallBlock) and not b.provider_executed and b.state in ANSWERED]


def pending_names(blocks: list[Block]) -> list[str]:
    """The names of the calls still waiting for the user's approval."""
    return [b.name for b in blocks if isinstance(b, ToolCallBlock) and b.state in PENDING_APPROVAL]


def call_ids(turn: int, calls: list[ToolCallBlock]) -> list[str]:
    """Each answered call's id: the provider's, else one made from the turn and its place."""
    return [c.id or f"call_{turn}_{i}" for i, c in enumerate(calls)]


def told(turn: int, blocks: list[Block], note: str | None) -> list[Entry]:
    """The history entries a finished turn adds: the assistant's prose with
    its answered calls and ``note``, then each answered call's result."""
    calls = answered_calls(blocks)
    ids = call_ids(turn, calls)
    text = "".join(b.text for b in blocks if isinstance(b, TextBlock))
    entries: list[Entry] = [Assistant(text, [CallRecord(i, c.name, c.arguments or {}) for i, c in zip(ids, calls,
                                                                                                     strict=True)],
                                      note)]
    entries += [ToolResult(i, c.name, c.result or "", c.state != "ran") for i, c in zip(ids, calls, strict=True)]
    return entries


def approval_note(names: list[str]) -> str:
    """One line for the history: calls that wait for the user's approval have not run."""
    listed = ", ".join(dict.fromkeys(names))
    verb = "is" if len(names) == 1 else "are"
    return f"Waiting for approval: {listed} {verb} waiting for the user's approval and has not run yet."


def cause_words(turn: Turn) -> str:
    """What ended a turn early, in words."""
    if turn.outcome == "cut_off":
        return {"disconnect": "the connection dropped", "timeout": "the stream timed out",
                "cancelled": "the turn was cancelled"}.get(turn.cause or "", "the stream ended early")
    if turn.outcome == "truncated":
        return "the output limit cut the reply off"
    if turn.outcome == "malformed":
        return f"the reply was malformed ({turn.error})" if turn.error else "the reply was malformed"
    if turn.outcome == "provider_error" and turn.cause == "unreachable":
        return turn.error or "the provider could not be reached"  # no reply at all: not the provider's word
    if turn.outcome == "provider_error":
        return f"the provider reported an error ({turn.error})" if turn.error else "the provider reported an error"
    return "the turn ended"


def interruption_note(turn: Turn, unfinished: list[str]) -> str:
    """One line: what happened, and that the unfinished calls did not run."""
    return interrupted_note(cause_words(turn), unfinished)


def turn_note(turn: Turn, note: str | None) -> str | None:
    """The note a stored turn tells the model: its own, else (a turn stored
    without one) the interruption it ended in, else the approvals it waits for."""
    if note is None and turn.outcome != "complete":
        note = interruption_note(turn, [b.name for b in turn.blocks if isinstance(b, ToolCallBlock)
                                        and b.state == "not run"])
    pending = pending_names(turn.blocks)
    if pending and note is None:
        note = approval_note(pending)
    return note
