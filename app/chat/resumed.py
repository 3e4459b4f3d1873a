"""Stored calls still awaiting approval, answered in a later session (after a crash, or an ``ask``
that asked nobody): each passes the whole gate again, then runs under its stored key, so the ledger
keeps it to once; the history is rebuilt so the next request carries the results.

Its own module: only a reopened conversation whose last turn waits for an answer comes here, and the
session (``session.py``) is the loop every exchange runs through.
"""

from __future__ import annotations

from typing import Any

from ..rules.told import pending_names
from ..stream import PENDING_APPROVAL
from .events import TurnNoted
from .feed import TurnFeed
from .turns import LiveTurn, answered_note

__all__ = ["resume"]


async def resume(session: Any, answers: dict[str, Any]) -> bool:
    """Answer ``session``'s stored pending approvals (key → Answer; one not in ``answers`` is decided
    by the rules, asking nobody). True if none is left pending. (``session``: the ``ChatSession``;
    Any, as in ``sampling.py``: this module is the session's, not the other way.)"""
    from ..store import StoredTurn, history_of  # the store is read only here: not on the loop's import path
    pending = session.pending_approvals()
    if not pending:
        return True
    assert session.stored is not None
    last = session.stored.items[-1]
    assert isinstance(last, StoredTurn)
    session.turns.append(record := LiveTurn(last.turn, last.attempts, last.blocks))
    session.busy = True
    try:
        if session.offer_tools:
            await session.registry.settled()  # MCP servers still starting: their tools, or their failure
        offered = frozenset(spec.name for spec in session.registry.specs()) if session.offer_tools else frozenset()
        feed = TurnFeed(record, session._emit, session.registry, offered, session._forming, session.warming)
        dispatcher = session.dispatcher_class(session.registry, session.ledger, session.key_conversation, last.turn,
                                              feed.resumed, session.clock)
        dispatcher.approvals, dispatcher.preapproved = session.approvals, dict(answers)
        for call in pending:  # the whole gate again (a stored call is taken on trust nowhere), then its key
            feed.resume(record.blocks.index(call), call, dispatcher)
        await dispatcher.wait()
    finally:
        session.busy = False
    record.note = last.note = answered_note(last.note, pending_names(last.blocks))  # stored and told as ended
    session._emit(TurnNoted(last.turn, last.note))
    session.history = history_of(session.stored.items)  # (the path is whole: ``Store.load_path``)
    session.next_turn = max(session.next_turn, last.turn + 1)
    return not any(b.state in PENDING_APPROVAL for b in pending)
