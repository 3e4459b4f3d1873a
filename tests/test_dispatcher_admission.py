"""A call waiting for the user's answer holds no run slot: the approval step
(``_admit``) comes before the slots, so calls awaiting approval never keep an
allowed call from running, and each still runs once when answered."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app.ledger import SqliteLedger
from app.tools.approvals import Answer, Approvals
from app.tools.base import Tool, ToolContext
from app.tools.dispatcher import CallUpdate, Dispatcher
from app.tools.registry import Registry
from tests.waiting import wait_until


def _registry(log: list[str]) -> Registry:
    async def asks(arguments: dict[str, Any], ctx: ToolContext) -> str:
        log.append(f"asks {arguments['n']}")
        return f"asked {arguments['n']}"

    async def free(arguments: dict[str, Any], ctx: ToolContext) -> str:
        log.append("free")
        return "free"

    return Registry([
        Tool("asks", "", {"type": "object"}, asks, read_only=True, approval="always-ask"),
        Tool("free", "", {"type": "object"}, free, read_only=True),
    ])


def _one_slot(tmp_path: Path, log: list[str], updates: list[CallUpdate]) -> Dispatcher:
    """A dispatcher with one run slot, asking the user (interactively) where a tool says to."""
    dispatcher = Dispatcher(_registry(log), SqliteLedger(tmp_path / "l.db"), "conv", 0, updates.append,
                            max_concurrent=1)
    dispatcher.approvals = Approvals(interactive=True)
    return dispatcher


def test_calls_awaiting_approval_hold_no_run_slot(tmp_path: Path) -> None:
    log: list[str] = []
    updates: list[CallUpdate] = []

    async def go() -> Dispatcher:
        dispatcher = _one_slot(tmp_path, log, updates)
        keys = [dispatcher.submit(i, "asks", {"n": i}) for i in range(3)]
        dispatcher.submit(3, "free", {})
        awaiting = lambda: {u.ref for u in updates if u.state == "awaiting approval"}  # noqa: E731
        await wait_until(lambda: awaiting() == {0, 1, 2} and "free" in log,
                     "three calls awaiting approval while the allowed one ran")
        assert log == ["free"]  # with one slot: the allowed call ran past three that wait for the user
        for key in keys:
            assert dispatcher.answer(key, Answer("once"))
        await dispatcher.wait()
        return dispatcher

    dispatcher = asyncio.run(go())
    assert sorted(log) == ["asks 0", "asks 1", "asks 2", "free"]
    assert dispatcher.runs == 4 and dispatcher.peak_running == 1
    final = {u.ref: u.state for u in updates}
    assert final == {0: "ran", 1: "ran", 2: "ran", 3: "ran"}


def test_a_cancel_while_awaiting_approval_leaves_it_not_run_and_unclaimed(tmp_path: Path) -> None:
    log: list[str] = []
    updates: list[CallUpdate] = []

    async def go() -> None:
        dispatcher = _one_slot(tmp_path, log, updates)
        dispatcher.submit(0, "asks", {"n": 0})
        await wait_until(lambda: any(u.state == "awaiting approval" for u in updates), "the call to await approval")
        dispatcher.cancel()
        await dispatcher.wait()

    asyncio.run(go())
    assert log == []
    assert updates[-1].state == "not run"
    assert SqliteLedger(tmp_path / "l.db").entries() == []
