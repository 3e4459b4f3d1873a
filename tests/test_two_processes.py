"""Two processes on one conversation (issue 12): the store allocates turn
numbers, so concurrent `ask --conversation C` never lose, share or overwrite
a turn, and the ledger never answers one process's new call with the other's
result. Real processes, a real sqlite file, the demo model on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.store import StoredTurn, StoredUser
from tests.conftest import ROOT
from tests.conversations import stored
from tests.waiting import quiet, wait_for

QUESTION = "Show me order A-1042"


@pytest.fixture
def demo_home(home: Path) -> Path:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    return home


def ask(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "app", "ask", *args, "--json"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())


def finished(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def test_two_concurrent_asks_on_one_conversation_lose_share_and_overwrite_no_turn(demo_home: Path) -> None:
    first = finished(ask(QUESTION))
    conversation = first["conversation"]
    reported = [first]
    for _ in range(5):
        pair = [ask(QUESTION, "--conversation", conversation) for _ in range(2)]
        reported += [finished(p) for p in pair]
    conv = stored(conversation)
    turns = [i for i in conv.items if isinstance(i, StoredTurn)]
    users = [i for i in conv.items if isinstance(i, StoredUser)]
    assert len(users) == 11
    numbers = [t.turn for t in turns]
    assert len(numbers) == len(set(numbers)), numbers  # no turn number twice
    expected = sorted(t["index"] for doc in reported for t in doc["turns"])
    assert sorted(numbers) == expected  # no turn missing: every turn any process ran is stored
    assert all(t.outcome == "complete" and not t.killed for t in turns)
    calls = [b for doc in reported for t in doc["turns"] for b in t["blocks"] if b["type"] == "tool_call"]
    odd = [(c.get("name"), c["state"], c.get("reused"), c.get("result")) for c in calls
           if c["state"] != "ran" or c.get("reused")]
    assert calls and not odd, odd  # no false ledger match


async def test_a_tui_with_the_conversation_open_and_an_ask_on_it(demo_home: Path) -> None:
    """The TUI has C open; an ask adds to C; the TUI's next message runs its
    own call (no false ledger match), says the conversation moved on, shows
    what the ask added, and overwrites none of it."""
    from app.settings.config import load_config
    from app.tui.app import make_app
    from widgets.note import NoteBlock
    from widgets.prompt_input import PromptInput

    conversation = finished(ask(QUESTION))["conversation"]
    app = make_app(config=load_config(), conversation=conversation)
    app.cursor_blink = False
    async with app.run_test(size=(100, 40)) as pilot:
        await quiet(pilot)  # the TUI has C open, as it was, before the ask adds to it
        other = finished(ask(QUESTION, "--conversation", conversation))
        prompt = app.screen.query_one(PromptInput)
        prompt.text = QUESTION
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session.turns and not app.session.busy, "the TUI's exchange to end")
        await quiet(pilot)
        notes = [str(n.render()) for n in app.screen.query(NoteBlock)]
        moved = "This conversation moved on in another process (2 turns added); continuing from there."
        assert moved in notes
        shown = "\n".join(str(w.render()) for w in app.screen.query("#transcript Static"))
        assert shown.count("A-1042") >= 3
        mine = [b for t in app.session.turns for b in t.blocks if b.type == "tool_call"]
        assert mine and all(b.state == "ran" and not b.reused for b in mine)
    conv = stored(conversation)
    turns = [i for i in conv.items if isinstance(i, StoredTurn)]
    numbers = [t.turn for t in turns]
    assert numbers == sorted(set(numbers)) and len(numbers) == 6
    assert {t["index"] for t in other["turns"]} <= set(numbers)
    assert {t.index for t in app.session.turns} == set(numbers[-2:])


def test_a_turn_started_after_another_process_wrote_past_it_leaves_the_head_at_the_end_of_the_line(
        tmp_path: Path) -> None:
    """The race behind two concurrent asks ending "reused": each reserves its turn, then starts its
    first attempt; the attempt's start moved the conversation's head back onto its own turn although the
    other process had written after it, so the next process loaded the line cut short there — the later
    turns off its path, "another branch", and a read-only call they made answered as reused. The head
    now stays at the end of the line. Two Store connections on one real file, as two processes hold."""
    from app.store import Store

    path = tmp_path / "callstream.db"
    a, b = Store(path), Store(path)
    try:
        a.create("c", "demo", "demo", "openai-chat")
        first = a.add_user("c", "hello")
        turn, seq = a.allocate_turn("c", first)
        a.start_turn("c", turn, 1, first)
        mine = a.add_user("c", QUESTION, seq)  # process A sends…
        theirs = b.add_user("c", QUESTION, seq)  # …and B, from the same place: after A's message, on the line
        turn_a, seq_a = a.allocate_turn("c", mine)
        turn_b, seq_b = b.allocate_turn("c", theirs)  # B reserves its turn after A's
        a.start_turn("c", turn_a, 1, mine)  # A's first attempt starts after B wrote past it
        tree = b.load("c")
        assert tree is not None
        line = [item.seq for item in tree.tree]
        assert [item.parent for item in tree.tree][1:] == line[:-1]  # one line: no entry beside another
        assert tree.head == seq_b == max(line) and len(tree.items) == len(tree.tree)  # shown whole: no branch
        assert (turn_a, turn_b) == (1, 2) and {turn_a, turn_b} <= tree.path_turns
    finally:
        a.close()
        b.close()
