"""Conversations as trees: migration from the linear store, edit and resend,
regenerate, fork, moving between branches — and side effects across
branches stated, never silent (a real sqlite file, the real runtime, the
demo model over loopback HTTP, a real command tool process)."""

from __future__ import annotations

import asyncio
import copy
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.ledger import SqliteLedger, idempotency_key
from app.runtime.wiring import Runtime, open_runtime
from app.settings.config import Config
from app.settings.profiles import ProviderProfile
from app.settings.tools import CommandToolConfig
from app.store import Store, StoredTurn, StoredUser, export_document, history_of
from app.store.schema import SCHEMA_VERSION, SchemaError
from app.stream import ToolCallBlock, block_record
from app.stream.dialects import REQUEST_BUILDERS
from app.tools.approvals import Answer
from app.tools.builtin import CREATE_TICKET
from tests import storefaults
from tests.conftest import ROOT
from tests.test_transcripts import _validate

DATA = ROOT / "tests" / "data"
ADA = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."


def ticket_tool(tmp_path: Path) -> CommandToolConfig:
    """A side-effecting command tool standing in for ``create_ticket``: each
    run appends a line to a file and answers a new ticket number."""
    runs = tmp_path / "ticket-runs.txt"
    script = tmp_path / "ticket.py"
    script.write_text(
        "import json, sys\nfrom pathlib import Path\n"
        f"runs = Path({str(runs)!r})\nargs = json.load(sys.stdin)\n"
        "with runs.open('a') as f:\n    f.write(json.dumps(args) + '\\n')\n"
        "n = len(runs.read_text().splitlines())\n"
        "print(json.dumps({'ticket': f'T-{10000 + n}', 'order_id': args['order_id'], 'status': 'open'}))\n")
    return CommandToolConfig("create_ticket", [sys.executable, str(script)], "Open a support ticket", CREATE_TICKET,
                             read_only=False, display=[("order_id", "Order"), ("subject", "Subject")])


def runs_of(tmp_path: Path) -> int:
    runs = tmp_path / "ticket-runs.txt"
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def config(tmp_path: Path | None = None) -> Config:
    profile = ProviderProfile(name="demo", provider="demo", demo_speed=0.0)
    tools = {"create_ticket": ticket_tool(tmp_path)} if tmp_path is not None else {}
    # create_ticket runs without asking here (approvals: tests/test_approvals.py)
    return Config(providers={"demo": profile}, default="demo", tools=tools, record=False, allow=["create_ticket"])


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def calls(entries: list[Any]) -> list[ToolCallBlock]:
    return [b for e in entries if isinstance(e, StoredTurn) for b in e.blocks if isinstance(b, ToolCallBlock)]


def first_turn(runtime: Runtime, conversation: str) -> StoredTurn:
    stored = runtime.store.load(conversation)
    assert stored is not None
    return next(e for e in stored.items if isinstance(e, StoredTurn))


# -- migration -----------------------------------------------------------------


