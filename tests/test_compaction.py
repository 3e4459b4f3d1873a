"""Compaction (issue 29 item 4): the current model summarises the older part; the conversation goes on
from the summary (a note entry) and the recent turns on a new branch; nothing is lost — the original
path reopens intact, search finds both, the export carries both, the ledger keeps what ran — and a
side effect that ran before the summary, asked for again, asks first with the "already ran" warning.
On the demo model over real HTTP, through the runtime, ``ask`` and the TUI under Pilot."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from app.chat.compaction import CompactionRefused, split
from app.chat.window import estimate_tokens, room_of
from app.cli.ask import run_ask
from app.runtime.wiring import open_runtime
from app.settings.config import load_config
from app.store import StoredTurn, StoredUser, export_document, history_of, markdown_of
from app.stream.dialects import REQUEST_BUILDERS
from app.stream.history import User
from app.tools.approvals import Approvals
from app.tui.app import make_app
from tests.test_approvals import ticket_claims
from tests.test_tui import settle, still
from tests.waiting import quiet, wait_for
from widgets.note import NoteBlock
from widgets.prompt_input import PromptInput
from widgets.tool_card import ToolCard

PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."
LATER = "Show me order A-1043"


@pytest.fixture
def config_file(home: Path) -> Path:
    path = home / "config.toml"
    path.write_text('default = "demo"\n[providers.demo]\nprovider = "demo"\ndialect = "anthropic"\nspeed = 0\n'
                    '[approval]\nallow = ["create_ticket"]\n')
    return path


class _Tee(httpx.AsyncBaseTransport):
    """A real transport that keeps each request's body."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(await request.aread()))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _items(tree: Any) -> list[tuple[str, Any]]:
    """A path's entries as comparable values (what reopening it shows)."""
    return [("user", i.seq, i.text) if isinstance(i, StoredUser) else
            ("turn", i.seq, i.turn, [b.to_dict() for b in i.blocks], i.usage) for i in tree.items]


def test_compaction_goes_on_from_the_summary_and_the_recent_turns_and_loses_nothing(config_file: Path) -> None:
    runtime = open_runtime()
    session = runtime.session(approvals=Approvals.from_config(runtime.config))
    tee = _Tee()
    session._http = httpx.AsyncClient(transport=tee, follow_redirects=False)
    state: dict[str, Any] = {}

    async def go() -> None:
        try:
            await session.send(PROMPT)
            await session.send(LATER)
            state["before"] = runtime.store.load(session.conversation)
            state["claims"] = runtime.ledger.entries(session.conversation)
            state["done"] = await runtime.compact(session)
            state["room"] = room_of(session, None)
            state["sent"] = len(tee.requests)
            state["exchange"] = await session.send("Show me order A-1042")
        finally:
            await session.aclose()

    asyncio.run(go())
    try:
        before, done = state["before"], state["done"]
        older, recent = split(before.items)
        assert [i.text for i in recent if isinstance(i, StoredUser)] == [LATER]
        after = runtime.store.load(session.conversation)
        assert after is not None
        summary = after.entry(done.summary)
        assert isinstance(summary, StoredUser) and summary.kind == "summary" and summary.parent == older[-1].seq
        assert summary.text.startswith("Summary of the earlier conversation")
        # the calls that ran before it are named, through their display lists
        assert "create_ticket (Order: A-1042" in summary.text and "→ ran: Ticket: T-10001" in summary.text
        # the new branch's next request: the summary, then the recent turns, then the new message
        body = tee.requests[state["sent"]]
        from anthropic.types.message_create_params import MessageCreateParamsStreaming

        TypeAdapter(MessageCreateParamsStreaming).validate_python(body)
        told = [User(summary.text), *history_of(recent), User("Show me order A-1042")]
        _, expected = REQUEST_BUILDERS["anthropic"]("demo", told, session.registry.specs(), None)
        assert body["messages"] == expected["messages"]
        assert PROMPT not in json.dumps(body["messages"])  # the older part went in the summary's place
        assert state["exchange"].status == "done"
        # the meter after it: no count the provider made measured this history yet, so all of it is estimated
        tools = session.registry.specs()
        assert state["room"].counted == 0
        assert state["room"].used == estimate_tokens([User(summary.text), *history_of(recent)], None, tools)
        # the original path reopens intact, and the tree has both versions after the cut
        reopened = runtime.store.load(session.conversation, before.head)
        assert reopened is not None and _items(reopened) == _items(before)
        first_recent = recent[0]
        assert after.entry(first_recent.seq).siblings == (1, 2) and summary.siblings == (2, 2)
        # search finds both, the export carries both, the ledger keeps what ran (and nothing more)
        hits = {hit.seq for hit in runtime.store.search("A-1043", conversation=session.conversation)}
        copies = [i.seq for i in after.items if i.seq > done.summary and isinstance(i, StoredUser)]
        assert first_recent.seq in hits and copies[0] in hits
        exported = export_document(after)
        kinds = [i["kind"] for i in exported["items"]]
        assert kinds.count("summary") == 1 and [i.get("text") for i in exported["items"]].count(LATER) == 2
        assert "## Summary (the conversation was compacted here)" in markdown_of(after, runtime.registry.display_specs)
        claims = runtime.ledger.entries(session.conversation)
        assert [(c["key"], c["state"]) for c in claims[:len(state["claims"])]] == [
            (c["key"], c["state"]) for c in state["claims"]]
    finally:
        runtime.close()


