"""Approvals under Pilot: a side-effecting call stops in ``awaiting approval``
(the dispatcher's state); the card shows it and forwards the key pressed —
yes / no / always / deny with a reason; "always" is written to the config and
honoured after a restart; a crash while awaiting reopens awaiting and
answering runs the call once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from textual.widgets._footer import FooterKey

from app.files.paths import data_dir
from app.ledger import SqliteLedger
from app.settings.config import Config, load_config
from app.settings.profiles import ProviderProfile
from app.stream.history import ToolResult
from app.tui.app import CallstreamApp, make_app
from tests.conftest import ROOT
from tests.snapshots import check_snapshot
from tests.waiting import quiet, wait_for
from widgets.approval_prompt import ApprovalPrompt
from widgets.prompt_input import PromptInput
from widgets.prose import ProseBlock
from widgets.status_line import StatusLine
from widgets.tool_card import ToolCard

SIZE = (100, 40)
PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."


def demo_config() -> Config:
    config = load_config()  # the test's config file (written by "always"), if any
    config.providers = {"demo": ProviderProfile(name="demo", provider="demo", demo_speed=0.0)}
    config.default = "demo"
    return config


def app_for(conversation: str | None = None) -> CallstreamApp:
    app = make_app(config=demo_config(), conversation=conversation)
    app.cursor_blink = False
    app.clock = lambda: 0.0  # a stopped clock: the header shows no live elapsed time in a snapshot
    return app


def ticket(app: CallstreamApp) -> ToolCard | None:
    return next((c for c in app.screen.query(ToolCard) if c.block.name == "create_ticket"), None)


async def until_awaiting(app: CallstreamApp, pilot: Any) -> ToolCard:
    app.screen.query_one(PromptInput).text = PROMPT
    await pilot.press("enter")
    await wait_for(pilot, lambda: (c := ticket(app)) is not None and c.block.state == "awaiting approval",
                   "create_ticket to await approval")
    card = ticket(app)
    assert card is not None and card.approval is not None
    await wait_for(pilot, lambda: app.focused is card.approval, "the approval keys to take focus")
    return card


async def finished(app: CallstreamApp, pilot: Any) -> None:
    await wait_for(pilot, lambda: not app.session.busy, "the exchange to end")
    await quiet(pilot)


def ticket_claims() -> list[dict[str, Any]]:
    ledger = SqliteLedger(data_dir() / "callstream.db")
    try:
        return [e for e in ledger.entries() if e["tool"] == "create_ticket"]
    finally:
        ledger.close()


def results(app: CallstreamApp) -> list[ToolResult]:
    return [e for e in app.session.history if isinstance(e, ToolResult) and e.name == "create_ticket"]


async def test_yes_runs_it_once_and_the_model_reads_the_result(request: pytest.FixtureRequest) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        card = await until_awaiting(app, pilot)
        assert [c.block.state for c in app.screen.query(ToolCard)][:2] == ["ran", "ran"]  # read-only: no asking
        assert ticket_claims() == []  # nothing claimed, nothing run while it waits
        # the prose before the card written out and the footer drawn for the focused keys, as a person sees it
        await wait_for(pilot, lambda: all(p.settled for p in app.screen.query(ProseBlock))
                       and bool(app.screen.query(FooterKey)), "the screen to settle")
        await pilot.pause()
        check_snapshot(app, "awaiting_approval", request.config, mask=r"key&#160;[0-9a-f]{12}…")
        await pilot.press("y")
        await finished(app, pilot)
        assert card.block.state == "ran" and card.approval is None
        assert [e["state"] for e in ticket_claims()] == ["ran"]
        assert results(app) and not results(app)[0].is_error


async def test_no_denies_it_and_the_model_is_told() -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        card = await until_awaiting(app, pilot)
        await pilot.press("n")
        await finished(app, pilot)
        assert card.block.state == "denied"
        assert ticket_claims() == []
        assert results(app)[0].is_error and "Denied: the user did not allow this call" in results(app)[0].content
        assert "I did not open the ticket: it was not allowed." in app.session.history[-1].text  # type: ignore


async def test_waiting_for_the_users_answer_is_not_waiting_for_the_provider() -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await until_awaiting(app, pilot)
        app.clock = lambda: 20.0  # 20 s on, and no byte from the provider since: the user is who is awaited
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.detail == "20 s", "the ticker to show the turn's 20 s alone")
        assert status.state == "waiting for your approval"
        await pilot.press("y")
        await finished(app, pilot)


async def test_deny_with_a_reason_tells_the_model_why(request: pytest.FixtureRequest) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        card = await until_awaiting(app, pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "approval-reason",
                       "the reason input")
        for key in "wrong customer":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await finished(app, pilot)
        assert card.block.state == "denied"
        assert "Their reason: wrong customer" in results(app)[0].content
        assert ticket_claims() == []


async def test_full_arguments_are_one_key_away() -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        card = await until_awaiting(app, pilot)
        assert card.approval is not None
        await pilot.press("f")
        shown = str(card.approval._args.render())
        assert '"order_id": "A-1042"' in shown and card.approval._args.display
        await pilot.press("y")
        await finished(app, pilot)


async def test_always_is_written_with_its_origin_and_honoured_after_a_restart(home: Path) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await until_awaiting(app, pilot)
        await pilot.press("a")
        await finished(app, pilot)
    text = (home / "config.toml").read_text()
    assert tomllib.loads(text)["approval"]["allow"] == ["create_ticket"]
    assert '"always" in the chat' in text and "conversation" in text  # where it came from
    restarted = app_for()
    async with restarted.run_test(size=SIZE) as pilot:
        restarted.screen.query_one(PromptInput).text = PROMPT
        await pilot.press("enter")
        await finished(restarted, pilot)
        card = ticket(restarted)
        assert card is not None and card.block.state == "ran"  # not asked again
    assert [e["state"] for e in ticket_claims()] == ["ran", "ran"]  # two conversations, one run each


async def test_a_deny_rule_beats_an_always_allow(home: Path) -> None:
    (home / "config.toml").write_text('[approval]\nallow = ["create_ticket"]\ndeny = ["create_ticket"]\n')
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one(PromptInput).text = PROMPT
        await pilot.press("enter")
        await finished(app, pilot)
        card = ticket(app)
        assert card is not None and card.block.state == "denied" and card.approval is None
    assert ticket_claims() == []


async def test_a_crash_while_awaiting_reopens_awaiting_and_answering_runs_it_once() -> None:
    worker = subprocess.Popen([sys.executable, "-m", "tests.approval_worker"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    assert worker.stdout is not None
    line = worker.stdout.readline().strip()
    worker.send_signal(signal.SIGKILL)
    worker.wait(10)
    assert line.startswith("AWAITING "), worker.stderr.read() if worker.stderr else ""
    conversation = line.split()[1]
    app = app_for(conversation)
    async with app.run_test(size=SIZE) as pilot:
        card = ticket(app)
        assert card is not None and card.block.state == "awaiting approval" and card.approval is not None
        await wait_for(pilot, lambda: app.focused is card.approval, "the stored approval to take focus")
        await pilot.press("y")
        await wait_for(pilot, lambda: card.block.state == "ran", "the answered call to run")
        await finished(app, pilot)
        assert any("T-" in r.content for r in results(app))  # the model's next request carried the result
    assert [e["state"] for e in ticket_claims()] == ["ran"]
    again = app_for(conversation)  # reopened again: nothing left to answer, nothing runs twice
    async with again.run_test(size=SIZE) as pilot:
        await quiet(pilot)
        assert again.session.pending_approvals() == []
        assert not any(isinstance(w, ApprovalPrompt) for w in again.screen.query(ApprovalPrompt))
    assert [e["state"] for e in ticket_claims()] == ["ran"]
