"""A stored call answered after a reopen (``session.resume_pending``): it is claimed under the
conversation as the team's ledger names it, as the original was, and the turn's stored note ends
saying how it ended, never "Waiting for approval" again. Real parts: ``ask`` on the demo model on
127.0.0.1, the real sqlite store and ledger; ``storefaults`` damages the file from outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.files.paths import data_dir
from app.ledger import SqliteLedger
from app.store import Store, StoredTurn, StoredUser
from tests import storefaults
from tests.conftest import run_cli
from tests.test_hardening_approvals import PROMPT, ask

TEAM = "support"


@pytest.fixture
def team_config(home: Path) -> Path:
    path = home / "config.toml"
    path.write_text(f'team = "{TEAM}"\n[providers.demo]\nprovider = "demo"\ndialect = "anthropic"\nspeed = 0\n')
    return path


def ledger_rows() -> list[dict[str, object]]:
    ledger = SqliteLedger(data_dir() / "callstream.db")
    try:
        return ledger.entries()
    finally:
        ledger.close()


def pending_ticket() -> tuple[str, StoredTurn]:
    """``ask`` with nobody to answer: create_ticket is stored ``needs approval`` under its key, and
    the turn's note says it waits."""
    code, out, err = ask(PROMPT, "demo", as_json=True)
    assert code == 1 and "Traceback" not in err, err
    conversation = str(json.loads(out)["conversation"])
    turn = stored_turn(conversation)
    assert turn.note and turn.note.startswith("Waiting for approval: create_ticket")
    return conversation, turn


def stored_turn(conversation: str, seq: int | None = None) -> StoredTurn:
    """Entry ``seq`` (default: the last turn holding a create_ticket call), as the store has it now."""
    store = Store(data_dir() / "callstream.db")
    try:
        tree = store.load(conversation)
    finally:
        store.close()
    assert tree is not None
    return next(item for item in reversed(tree.tree) if isinstance(item, StoredTurn) and item.seq == seq
                or seq is None and any(getattr(b, "name", None) == "create_ticket" for b in item.blocks))


def ticket_of(turn: StoredTurn) -> object:
    return next(b for b in turn.blocks if getattr(b, "name", None) == "create_ticket")


# -- (b): a resumed call in a team-scoped ledger is claimed as the original was ---------------------------------

def test_a_resumed_call_in_a_team_ledger_is_claimed_under_the_original_key_and_scope(team_config: Path) -> None:
    conversation, turn = pending_ticket()
    scope = f"team:{TEAM}/{conversation}"
    key = ticket_of(turn).key  # type: ignore[attr-defined]
    before = ledger_rows()
    assert before and all(row["conversation"] == scope for row in before)  # the first ask's calls: the team's
    code, out, err = ask("go ahead", "demo", conversation=conversation, as_json=True, approve="create_ticket")
    assert code == 0 and "Traceback" not in err, err
    tickets = [row for row in ledger_rows() if row["tool"] == "create_ticket"]
    assert [(row["key"], row["conversation"], row["state"]) for row in tickets] == [(key, scope, "ran")]
    assert not [row for row in ledger_rows() if row["conversation"] == conversation]  # nothing outside the scope
    assert ticket_of(stored_turn(conversation, turn.seq)).state == "ran"  # type: ignore[attr-defined]
    # the same conversation continued again: the call that ran is the ledger's, never run twice
    code, _, err = ask("thanks", "demo", conversation=conversation, as_json=True, approve="create_ticket")
    assert code == 0 and "Traceback" not in err
    assert len([row for row in ledger_rows() if row["tool"] == "create_ticket"]) == 1


# -- (c): the stored note of a resumed call's turn is the final one ----------------------------------------------

def _note_is_final(conversation: str, pending: StoredTurn, state: str, words: str) -> None:
    turn = stored_turn(conversation, pending.seq)
    call = ticket_of(turn)
    assert call.state == state and words in (call.result or "")  # type: ignore[attr-defined]
    assert turn.note is None  # the card and its result say how it ended; nothing waits
    code, out, err = run_cli("export", conversation)
    assert code == 0 and "Waiting for approval" not in out
    assert [(i.seq, i.text) for i in stored_turn_users(conversation)][:1] == [(0, PROMPT)]  # nothing saved was lost


def stored_turn_users(conversation: str) -> list[StoredUser]:
    store = Store(data_dir() / "callstream.db")
    try:
        tree = store.load(conversation)
    finally:
        store.close()
    assert tree is not None
    return [item for item in tree.tree if isinstance(item, StoredUser)]


def test_a_resumed_call_rejected_leaves_no_waiting_note(team_config: Path) -> None:
    conversation, pending = pending_ticket()
    # continued with no tools offered: the stored call is answered "rejected", not run
    code, out, err = ask("go ahead", "demo", conversation=conversation, as_json=True, approve="create_ticket",
                         no_tools=True)
    assert "Traceback" not in err, err
    assert [row for row in ledger_rows() if row["tool"] == "create_ticket"] == []
    _note_is_final(conversation, pending, "rejected", "no tools were offered")


def test_a_resumed_call_not_run_leaves_no_waiting_note(team_config: Path) -> None:
    conversation, pending = pending_ticket()
    storefaults.duplicate_a_call_key(data_dir() / "callstream.db", conversation, "create_ticket")
    code, out, err = ask("go ahead", "demo", conversation=conversation, as_json=True, approve="create_ticket")
    assert "Traceback" not in err, err
    assert [row for row in ledger_rows() if row["tool"] == "create_ticket"] == []
    _note_is_final(conversation, pending, "not run", "its stored arguments are not a valid JSON object")


def test_a_resumed_call_still_waiting_keeps_its_waiting_note(team_config: Path) -> None:
    conversation, pending = pending_ticket()
    code, _, err = ask("go ahead", "demo", conversation=conversation, as_json=True)  # no --approve: nobody answers
    assert "Traceback" not in err
    turn = stored_turn(conversation, pending.seq)
    assert ticket_of(turn).state == "needs approval"  # type: ignore[attr-defined]
    assert turn.note and turn.note.startswith("Waiting for approval: create_ticket")


def test_answered_note_keeps_the_cap_line_and_names_only_what_still_waits() -> None:
    from app.chat.turns import answered_note
    from app.rules.told import approval_note

    cap = "Only the first 8 calls of this turn were run (the max_calls_per_turn limit); 2 more were not run."
    assert answered_note(f"{approval_note(['a', 'b'])} {cap}", []) == cap
    assert answered_note(f"{approval_note(['a', 'b'])} {cap}", ["b"]) == f"{approval_note(['b'])} {cap}"
    assert answered_note(approval_note(["a"]), []) is None
    assert answered_note("Interrupted: the connection dropped.", []) == "Interrupted: the connection dropped."
    assert answered_note(None, []) is None