def test_a_linear_store_from_the_previous_version_migrates_with_nothing_lost(home: Path) -> None:
    """tests/data/store-v1.db was written by callstream before branches (two
    demo conversations, one with a ticket); its export beside it too."""
    path = home / "callstream.db"
    shutil.copy(DATA / "store-v1.db", path)
    before = json.loads((DATA / "store-v1.export.json").read_text())
    ledger = SqliteLedger(path)  # the runtime opens the ledger first
    store = Store(path)
    assert storefaults.schema_version(path) == SCHEMA_VERSION
    for old in before:
        conv = store.load(old["conversation"]["id"])
        assert conv is not None and len(conv.items) == len(conv.tree) == len(old["items"])
        new = export_document(conv)
        tree_keys = {"entry", "parent", "branch"}
        assert [{k: v for k, v in item.items() if k not in tree_keys} for item in new["items"]] == old["items"]
        assert [item["parent"] for item in new["items"]] == [None, *range(len(old["items"]) - 1)]
        assert conv.head == len(old["items"]) - 1
        for target in REQUEST_BUILDERS:
            _, body = REQUEST_BUILDERS[target]("m", history_of(conv), [], None)
            _validate(target, body)
    # the old ledger rows are on the main branch, and their keys are the keys they always were
    rows = ledger.entries()
    branches = store.turn_branches()
    assert rows and all(branches[(r["conversation"], r["turn"])] == "" for r in rows)
    for row in rows:
        arguments = json.loads(row["arguments"])
        assert row["key"] == idempotency_key(row["conversation"], row["turn"], row["tool"], arguments,
                                             row["occurrence"])
    # and what was already stored is searchable
    hits = store.search("Lovelace")
    assert {h.conversation for h in hits} == {before[0]["conversation"]["id"]}
    store.close()
    ledger.close()
    reopened = Store(path)  # a second open finds it migrated and leaves it alone
    assert len(reopened.list()) == 2
    reopened.close()


