"""Issue 24, third hardening round: nothing from a file, a stale answer or a
pattern runs a side effect the rules refuse (items 2, 3, 5). Real parts: the
demo model on 127.0.0.1, real sqlite files, the real app under Pilot."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli.ask import run_ask
from app.files.paths import data_dir
from app.ledger import SqliteLedger
from app.settings.config import Config, load_config
from app.settings.profiles import ProviderProfile
from app.store import Store
from app.tools.approvals import Approvals
from app.tools.base import Tool
from app.tui.app import CallstreamApp, make_app
from tests.waiting import quiet, screen_lines, wait_for
from widgets.tool_card import ToolCard

SIZE = (100, 40)
PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."


@pytest.fixture
def demo_config(home: Path) -> Path:
    path = home / "config.toml"
    path.write_text('[providers.demo]\nprovider = "demo"\ndialect = "anthropic"\nspeed = 0\n')
    return path


def ask(*args: str, **kwargs: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_ask(*args, out=out, err=err, **kwargs)  # type: ignore[arg-type]
    return code, out.getvalue(), err.getvalue()


def app_for(conversation: str | None = None) -> CallstreamApp:
    config: Config = load_config()  # the test's config file, as a restart reads it
    config.providers = {"demo": ProviderProfile(name="demo", provider="demo", demo_speed=0.0)}
    config.default = "demo"
    app = make_app(config=config, conversation=conversation)
    app.cursor_blink = False
    return app


def ticket(app: CallstreamApp) -> ToolCard | None:
    return next((c for c in app.screen.query(ToolCard) if c.block.name == "create_ticket"), None)


def ticket_claims() -> list[dict[str, Any]]:
    ledger = SqliteLedger(data_dir() / "callstream.db")
    try:
        return [e for e in ledger.entries() if e["tool"] == "create_ticket"]
    finally:
        ledger.close()


def stored_calls(conversation: str) -> list[tuple[str, str]]:
    store = Store(data_dir() / "callstream.db")
    try:
        tree = store.load(conversation)
        return [(b.name, b.state) for item in tree.items for b in getattr(item, "blocks", [])
                if b.type == "tool_call"]
    finally:
        store.close()


def pending_conversation() -> str:
    """``ask`` with nobody to answer: create_ticket is stored ``needs approval``."""
    code, out, err = ask(PROMPT, "demo", as_json=True)
    assert code == 1 and "Traceback" not in err, err
    return str(json.loads(out)["conversation"])


# -- item 3: deny beats everything, everywhere -----------------------------------------------------------


async def test_a_deny_rule_written_after_a_call_was_stored_beats_the_users_yes(demo_config: Path) -> None:
    conversation = await asyncio.to_thread(pending_conversation)  # ask runs its own event loop
    before = stored_calls(conversation)
    assert ("create_ticket", "needs approval") in before
    with demo_config.open("a") as handle:
        handle.write('\n[approval]\ndeny = ["create_ticket"]\n')
    app = app_for(conversation)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: (c := ticket(app)) is not None and c.approval is not None
                       and app.focused is c.approval, "the stored approval to take focus")
        card = ticket(app)
        assert card is not None
        await pilot.press("y")
        await wait_for(pilot, lambda: card.block.state == "denied", "the stored call to be denied")
        await wait_for(pilot, lambda: not app.session.busy, "the exchange to end")
        await quiet(pilot)
        assert "[approval] deny" in (card.block.result or "")
        shown = "\n".join(screen_lines(app))
        assert "denied" in shown and "Traceback" not in shown
    assert ticket_claims() == []  # never claimed, never run
    after = stored_calls(conversation)
    assert ("create_ticket", "denied") in after
    assert [c for c in after if c[0] == "search_orders"] == [c for c in before if c[0] == "search_orders"]


def test_a_deny_rule_written_after_a_call_was_stored_beats_ask_approve(demo_config: Path) -> None:
    conversation = pending_conversation()
    with demo_config.open("a") as handle:
        handle.write('\n[approval]\ndeny = ["create_ticket"]\n')
    code, out, err = ask("go ahead", "demo", conversation=conversation, as_json=True, approve="create_ticket")
    assert "Traceback" not in err
    document = json.loads(out)
    assert document["conversation"] == conversation
    assert ticket_claims() == []
    assert ("create_ticket", "denied") in stored_calls(conversation)


def _tool(name: str, approval: str | None) -> Tool:
    async def run(arguments: dict[str, object], ctx: object) -> str:
        return "ok"

    return Tool(name, "", {"type": "object"}, run, approval=approval)  # type: ignore[arg-type]


@pytest.mark.parametrize("pattern", ["*", "wire_*", "wire_?ransfer", "all"])
def test_an_approve_pattern_does_not_run_an_always_ask_tool(pattern: str) -> None:
    rules = Approvals(interactive=False, approve=[pattern])
    assert rules.decide(_tool("wire_transfer", "always-ask")) == "ask"
    assert Approvals(approve=["wire_transfer"]).decide(_tool("wire_transfer", "always-ask")) == "run"  # named
    if pattern != "all":
        assert rules.decide(_tool("wire_transfer", None)) == "run"  # a pattern still allows an ordinary tool


def test_ask_approve_star_still_asks_for_an_always_ask_tool(demo_config: Path) -> None:
    with demo_config.open("a") as handle:
        handle.write(f'\n[tools.create_ticket]\ncommand = [{json.dumps(sys.executable)}, "-c", '
                     '"print(\'{\\"ticket\\": \\"T-9\\"}\')"]\napproval = "always-ask"\n'
                     'parameters = \'{"type": "object"}\'\n')
    for pattern in ("*", "create_*"):
        code, out, err = ask(PROMPT, "demo", as_json=True, approve=pattern)
        assert code == 1 and "Traceback" not in err, err
        document = json.loads(out)
        assert "create_ticket needs approval" in document["message"]
        tickets = [b["state"] for t in document["turns"] for b in t["blocks"] if b.get("name") == "create_ticket"]
        assert tickets == ["needs approval"]
    assert ticket_claims() == []
    code, out, err = ask(PROMPT, "demo", as_json=True, approve="create_ticket")  # named exactly: the user's answer
    assert code == 0, err
    assert [e["state"] for e in ticket_claims()] == ["ran"]