def test_nothing_to_compact_is_said_and_changes_nothing(config_file: Path) -> None:
    code, out, err = ask(PROMPT, as_json=True)
    conversation = json.loads(out)["conversation"]
    code, out, err = ask(LATER, conversation=conversation, compact=True, as_json=True)
    assert code == 1 and "Nothing to compact" in err and "Traceback" not in err
    runtime = open_runtime()
    try:
        tree = runtime.store.load(conversation)
        assert tree is not None and not any(getattr(i, "kind", "") == "summary" for i in tree.tree)
    finally:
        runtime.close()


def test_split_keeps_the_last_exchange_whole() -> None:
    items: list[Any] = [StoredUser(0, "a"), StoredTurn(1, 0, []), StoredUser(2, "b"), StoredTurn(3, 1, [])]
    assert split(items) == (items[:2], items[2:])
    with pytest.raises(CompactionRefused):
        split(items[:2])
    summarised: list[Any] = [*items[:1], StoredUser(5, "s", kind="summary"), *items[2:]]
    with pytest.raises(CompactionRefused):  # nothing new since the last summary
        split(summarised)


def ask(*args: str, **kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_ask(*args, out=out, err=err, **kwargs)
    return code, out.getvalue(), err.getvalue()


def test_ask_compacts_and_a_side_effect_that_ran_before_the_summary_asks_again(config_file: Path) -> None:
    code, out, err = ask(PROMPT, as_json=True)
    assert code == 0, err
    conversation = json.loads(out)["conversation"]
    assert ask(LATER, conversation=conversation)[0] == 0
    assert [e["state"] for e in ticket_claims()] == ["ran"]
    code, out, err = ask(PROMPT, conversation=conversation, compact=True, as_json=True)
    assert "Compacted: " in err and "Traceback" not in err, err
    assert code == 1  # the model asked for the ticket again: nobody to ask, so it waits for approval
    document = json.loads(out)
    again = [b for t in document["turns"] for b in t["blocks"] if b.get("name") == "create_ticket"]
    assert [b["state"] for b in again] == ["needs approval"]
    assert "T-10001" in again[0]["already_ran"]  # the rule the ledger and approvals keep, unchanged
    assert [e["state"] for e in ticket_claims()] == ["ran"]  # not run a second time


def test_a_bad_compact_setting_is_a_sentence(home: Path) -> None:
    (home / "config.toml").write_text('compact = "always"\n')
    err = io.StringIO()
    assert run_ask("hi", out=io.StringIO(), err=err) == 2
    assert 'compact must be "auto" or "off"' in err.getvalue()


def test_auto_compacts_before_a_request_that_would_nearly_fill_the_window(config_file: Path) -> None:
    code, out, err = ask(PROMPT, as_json=True)
    conversation = json.loads(out)["conversation"]
    assert ask(LATER, conversation=conversation)[0] == 0
    config_file.write_text(config_file.read_text().replace('speed = 0\n', 'speed = 0\ncontext_window = 1500\n')
                           .replace('default = "demo"\n', 'default = "demo"\ncompact = "auto"\n'))
    code, out, err = ask("Show me order A-1042", conversation=conversation)
    assert code == 0 and "Compacted: " in err, err
    config_file.write_text(config_file.read_text().replace("context_window = 1500", "context_window = 1000000"))
    code, out, err = ask("Show me order A-1042", conversation=conversation)
    assert code == 0 and "Compacted" not in err  # far from the limit: nothing done


# -- the TUI ----------------------------------------------------------------------------------------------

async def _send(app: Any, pilot: Any, text: str) -> None:
    app.screen.query_one(PromptInput).text = text
    await pilot.press("enter")
    await wait_for(pilot, lambda: not app.session.busy and not app.screen.exchanges.active or any(
        c.block.state == "awaiting approval" for c in app.screen.query(ToolCard)), "the exchange")
    if not any(c.block.state == "awaiting approval" for c in app.screen.query(ToolCard)):
        await quiet(pilot)


async def test_compact_under_pilot(config_file: Path) -> None:
    app = still(make_app(config=load_config()))  # the demo speaking anthropic, create_ticket allowed
    async with app.run_test(size=(100, 40)) as pilot:
        await _send(app, pilot, PROMPT)
        await _send(app, pilot, LATER)
        before = app.runtime.store.load(app.session.conversation)
        await _send(app, pilot, "/compact")
        notes = [str(n.render()) for n in app.screen.query(NoteBlock)]
        assert any(n.startswith("Compacted: ") for n in notes), notes
        assert any(n.startswith("Summary of the earlier conversation") for n in notes)  # shown as a note
        assert app.session.branch != before.items[-1].branch
        await _send(app, pilot, PROMPT)  # the model asks for the ticket again
        cards = [c for c in app.screen.query(ToolCard) if c.block.name == "create_ticket"]
        assert cards[-1].block.state == "awaiting approval"
        warning = str(cards[-1]._other_branch.render())  # type: ignore[attr-defined]
        assert warning.startswith("⚠ already ran: ") and "T-10001" in warning
        assert [e["state"] for e in ticket_claims()] == ["ran"]
        await pilot.press("n")
        await settle(app, pilot)
    runtime = open_runtime()
    try:
        reopened = runtime.store.load(app.session.conversation, before.head)
        assert _items(reopened) == _items(before)  # the original path, intact
    finally:
        runtime.close()


def test_a_compacted_conversation_exports_and_imports_with_its_summary(config_file: Path) -> None:
    from app.store import import_document

    code, out, err = ask(PROMPT, as_json=True)
    conversation = json.loads(out)["conversation"]
    assert ask(LATER, conversation=conversation)[0] == 0
    assert ask("Show me order A-1042", conversation=conversation, compact=True)[0] == 0
    runtime = open_runtime()
    try:
        tree = runtime.store.load(conversation)
        assert tree is not None
        document = export_document(tree)
        document["conversation"]["id"] = "imported-copy"
        import_document(runtime.store, document)
        copy = runtime.store.load("imported-copy")
        assert copy is not None
        assert [getattr(i, "kind", "turn") for i in copy.tree] == [getattr(i, "kind", "turn") for i in tree.tree]
        assert history_of(copy) == history_of(tree)  # the copy tells the model the same: summary first
    finally:
        runtime.close()


async def test_auto_compaction_reads_a_window_the_table_gives_off_the_screens_thread(
        config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a model whose window only the price table knows, sent before the table is in: the window is
    read in a thread of its own (loading the table on the screen's thread froze it for a second or
    more), and the message is compacted first all the same when the window is nearly full."""
    import threading

    from app.rules import prices

    config_file.write_text(config_file.read_text().replace("speed = 0\n", 'speed = 0\nmodel = "gpt-4o"\n')
                           .replace('default = "demo"\n', 'default = "demo"\ncompact = "auto"\n'))
    readers: list[threading.Thread] = []

    def table_window(model: str, base_url: str | None) -> int | None:
        readers.append(threading.current_thread())
        return 1500 if model == "gpt-4o" else None

    monkeypatch.setattr(prices, "_LOADED", threading.Event())  # not loaded, and never by a screen's ask
    monkeypatch.setattr(prices, "preload", lambda: None)
    monkeypatch.setattr(prices, "_table_window", table_window)
    app = still(make_app(config=load_config()))
    async with app.run_test(size=(100, 40)) as pilot:
        await _send(app, pilot, PROMPT)
        await _send(app, pilot, LATER)
        assert not any(str(n.render()).startswith("Compacted") for n in app.screen.query(NoteBlock))
        await _send(app, pilot, "Show me order A-1042")
        await wait_for(pilot, lambda: not app.session.busy and not app.screen.exchanges.active, "the exchange")
        await quiet(pilot)
        notes = [str(n.render()) for n in app.screen.query(NoteBlock)]
        assert any(n.startswith("Compacted: ") for n in notes), notes
        assert app.session.history[-1].text.startswith("I found 1 order")  # type: ignore[union-attr]
    assert readers and threading.main_thread() not in readers


async def test_auto_compaction_in_the_tui_before_a_message_that_would_nearly_fill_the_window(
        config_file: Path) -> None:
    config_file.write_text(config_file.read_text().replace("speed = 0\n", "speed = 0\ncontext_window = 1500\n")
                           .replace('default = "demo"\n', 'default = "demo"\ncompact = "auto"\n'))
    app = still(make_app(config=load_config()))
    async with app.run_test(size=(100, 40)) as pilot:
        await _send(app, pilot, PROMPT)
        assert not any(str(n.render()).startswith("Compacted") for n in app.screen.query(NoteBlock))
        await _send(app, pilot, LATER)
        await _send(app, pilot, "Show me order A-1042")  # the meter is at its warning now: compact first
        await wait_for(pilot, lambda: not app.session.busy and not app.screen.exchanges.active, "the exchange")
        await quiet(pilot)
        notes = [str(n.render()) for n in app.screen.query(NoteBlock)]
        assert any(n.startswith("Compacted: ") for n in notes), notes
        assert app.session.history[-1].text.startswith("I found 1 order")  # type: ignore[union-attr]
        assert [type(e).__name__ for e in app.session.history][:1] == ["User"]
        assert app.session.history[0].text.startswith("Summary of the earlier conversation")  # type: ignore[union-attr]
