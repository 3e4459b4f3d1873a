"""Where a turn's stream updates and its dispatcher's reports land: the
blocks change (a call that closed is judged, and submitted when valid; a
call the dispatcher reports on takes its state), and the listeners hear of
each change. One ``TurnFeed`` per turn the session runs or resumes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..stream import (
    Block,
    BlockAdded,
    BlockChanged,
    CallClosed,
    ToolCallBlock,
    TurnClosed,
    Update,
)
from ..tools.dispatcher import CallUpdate, Dispatcher
from ..tools.finalise import NotRun, Rejected, Valid, Verdict, finalise, refinalise
from ..tools.registry import Registry
from .events import BlockGrew, BlockOpened, CallState, ChatEvent, Notice
from .forming import FormingWatch
from .turns import LiveTurn

__all__ = ["TurnFeed", "grown_once"]


def grown_once(updates: list[Update]) -> list[Update]:
    """A chunk's consecutive deltas to one block as one: the forming decode,
    the card and the prose see a chunk once, not a few hundred times (the
    text is the same; the stream core's own updates stay per fragment)."""
    out: list[Update] = []
    run: list[str] = []
    for update in updates:
        last = out[-1] if out else None
        if (type(update) is BlockChanged and update.delta and type(last) is BlockChanged
                and last.index == update.index and last.delta):
            if not run:
                run.append(last.delta)
            run.append(update.delta)
            continue
        if run:
            out[-1] = BlockChanged(last.index, "".join(run))  # type: ignore[union-attr]
            run = []
        out.append(update)
    if run:
        out[-1] = BlockChanged(out[-1].index, "".join(run))  # type: ignore[union-attr]
    return out


class TurnFeed:
    """One turn's updates and reports, applied to its blocks and told to the listeners."""

    def __init__(self, record: LiveTurn, emit: Callable[[ChatEvent], None], registry: Registry,
                 offered: frozenset[str], forming: FormingWatch, warming: bool) -> None:
        self.record = record
        self.emit = emit
        self.registry = registry
        #: The tools the turn's request offered: a call to any other is answered, never run.
        self.offered = offered
        self.forming = forming
        self.warming = warming

    def updates(self, blocks: list[Block], attempt: int, updates: list[Update], dispatcher: Dispatcher) -> None:
        """A chunk's stream updates to attempt ``attempt``'s ``blocks``: a
        call that closed is judged, and submitted when valid."""
        record = self.record
        for update in grown_once(updates):
            if isinstance(update, BlockChanged):
                block = blocks[update.index]
                if update.delta and isinstance(block, ToolCallBlock):
                    self.forming.feed(block, update.delta, self.registry, self.warming)
                self.emit(BlockGrew(record.index, update.index, update.delta))
            elif isinstance(update, BlockAdded):
                self.emit(BlockOpened(record.index, update.index, blocks[update.index]))
            elif isinstance(update, CallClosed):
                call = blocks[update.index]
                assert isinstance(call, ToolCallBlock)
                if call.provider_executed:
                    continue
                self.judge(update.index, call, finalise(call, self.registry, self.offered),
                           functools.partial(dispatcher.submit, (attempt, update.index), call.name))
            elif isinstance(update, TurnClosed):
                for i, block in enumerate(blocks):
                    if isinstance(block, ToolCallBlock) and block.state == "preparing" and not block.provider_executed:
                        block.stop(block.problem or "the turn ended before it completed")
                        self.emit(CallState(record.index, i, block.state))

    def judge(self, index: int, call: ToolCallBlock, verdict: Verdict, run: Callable[[dict[str, Any]], object]) -> None:
        """The finaliser's verdict on the call at ``index``: a valid one goes to ``run``; the rest take their state."""
        if isinstance(verdict, Valid):
            run(verdict.arguments)
            return
        if isinstance(verdict, Rejected):
            call.state, call.result, call.summary = "rejected", verdict.message, verdict.display
        elif isinstance(verdict, NotRun):
            call.stop(verdict.reason)
        self.emit(CallState(self.record.index, index, call.state))

    def resume(self, index: int, call: ToolCallBlock, dispatcher: Dispatcher) -> None:
        """A stored call answered after a reopen: the whole gate again (``refinalise``: final, strict parse,
        schema, offered now), then the approval and the ledger under its stored key."""
        key = call.key
        assert key is not None
        self.judge(index, call, refinalise(call, self.registry, self.offered),
                   lambda arguments: dispatcher.resume((self.record.attempts, index), call.name, arguments, key))

    def report(self, update: CallUpdate) -> None:
        """The dispatcher's report on one of the turn's calls."""
        record = self.record
        attempt, index = update.ref
        if attempt != record.attempts:
            return  # an earlier attempt's card is gone; its run reports through the retry's call
        call = record.blocks[index]
        assert isinstance(call, ToolCallBlock)
        if call.state in ("ran", "failed", "unknown", "rejected", "not run") and update.state in ("waiting",
                                                                                                 "running"):
            return
        if update.progress is not None or update.elicitation is not None or update.sampling is not None:
            call.progress = update.progress or call.progress  # news of the running call
            if update.elicitation is not None and update.elicitation not in call.elicitations:
                call.elicitations.append(update.elicitation)
            if update.sampling is not None and not any(s is update.sampling for s in call.samplings):
                call.samplings.append(update.sampling)
            self.emit(CallState(record.index, index, call.state))
            return
        call.state = update.state  # type: ignore[assignment]
        call.timings[update.state] = update.at
        if update.result is not None:
            call.result = update.result
        if update.not_run is not None:
            call.not_run = update.not_run
        call.reused = call.reused or update.reused
        call.key = update.key or call.key
        call.other_branch = update.other_branch or call.other_branch
        call.already_ran = update.already_ran or call.already_ran
        if update.note is not None:
            self.emit(Notice(record.index, update.note))
        self.emit(CallState(record.index, index, call.state))

    def resumed(self, update: CallUpdate) -> None:
        """The dispatcher's report on a stored call answered after a reopen (queueing it is no news)."""
        if update.state != "waiting" or update.note is not None:
            self.report(update)
