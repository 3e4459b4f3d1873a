"""Issue 24, item 22: the small ones. A ``[recordings]`` limit that is
``nan``, ``inf`` or negative; a control character in an imported title;
``mcp list --json`` and a server's own words; ``ask`` and a side effect
repeated from another branch."""

from __future__ import annotations

import json
import sqlite3
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."
DEMO = '[providers.demo]\nprovider = "demo"\nspeed = 0\n'



def _asked(home: Path) -> str:
    """One conversation saved by ``ask`` with the demo model (its ticket ran); its id."""
    (home / "config.toml").write_text(DEMO)
    code, _, err = run_cli("ask", PROMPT, "--approve", "create_ticket")
    assert code == 0, err
    code, listing, _ = run_cli("transcripts", "--json")
    return str(json.loads(listing)[0]["id"])


@pytest.mark.parametrize("key, value, said", [("max_mb", "nan", "must be a positive number, not nan"),
                                              ("max_mb", "inf", "must be a positive number, not inf"),
                                              ("max_mb", "-inf", "must be a positive number, not -inf"),
                                              ("max_mb", "-5", "must be a positive number"),
                                              ("max_age_days", "nan", "must be a positive number, not nan")])
def test_a_recordings_limit_that_is_nan_inf_or_negative_is_refused_with_a_sentence(home: Path, key: str, value: str,
                                                                                    said: str) -> None:
    conversation = _asked(home)
    recordings = sorted((home / "home" / "recordings").iterdir())
    assert recordings
    (home / "config.toml").write_text(f"[recordings]\n{key} = {value}\n\n" + DEMO)
    for argv in (["ask", "hello"], ["ledger"]):
        code, out, err = run_cli(*argv)
        assert code == 2, (argv, out, err)
        assert f"recordings.{key} {said} (leave it out for no limit)" in err and "Traceback" not in err
    assert sorted((home / "home" / "recordings").iterdir()) == recordings  # nothing pruned by a limit that is none
    (home / "config.toml").write_text(DEMO)
    code, listing, _ = run_cli("transcripts", "--json")
    assert code == 0 and [row["id"] for row in json.loads(listing)] == [conversation]


def test_a_control_character_in_an_imported_title_cannot_forge_a_row(home: Path, tmp_path: Path) -> None:
    conversation = _asked(home)
    code, exported, _ = run_cli("export", conversation, "--format", "json")
    document = json.loads(exported)
    forged = "Refund\n0123456789ab  2026-01-01 00:00  forged-model          1 turn  FORGED"
    document["conversation"]["title"] = forged + "\r\x1b[2J\u202egnp.exe\x9b31m\x00 end"
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps(document))
    code, out, err = run_cli("import", str(source), "--as-new")
    assert code == 0 and "Traceback" not in err, err
    code, listing, _ = run_cli("transcripts", "--json")
    titles = {row["id"]: row["title"] for row in json.loads(listing)}
    imported = next(t for i, t in titles.items() if i != conversation)
    assert imported.startswith("Refund 0123456789ab 2026-01-01 00:00 forged-model 1 turn FORGED ")
    assert "\n" not in imported and "\r" not in imported  # one line (other controls are printed inert)
    # a title stored with a newline before imports were cleaned still prints as one row
    with sqlite3.connect(home / "home" / "callstream.db") as db:
        db.execute("UPDATE conversations SET title = ? WHERE id = ?", ("Old\u202e\x9b" + forged[6:], conversation))
    code, out, err = run_cli("transcripts")
    assert code == 0 and "Traceback" not in err
    rows = out.splitlines()
    assert len(rows) == 4  # the heading, one row per conversation, the note on ids
    assert sum(1 for row in rows if " 0123456789ab 2026-01-01 00:00 forged-model" in row) == 2
    assert not any(row.startswith("0123456789ab") for row in rows)
    assert "\u202e" not in out and "\x9b" not in out and "\x1b" not in out and "Old\\u202e\\x9b 0123" in out
    code, _, _ = run_cli("export", conversation, "--format", "json")
    assert code == 0  # both conversations are all there
    assert len(titles) == 2


def test_mcp_list_json_writes_no_raw_bidi_or_c1_character_and_redacts_the_reason(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "tok-" + uuid.uuid4().hex
    monkeypatch.setenv("HOSTILE_TOKEN", token)
    (home / "config.toml").write_text(f"""
[mcp.hostile]
command = {json.dumps(sys.executable)}
args = ["-m", "tests.mcp_echo", "fail", "\\u202egnp.exe", "\\u009b31m", "Authorization: Bearer abcdefgh12345678"]
cwd = {json.dumps(str(ROOT))}
env = {{ ECHO_TOKEN = "${{HOSTILE_TOKEN}}" }}
startup_timeout = 60
""")
    code, out, err = run_cli("mcp", "list", "--json")
    assert code == 1 and "Traceback" not in err
    assert "\u202e" not in out and "\x9b" not in out and "\\u202e" in out and "\\u009b" in out
    status = json.loads(out)[0]
    assert status["name"] == "hostile" and status["state"] == "failed"
    assert "token [redacted] is expired" in status["reason"] and "\u202egnp.exe" in status["reason"]
    assert "Bearer [redacted]" in status["reason"]
    assert token not in out + err and "abcdefgh12345678" not in out + err


def test_ask_says_a_side_effect_repeated_from_another_branch_ran_there(home: Path) -> None:
    original = _asked(home)
    code, out, err = run_cli("fork", original, "--at", "0", "--json")
    assert code == 0, err
    fork = json.loads(out)["conversation"]
    code, out, err = run_cli("ask", PROMPT, "--conversation", fork, "--approve", "create_ticket")
    assert code == 0 and "Traceback" not in err, err
    assert "⚙ create_ticket · ran · Order: A-1042" in out and "→ Ticket: T-10002" in out
    assert "    ⚠ ran on another branch: Ticket: T-10001 · Order: A-1042 · Status: open · Priority: high" in out
    assert "another branch" not in out.split("⚙ create_ticket")[0]  # the reads reused are not side effects
    code, exported, _ = run_cli("export", fork, "--format", "markdown")
    assert "⚠ ran on another branch" in exported  # as export says it
    code, exported, _ = run_cli("export", original, "--format", "json")
    assert code == 0 and '\\"ticket\\": \\"T-10001\\"' in exported  # the original keeps its ticket
