"""Transcripts from other clients and to providers: hand-written samples of
Claude Code session JSONL, Codex rollout JSONL and llm's logs.db (from the
formats in research/field.md §4; see tests/data/interchange/README.md),
imported through the real command line into a real store, round-tripped
through the callstream export, and continued: the next request in every
dialect is validated as the request tests validate theirs."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from app.store import StoredTurn, StoredUser, history_of
from app.store.interchange import imported_id
from app.stream import ToolCallBlock, block_record
from app.stream.dialects import REQUEST_BUILDERS
from app.stream.jsonwrite import plain
from tests.conftest import ROOT
from tests.conversations import stored
from tests.test_transcripts import _validate

SAMPLES = ROOT / "tests" / "data" / "interchange"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def llm_db(tmp_path: Path) -> Path:
    path = tmp_path / "logs.db"
    db = sqlite3.connect(path)
    db.executescript((SAMPLES / "llm-logs.sql").read_text())
    db.close()
    return path


def sample(name: str, tmp_path: Path) -> Path:
    return llm_db(tmp_path) if name == "llm" else SAMPLES / name


def imported_ids(output: str) -> list[str]:
    return [line.split()[2] for line in output.splitlines() if line.startswith("imported conversation")]


def calls(conv: Any) -> list[ToolCallBlock]:
    return [b for e in conv.items if isinstance(e, StoredTurn) for b in e.blocks if isinstance(b, ToolCallBlock)]


EXPECTED = {
    # file: (conversation id, [(tool, state)], the note of the interrupted turn)
    "claude-code-session.jsonl": (
        imported_id("cc", "5b1c2d3e-0000-4000-8000-00000000abcd"),
        [("search_orders", "ran"), ("create_ticket", "failed"), ("create_ticket", "not run")],
        "Interrupted: the Claude Code transcript recorded no result for create_ticket; callstream did not run it."),
    "codex-rollout.jsonl": (
        imported_id("codex", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"),
        [("shell", "ran"), ("apply_patch", "ran"), ("shell", "not run")],
        "Interrupted: the Codex transcript recorded no result for shell; callstream did not run it."),
    "llm": (
        imported_id("llm", "01jq0000000000000000000001"),
        [("get_order", "ran"), ("create_ticket", "failed"), ("create_ticket", "not run")],
        "Interrupted: the llm transcript recorded no result for create_ticket; callstream did not run it."),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_a_foreign_transcript_imports_with_calls_ran_only_where_a_result_was_recorded(home: Path, tmp_path: Path,
                                                                                     name: str) -> None:
    result = cli("import", str(sample(name, tmp_path)))
    assert result.returncode == 0, result.stderr
    conversation, states, note = EXPECTED[name]
    assert conversation in imported_ids(result.stdout)
    conv = stored(conversation)
    assert [(c.name, c.state) for c in calls(conv)] == states
    interrupted = [e for e in conv.items if isinstance(e, StoredTurn) and e.note]
    assert [e.note for e in interrupted] == [note] and interrupted[0].outcome == "cut_off"
    assert all(c.result for c in calls(conv) if c.state in ("ran", "failed"))
    # the next request, in every dialect: each answered call with its result, the unrun one absent, the note carried
    history = history_of(conv)
    for dialect in REQUEST_BUILDERS:
        _, body = REQUEST_BUILDERS[dialect]("m", history, [], "sys")
        _validate(dialect, body)
        assert note in json.dumps(plain(body), ensure_ascii=False)
    # and it reopens as a conversation like any other: searchable, continuable
    assert stored(conversation).title


def test_claude_code_follows_the_leaf_s_path_and_keeps_reasoning(home: Path, tmp_path: Path) -> None:
    cli("import", str(SAMPLES / "claude-code-session.jsonl"))
    conv = stored(EXPECTED["claude-code-session.jsonl"][0])
    shown = json.dumps([block_record(b) for e in conv.items if isinstance(e, StoredTurn) for b in e.blocks])
    assert "abandoned branch" not in shown  # the rewound side branch is not on the leaf's path
    first = next(e for e in conv.items if isinstance(e, StoredTurn))
    assert [b.type for b in first.blocks] == ["reasoning", "text", "tool_call"]  # one message over three lines
    users = [e.text for e in conv.items if isinstance(e, StoredUser)]
    assert users[0].startswith("Ada Lovelace says her order is late")
    assert conv.model == "claude-sonnet-4-5"


def test_codex_skips_the_harness_and_the_display_log(home: Path) -> None:
    cli("import", str(SAMPLES / "codex-rollout.jsonl"))
    conv = stored(EXPECTED["codex-rollout.jsonl"][0])
    users = [e.text for e in conv.items if isinstance(e, StoredUser)]
    assert users == ["How many orders does Grace Hopper have open? Then note it in NOTES.md.",
                     "Now delete the old log file."]
    shell = calls(conv)[0]
    assert shell.arguments and shell.arguments["command"][-1].startswith("orders --customer")
    assert shell.result == "2\n" and conv.model == "gpt-5.1-codex"


def test_llm_imports_every_conversation_in_the_file(home: Path, tmp_path: Path) -> None:
    result = cli("import", str(llm_db(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert imported_ids(result.stdout) == [imported_id("llm", "01jq0000000000000000000001"),
                                           imported_id("llm", "01jq0000000000000000000002")]
    second = stored(imported_id("llm", "01jq0000000000000000000002"))
    assert [type(e).__name__ for e in second.items] == ["StoredUser", "StoredTurn"] and second.title


@pytest.mark.parametrize("name", list(EXPECTED))
def test_an_imported_transcript_round_trips_through_the_callstream_export(home: Path, tmp_path: Path,
                                                                          name: str) -> None:
    cli("import", str(sample(name, tmp_path)))
    conversation = EXPECTED[name][0]
    exported = cli("export", conversation, "--format", "callstream")
    assert exported.returncode == 0
    document = json.loads(exported.stdout)
    document["conversation"]["id"] = "again"
    path = tmp_path / "again.json"
    path.write_text(json.dumps(document))
    assert cli("import", str(path)).returncode == 0
    assert json.loads(cli("export", "again").stdout)["items"] == document["items"]
    assert history_of(stored("again")) == history_of(stored(conversation))


@pytest.mark.parametrize("name", list(EXPECTED))
def test_jsonl_openai_is_a_messages_array_a_provider_accepts(home: Path, tmp_path: Path, name: str) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    cli("import", str(sample(name, tmp_path)))
    printed = cli("export", EXPECTED[name][0], "--format", "jsonl-openai")
    assert printed.returncode == 0, printed.stderr
    messages = [json.loads(line) for line in printed.stdout.splitlines()]
    body = {"model": "m", "messages": messages, "stream": True}
    TypeAdapter(CompletionCreateParamsStreaming).validate_python(body)
    _validate("openai-chat", body)
    assert messages[0]["role"] == "user" and any(m["role"] == "tool" for m in messages)


def test_a_callstream_conversation_exports_as_openai_messages(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    conversation = json.loads(cli("ask", "Show me order A-1042", "--provider", "demo", "--json").stdout)[
        "conversation"]
    messages = [json.loads(line) for line in cli("export", conversation, "--format", "jsonl-openai")
                .stdout.splitlines()]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "get_order"


# -- bad input: a clear sentence, exit 2, nothing stored ---------------------------


def _nothing_stored() -> bool:
    return json.loads(cli("transcripts", "--json").stdout) == []


def test_a_damaged_line_in_the_middle_of_a_session_is_named(home: Path, tmp_path: Path) -> None:
    lines = (SAMPLES / "claude-code-session.jsonl").read_text().splitlines()
    lines.insert(3, '{"type": "assistant", "message": ')
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = cli("import", str(path))
    assert result.returncode == 2 and "line 4 is not JSON" in result.stderr and "Traceback" not in result.stderr
    assert _nothing_stored()


def test_a_session_cut_mid_write_imports_what_was_written(home: Path, tmp_path: Path) -> None:
    text = (SAMPLES / "codex-rollout.jsonl").read_text()
    path = tmp_path / "cut.jsonl"
    path.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 40])  # the last line half written
    result = cli("import", str(path), "--from", "codex")
    assert result.returncode == 0, result.stderr


def test_a_sqlite_file_that_is_not_llm_s_is_refused(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (x)")
    db.close()
    result = cli("import", str(path))
    assert result.returncode == 2 and "is this llm's logs.db" in result.stderr
    assert _nothing_stored()


def test_a_jsonl_of_no_known_format_is_refused(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": "world"}\n{"hello": "again"}\n')
    result = cli("import", str(path))
    assert result.returncode == 2 and "not a format callstream imports" in result.stderr
    assert _nothing_stored()


def test_a_json_document_that_is_not_ours_is_refused(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": "world"}\n')
    result = cli("import", str(path))
    assert result.returncode == 2 and "not a callstream transcript export" in result.stderr
    assert _nothing_stored()


def test_the_same_foreign_session_twice_is_refused_the_second_time(home: Path) -> None:
    assert cli("import", str(SAMPLES / "codex-rollout.jsonl")).returncode == 0
    again = cli("import", str(SAMPLES / "codex-rollout.jsonl"))
    assert again.returncode == 2 and "already stored" in again.stderr


def test_a_session_with_no_user_message_is_refused(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text('{"type":"session_meta","payload":{"id":"x"},"timestamp":"2026-01-01T00:00:00Z"}\n'
                    '{"type":"response_item","payload":{"type":"message","role":"assistant",'
                    '"content":[{"type":"output_text","text":"hi"}]},"timestamp":"2026-01-01T00:00:00Z"}\n')
    result = cli("import", str(path))
    assert result.returncode == 2 and "holds no user message" in result.stderr
    assert _nothing_stored()


def test_a_grown_llm_logs_db_imports_what_is_new(home: Path, tmp_path: Path) -> None:
    path = llm_db(tmp_path)
    first = cli("import", str(path))
    assert first.returncode == 0, first.stderr
    one, two, three = (imported_id("llm", f"01jq000000000000000000000{n}") for n in (1, 2, 3))
    before = stored(one)
    kept = cli("export", two).stdout
    db = sqlite3.connect(path)  # llm goes on logging: the pending call's result, a new exchange, a new conversation
    db.executescript("""