def test_a_store_from_a_newer_version_is_refused_untouched(home: Path) -> None:
    path = home / "callstream.db"
    shutil.copy(DATA / "store-v1.db", path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    before = list(db.iterdump())
    db.close()
    with pytest.raises(SchemaError, match="newer callstream .*schema version 99"):
        Store(path)
    db = sqlite3.connect(path)
    assert list(db.iterdump()) == before and db.execute("PRAGMA user_version").fetchone()[0] == 99
    db.close()


# -- tree operations -------------------------------------------------------------


def test_edit_and_resend_starts_a_branch_and_both_stay(home: Path) -> None:
    runtime = open_runtime(config=config())
    session = runtime.session()

    async def go() -> None:
        await session.send("Show me order A-1042")
        user = runtime.store.load(session.conversation).items[0]  # type: ignore[union-attr]
        runtime.branch_before(session, user.seq)
        await session.send("Show me order A-1043")
        await session.aclose()

    run(go())
    stored = runtime.store.load(session.conversation)
    assert stored is not None
    first, second = (e for e in stored.tree if isinstance(e, StoredUser))
    assert (first.siblings, second.siblings) == ((1, 2), (2, 2))
    assert first.parent is None and second.parent is None and second.branch != first.branch
    assert [e.seq for e in stored.items][0] == second.seq  # reopened where it was left: the edited branch
    assert history_of(stored) == session.history
    # move back to the first branch: its path, its history, as it was
    back = runtime.show(session, first.seq)
    assert back.items[0].seq == first.seq and isinstance(back.items[-1], StoredTurn)
    assert session.history[0].text == "Show me order A-1042"  # type: ignore[union-attr]
    assert runtime.store.load(session.conversation).head == back.items[-1].seq  # type: ignore[union-attr]
    runtime.close()


def test_regenerate_is_a_sibling_turn_with_its_own_turn_index(home: Path) -> None:
    runtime = open_runtime(config=config())
    session = runtime.session()

    async def go() -> None:
        await session.send("Show me order A-1042")
        turn = first_turn(runtime, session.conversation)
        runtime.branch_before(session, turn.seq)
        await session.regenerate()
        await session.aclose()

    run(go())
    stored = runtime.store.load(session.conversation)
    assert stored is not None
    user = stored.items[0]
    replies = stored.children(user.seq)
    assert [r.siblings for r in replies] == [(1, 2), (2, 2)]
    turns = [e.turn for e in stored.tree if isinstance(e, StoredTurn)]
    assert len(turns) == len(set(turns))  # no turn index twice anywhere in the tree
    assert stored.items[1].seq == replies[1].seq
    assert history_of(stored) == session.history
    runtime.close()


def test_fork_copies_the_path_into_a_new_conversation(home: Path) -> None:
    runtime = open_runtime(config=config())
    session = runtime.session()

    async def go() -> None:
        await session.send("Show me order A-1042")
        await session.send("Thanks")
        await session.aclose()

    run(go())
    source = runtime.store.load(session.conversation)
    assert source is not None
    at = next(e.seq for e in source.items if isinstance(e, StoredUser) and e.text == "Thanks") - 1
    fork = runtime.fork(session.conversation, at)
    copy = runtime.store.load(fork)
    assert copy is not None and copy.forked_from == source.id and copy.forked_at == at
    assert [_plain(e) for e in copy.items] == [_plain(e) for e in source.items[: at + 1]]
    assert runtime.store.load(source.id).tree == source.tree  # type: ignore[union-attr]
    continued = runtime.session(fork)
    assert continued.history == history_of(source.items[: at + 1])
    runtime.close()


def _plain(entry: Any) -> Any:
    if isinstance(entry, StoredUser):
        return ("user", entry.text)
    return ("turn", entry.turn, [block_record(b) for b in entry.blocks], entry.outcome)


# -- side effects across branches ----------------------------------------------------


def test_a_side_effect_regenerated_on_a_sibling_branch_is_stated_and_reads_are_reused(home: Path,
                                                                                     tmp_path: Path) -> None:
    runtime = open_runtime(config=config(tmp_path))
    session = runtime.session()
    asked: list[ToolCallBlock] = []
    answer_with(session, asked, "once")

    async def go() -> None:
        await session.send(ADA)
        assert runs_of(tmp_path) == 1 and not asked  # the config allows create_ticket: nothing asks the first time
        runtime.branch_before(session, first_turn(runtime, session.conversation).seq)
        await session.regenerate()
        await session.aclose()

    run(go())
    # running it again on the new branch is a second side effect: it asked, showing what ran on the other branch
    assert [c.name for c in asked] == ["create_ticket"] and asked[0].other_branch
    assert json.loads(asked[0].other_branch)["ticket"] == "T-10001"
    stored = runtime.store.load(session.conversation)
    assert stored is not None
    old_branch = [e for e in stored.tree if e not in stored.items]
    old_calls, new_calls = calls(old_branch), calls(stored.items)
    old_ticket = next(c for c in old_calls if c.name == "create_ticket")
    new_ticket = next(c for c in new_calls if c.name == "create_ticket")
    # the side effect: shown as having run on the other branch, with that branch's ticket, and run again
    assert json.loads(old_ticket.result or "")["ticket"] == "T-10001"
    assert new_ticket.other_branch == old_ticket.result and new_ticket.state == "ran" and not new_ticket.reused
    assert json.loads(new_ticket.result or "")["ticket"] == "T-10002" and runs_of(tmp_path) == 2
    # reads: the same searches reuse the other branch's results instead of running again
    reads = [c for c in new_calls if c.name == "search_orders"]
    assert reads and all(c.reused and c.other_branch and c.state == "ran" for c in reads)
    # the ledger holds both branches' keys for the ticket, and for the reads
    rows = [r for r in runtime.ledger.entries(session.conversation) if r["tool"] == "create_ticket"]
    assert len(rows) == 2 and rows[0]["key"] != rows[1]["key"]
    branches = runtime.store.turn_branches()
    assert [branches[(r["conversation"], r["turn"])] for r in rows] == ["", session.branch] and session.branch
    assert {old_ticket.key, new_ticket.key} == {r["key"] for r in rows}
    runtime.close()
    (home / "config.toml").write_text("")
    printed = subprocess.run([sys.executable, "-m", "app", "ledger", "--json", "--conversation", session.conversation],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    tickets = [e for e in json.loads(printed.stdout) if e["tool"] == "create_ticket"]
    assert [e["branch"] for e in tickets] == ["", session.branch]  # `callstream ledger` shows both branches' keys


def answer_with(session: Any, asked: list[ToolCallBlock], choice: str) -> None:
    """Answer every approval the session waits for with ``choice``, noting each call asked about
    (as it was when asked: its other-branch result included)."""

    def listener(event: Any) -> None:
        if type(event).__name__ != "CallState" or event.state != "awaiting approval":
            return
        call = session.turns[-1].blocks[event.index]
        asked.append(copy.copy(call))
        assert session.answer(call.key, Answer(choice))

    session.listeners.append(listener)


def test_a_side_effect_that_ran_on_another_branch_is_not_run_again_when_denied(home: Path, tmp_path: Path) -> None:
    runtime = open_runtime(config=config(tmp_path))
    session = runtime.session()
    asked: list[ToolCallBlock] = []
    answer_with(session, asked, "deny")

    async def go() -> None:
        await session.send(ADA)
        runtime.branch_before(session, first_turn(runtime, session.conversation).seq)
        await session.regenerate()
        await session.aclose()

    run(go())
    assert [c.name for c in asked] == ["create_ticket"] and runs_of(tmp_path) == 1
    stored = runtime.store.load(session.conversation)
    assert stored is not None
    ticket = next(c for c in calls(stored.items) if c.name == "create_ticket")
    assert ticket.state == "denied" and ticket.other_branch and "T-10001" in ticket.other_branch
    runtime.close()


def test_the_same_call_on_the_same_branch_is_not_another_branch(home: Path, tmp_path: Path) -> None:
    """Asking twice in one line of conversation is not another branch: nothing
    is reused across turns — but the second side effect asks first, stating
    that it already ran (one rule, whatever the config allows; issue 24 item 4)."""
    runtime = open_runtime(config=config(tmp_path))
    session = runtime.session()
    asked: list[ToolCallBlock] = []
    answer_with(session, asked, "once")

    async def go() -> None:
        await session.send(ADA)
        await session.send(ADA)
        await session.aclose()

    run(go())
    stored = runtime.store.load(session.conversation)
    assert stored is not None
    assert all(c.other_branch is None for c in calls(stored.items)) and runs_of(tmp_path) == 2
    assert [c.name for c in asked] == ["create_ticket"] and "T-10001" in (asked[0].already_ran or "")
    runtime.close()


def test_a_fork_knows_what_ran_in_the_conversation_it_came_from(home: Path, tmp_path: Path) -> None:
    runtime = open_runtime(config=config(tmp_path))
    session = runtime.session()

    async def go() -> None:
        await session.send(ADA)
        await session.aclose()

    run(go())
    user = runtime.store.load(session.conversation).items[0]  # type: ignore[union-attr]
    fork = runtime.fork(session.conversation, user.seq)  # just the question: the reply is the origin's
    forked = runtime.session(fork)
    asked: list[ToolCallBlock] = []
    answer_with(forked, asked, "once")  # a second ticket is a second side effect: it asks first

    async def again() -> None:
        await forked.regenerate()
        await forked.aclose()

    run(again())
    assert [c.name for c in asked] == ["create_ticket"]
    ticket = next(c for c in calls(runtime.store.load(fork).items)  # type: ignore[union-attr]
                  if c.name == "create_ticket")
    assert ticket.other_branch and json.loads(ticket.other_branch)["ticket"] == "T-10001"
    runtime.close()


def test_turn_indices_after_a_retry_keep_counting_from_the_whole_tree(home: Path) -> None:
    runtime = open_runtime(config=config())
    session = runtime.session()

    async def go() -> None:
        await session.send("Show me order A-1042")
        runtime.branch_before(session, first_turn(runtime, session.conversation).seq)
        await session.send("/demo cutoff")  # fails (a cut-off, retried, then given up)
        await session.aclose()

    run(go())
    reopened = runtime.session(session.conversation)

    async def retry() -> None:
        await reopened.retry_last()
        await reopened.send("Thanks")
        await reopened.aclose()

    run(retry())
    stored = runtime.store.load(session.conversation)
    assert stored is not None
    turns = [e.turn for e in stored.tree if isinstance(e, StoredTurn)]
    assert len(turns) == len(set(turns)), turns
    runtime.close()