INSERT INTO responses (id, model, prompt, response, conversation_id, datetime_utc) VALUES
  ('01jq00000000000000000000r6', 'gpt-4.1-mini', '', 'Ticket T-7 is open.', '01jq0000000000000000000001',
   '2026-11-23T08:00:00'),
  ('01jq00000000000000000000r7', 'gpt-4.1-mini', 'Thanks!', 'You are welcome.', '01jq0000000000000000000001',
   '2026-11-23T08:01:00');
INSERT INTO tool_results VALUES (3, '01jq00000000000000000000r6', 2, 'create_ticket', '{"ticket": "T-7"}',
  'call_llm_3', NULL, NULL);
INSERT INTO conversations VALUES ('01jq0000000000000000000003', 'Later', 'gpt-4.1-mini');
INSERT INTO responses (id, model, prompt, response, conversation_id, datetime_utc) VALUES
  ('01jq00000000000000000000u1', 'gpt-4.1-mini', 'And in German?', 'Hallo.', '01jq0000000000000000000003',
   '2026-11-23T09:00:00');
""")
    db.commit()
    db.close()
    again = cli("import", str(path))
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert again.stdout.splitlines() == [f"imported 4 new entries into conversation {one} from llm",
                                         f"conversation {two} is up to date (nothing new in the file)",
                                         f"imported conversation {three} from llm"]
    grown = stored(one)
    old_seqs = {e.seq: e for e in before.tree}
    assert all(grown.entry(seq) is not None for seq in old_seqs)  # every entry stored before is still there…
    assert [c.state for c in calls(before)] == ["ran", "failed", "not run"]
    assert grown.entry(before.items[-1].seq).note == EXPECTED["llm"][2]  # …as it was (the pending call: not run)
    shown = [e.text if isinstance(e, StoredUser) else [b.text if b.type == "text" else (b.name, b.state)
                                                       for b in e.blocks] for e in grown.items[-5:]]
    assert shown == ["Try once more.", [("create_ticket", "ran")], ["Ticket T-7 is open."], "Thanks!",
                     ["You are welcome."]]  # the path shown is the file's, the call's result recorded beside
    turns = [e.turn for e in grown.tree if isinstance(e, StoredTurn)]
    assert len(turns) == len(set(turns))  # no turn index reused by the new branch
    assert cli("export", two).stdout == kept
    third = cli("import", str(path))
    assert third.returncode == 0 and all("up to date" in line for line in third.stdout.splitlines())
    assert len(stored(one).tree) == len(grown.tree)
