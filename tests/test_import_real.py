"""Files written by the real programs import whole (issue 27).

tests/data/imports/ holds what Claude Code 2.1, Codex CLI 0.171 and llm
0.26/0.30/0.32/0.36 wrote when run against scripts/scripted_model.py
(scripts/make_import_corpus.py; its README says how each file was made).
For every file the test reads the SOURCE itself — plain json/sqlite here,
none of callstream's readers — and compares every user message, assistant
text, reasoning, call (id, name, arguments), result and its error flag, in
order, and the token counts, with what callstream stored; then exports it in
every format, re-imports the callstream export equal, and continues it with
``ask --conversation`` against the demo model. The tests after those pin each
defect the issue lists, one each.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.store import StoredTurn, StoredUser, history_of
from app.stream import ReasoningBlock, TextBlock, ToolCallBlock
from app.stream.dialects import REQUEST_BUILDERS
from tests.conftest import ROOT, run_cli
from tests.conversations import stored
from tests.test_transcripts import _validate

CORPUS = ROOT / "tests" / "data" / "imports"
FILES = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.suffix in (".jsonl", ".db"))

# --- the sources, read here independently --------------------------------------------------------

#: User lines Claude Code writes itself (command echoes, notifications), not what the user typed.
CLAUDE_HARNESS = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-caveat>",
                  "<task-notification>", "<system-reminder>")
CODEX_HARNESS = ("<environment_context>", "<user_instructions>", "<skills_instructions>", "# AGENTS.md")
EXIT = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)$", re.MULTILINE)


class Source:
    """What a file holds, in order: ``seq`` of (kind, …) for user, text, reasoning, call and note;
    ``results`` by call id: (text, is_error); ``usage``: summed input/output (None: never given)."""

    def __init__(self) -> None:
        self.seq: list[tuple[Any, ...]] = []
        self.results: dict[str, tuple[str, bool]] = {}
        self.notes: list[str] = []
        self.usage: dict[str, int | None] = {"input": None, "output": None}

    def add_usage(self, input_: Any, output: Any) -> None:
        for name, value in (("input", input_), ("output", output)):
            if isinstance(value, int):
                self.usage[name] = (self.usage[name] or 0) + value


def _claude_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def claude_source(path: Path) -> Source:
    out, messages = Source(), {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        message = r.get("message")
        if r.get("type") == "user" and not r.get("isMeta"):
            content = message["content"]
            if r.get("isCompactSummary"):
                out.seq.append(("note",))
                out.notes.append(_claude_text(content))
                continue
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    out.results[block["tool_use_id"]] = (_claude_text(block.get("content", "")),
                                                         bool(block.get("is_error")))
            text = _claude_text(content)
            if text and not text.lstrip().startswith(CLAUDE_HARNESS):
                out.seq.append(("user", text))
        elif r.get("type") == "assistant":
            for block in message["content"]:
                if block["type"] == "text":
                    out.seq.append(("text", block["text"]))
                elif block["type"] == "thinking":
                    out.seq.append(("reasoning", block["thinking"]))
                elif block["type"] == "tool_use":
                    out.seq.append(("call", block["id"], block["name"], block["input"]))
            messages[message["id"]] = message["usage"]
    for usage in messages.values():
        out.add_usage(usage["input_tokens"] + usage.get("cache_creation_input_tokens", 0)
                      + usage.get("cache_read_input_tokens", 0), usage["output_tokens"])
    return out


def codex_source(path: Path) -> Source:
    out = Source()
    for line in path.read_text().splitlines():
        r = json.loads(line)
        p = r.get("payload") or {}
        if r["type"] == "compacted":
            out.seq.append(("note",))
            out.notes.append(p["message"])
        elif r["type"] == "token_usage_record":
            out.add_usage(p["usage"]["input_tokens"], p["usage"]["output_tokens"])
        if r["type"] != "response_item":
            continue
        if p["type"] == "message" and p["role"] in ("user", "assistant"):
            text = "".join(c.get("text", "") for c in p["content"])
            if p["role"] == "assistant":
                out.seq.append(("text", text))
            elif not text.lstrip().startswith(CODEX_HARNESS):
                out.seq.append(("user", text))
        elif p["type"] == "reasoning":
            out.seq.append(("reasoning", "\n".join(s["text"] for s in p["summary"])))
        elif p["type"] == "function_call":
            out.seq.append(("call", p["call_id"], p["name"], json.loads(p["arguments"])))
        elif p["type"] == "custom_tool_call":
            out.seq.append(("call", p["call_id"], p["name"], {"input": p["input"]}))
        elif p["type"] in ("function_call_output", "custom_tool_call_output"):
            code = EXIT.search(p["output"].split("\nOutput:\n")[0])
            out.results[p["call_id"]] = (p["output"], bool(code and code.group(1) != "0"))
    return out


def llm_sources(path: Path) -> list[Source]:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    found: list[Source] = []
    if "threads" in tables:
        for thread in db.execute("SELECT * FROM threads ORDER BY datetime_utc"):
            out, chain, at = Source(), [], thread["tip_message_hash"]
            while at:
                message = db.execute("SELECT * FROM messages WHERE hash = ?", (at,)).fetchone()
                chain.insert(0, message)
                at = message["parent_hash"]
            for message in chain:
                for part in db.execute("SELECT * FROM parts WHERE message_hash = ? ORDER BY position",
                                       (message["hash"],)):
                    payload = json.loads(part["payload"] or "{}")
                    if part["type"] == "text":
                        out.seq.append(("user" if message["role"] == "user" else "text", part["text"]))
                    elif part["type"] == "tool_call":
                        out.seq.append(("call", payload["tool_call_id"], payload["name"], payload["arguments"]))
                    elif part["type"] == "tool_result":
                        out.results[payload["tool_call_id"]] = (payload["output"], "exception" in payload)
            for turn in db.execute("SELECT * FROM turns WHERE thread_id = ?", (thread["id"],)):
                out.add_usage(turn["input_tokens"], turn["output_tokens"])
            found.append(out)
    for conversation in db.execute("SELECT id FROM conversations ORDER BY rowid"):
        out = Source()
        for response in db.execute("SELECT * FROM responses WHERE conversation_id = ? ORDER BY datetime_utc",
                                   (conversation["id"],)).fetchall():
            for result in db.execute("SELECT * FROM tool_results WHERE response_id = ?", (response["id"],)):
                failed = "exception" in result.keys() and result["exception"]
                out.results[result["tool_call_id"]] = (result["output"] or result["exception"], bool(failed))
            if response["prompt"]:  # a chained response (results going back) has none
                out.seq.append(("user", response["prompt"]))
            if response["response"]:
                out.seq.append(("text", response["response"]))
            for call in db.execute("SELECT * FROM tool_calls WHERE response_id = ? ORDER BY id", (response["id"],)):
                out.seq.append(("call", call["tool_call_id"], call["name"], json.loads(call["arguments"])))
            out.add_usage(response["input_tokens"], response["output_tokens"])
        found.append(out)
    db.close()
    return found


def sources(name: str) -> list[Source]:
    path = CORPUS / name
    if name.startswith("llm/"):
        return llm_sources(path)
    return [codex_source(path) if name.startswith("codex/") else claude_source(path)]


# --- what callstream stored, in the same terms ----------------------------------------------------

def merged(seq: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Adjacent prose of one kind as one piece, a blank line apart (how callstream keeps it)."""
    out: list[tuple[Any, ...]] = []
    for item in seq:
        if item[0] in ("text", "reasoning") and not item[1]:
            continue
        if out and item[0] in ("text", "reasoning") and out[-1][0] == item[0]:
            out[-1] = (item[0], out[-1][1] + "\n\n" + item[1])
        else:
            out.append(item)
    return out


def segments(seq: list[tuple[Any, ...]]) -> list[str]:
    """A sequence cut at each user message, each piece as text (to compare the branches of a tree
    as a set: the source writes them one after the other, callstream the shown path first)."""
    cut: list[list[tuple[Any, ...]]] = []
    for item in seq:
        if item[0] == "user" or not cut:
            cut.append([])
        cut[-1].append(item)
    return sorted(json.dumps(piece, sort_keys=True) for piece in cut)


def shown(conv: Any, entries: list[Any] | None = None) -> Source:
    out = Source()
    for entry in conv.items if entries is None else entries:
        if isinstance(entry, StoredUser):
            out.seq.append(("user", entry.text))
            continue
        if entry.note and entry.note.startswith(("Claude Code compacted", "Codex compacted")):
            out.seq.append(("note",))
            out.notes.append(entry.note)
        for block in entry.blocks:
            if isinstance(block, TextBlock):
                out.seq.append(("text", block.text))
            elif isinstance(block, ReasoningBlock):
                out.seq.append(("reasoning", block.text))
            elif isinstance(block, ToolCallBlock):
                out.seq.append(("call", block.id, block.name, block.arguments))
                if block.state in ("ran", "failed"):
                    out.results[str(block.id)] = (str(block.result), block.state == "failed")
        if entry.usage is not None:
            out.add_usage(entry.usage.input, entry.usage.output)
    return out


def import_ids(path: Path, *extra: str) -> list[str]:
    code, printed, err = run_cli("import", str(path), *extra)
    assert code == 0, err
    return [line.split()[2] for line in printed.splitlines() if line.startswith("imported conversation")]


# --- every file of the corpus ----------------------------------------------------------------------

@pytest.mark.parametrize("name", FILES)
def test_a_real_program_s_file_imports_with_nothing_lost(home: Path, tmp_path: Path, name: str) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    ids = import_ids(CORPUS / name)
    expected_all = sources(name)
    assert len(ids) == len(expected_all)
    for conversation, expected in zip(ids, expected_all, strict=True):
        conv = stored(conversation)
        got = shown(conv, conv.tree)
        if len(conv.tree) == len(conv.items):  # one path: in order
            assert merged(got.seq) == merged(expected.seq)
        else:  # branches (a rewind): each branch's run of entries, and the shown path is the source's last
            assert segments(merged(got.seq)) == segments(merged(expected.seq))
        assert got.results == expected.results
        assert got.usage == expected.usage and expected.usage["input"] is not None
        assert all(summary.strip() in note for summary, note in zip(expected.notes, got.notes, strict=True))
        assert conv.title == next(item[1] for item in expected.seq if item[0] == "user")[:80].strip()
        # the next request in every dialect, as the request tests validate it
        for dialect in REQUEST_BUILDERS:
            _validate(dialect, REQUEST_BUILDERS[dialect]("m", history_of(conv), [], "sys")[1])
        # every export format; the callstream one re-imports equal
        for form in ("markdown", "jsonl-openai", "callstream"):
            code, printed, err = run_cli("export", conversation, "--format", form)
            assert code == 0 and printed.strip(), err
        document = json.loads(printed)
        document["conversation"]["id"] = f"again-{conversation[:20]}"
        again = tmp_path / f"{conversation[:20]}.json"
        again.write_text(json.dumps(document))
        assert run_cli("import", str(again))[0] == 0
        assert json.loads(run_cli("export", f"again-{conversation[:20]}")[1])["items"] == document["items"]
        # and it goes on in callstream
        code, printed, err = run_cli("ask", "Thanks. What is next?", "--provider", "demo",
                                     "--conversation", conversation, "--json")
        assert code == 0, err
        after = stored(conversation)
        assert [type(e) for e in after.items[len(conv.items):]] == [StoredUser, StoredTurn]
        assert after.items[len(conv.items)].parent == conv.items[-1].seq


# --- the defects of the issue, one each ------------------------------------------------------------

def test_adjacent_prose_of_one_kind_is_joined_not_a_crash() -> None:
    from app.store.interchange import Step, conversation_of

    made = conversation_of([Step("user", "hi"), Step("reasoning", "a"), Step("reasoning", "b"), Step("text", "c"),
                            Step("text", "d")], {"id": "x"}, "test")
    turn = made.entries[1]
    assert isinstance(turn, StoredTurn)
    assert [(type(b).__name__, b.text) for b in turn.blocks if isinstance(b, TextBlock | ReasoningBlock)] == [
        ("ReasoningBlock", "a\n\nb"), ("TextBlock", "c\n\nd")]


def test_claude_code_s_two_text_lines_of_one_message_are_one_text(home: Path) -> None:
    conv = stored(import_ids(CORPUS / "claude-code" / "session-tools-resume-compact.jsonl")[0])
    texts = [b.text for e in conv.items if isinstance(e, StoredTurn) for b in e.blocks if isinstance(b, TextBlock)]
    assert "Counting.\n\nWith ls -1." in texts


def test_codex_s_consecutive_messages_and_reasoning_are_joined(home: Path) -> None:
    conv = stored(import_ids(CORPUS / "codex" / "rollout-tools-resume.jsonl")[0])
    blocks = [(type(b).__name__, getattr(b, "text", "")) for e in conv.items if isinstance(e, StoredTurn)
              for b in e.blocks]
    assert ("ReasoningBlock", "Count them.\n\nWith wc.") in blocks
    assert ("TextBlock", "Counting.\n\nWith wc -l.") in blocks


def test_claude_code_parallel_results_are_kept_on_every_branch(home: Path) -> None:
    conv = stored(import_ids(CORPUS / "claude-code" / "session-tools-resume-compact.jsonl")[0])
    first = next(e for e in conv.items if isinstance(e, StoredTurn))
    calls = [(b.name, b.state) for b in first.blocks if isinstance(b, ToolCallBlock)]
    assert calls == [("Bash", "ran"), ("Read", "ran")]  # each result hangs off its own call's line


def test_claude_code_compaction_keeps_what_came_before_and_the_summary_is_a_note(home: Path) -> None:
    conv = stored(import_ids(CORPUS / "claude-code" / "session-tools-resume-compact.jsonl")[0])
    users = [e.text for e in conv.items if isinstance(e, StoredUser)]
    assert users == ["Look around this directory", "Count the notes", "After the summary, how many?"]
    assert conv.title == "Look around this directory"
    notes = [e.note for e in conv.items if isinstance(e, StoredTurn) and e.note]
    assert len(notes) == 1 and notes[0].startswith("Claude Code compacted the conversation here")


def test_claude_code_command_echoes_and_meta_lines_are_left_out(home: Path) -> None:
    conv = stored(import_ids(CORPUS / "claude-code" / "session-tools-resume-compact.jsonl")[0])
    said = json.dumps([e.text for e in conv.items if isinstance(e, StoredUser)])
    assert "command-name" not in said and "local-command" not in said and "system-reminder" not in said


def test_claude_code_errors_and_refusals_are_failed_calls(home: Path) -> None:
    conv = stored(import_ids(CORPUS / "claude-code" / "session-tools-resume-compact.jsonl")[0])
    failed = {b.name: b.result for e in conv.items if isinstance(e, StoredTurn) for b in e.blocks
              if isinstance(b, ToolCallBlock) and b.state == "failed"}
    assert set(failed) == {"Bash", "Write"} and "haven't granted it" in str(failed["Write"])


def test_a_subagent_file_imports_beside_its_parent_session(home: Path) -> None:
    parent = import_ids(CORPUS / "claude-code" / "session-subagent.jsonl")
    agent = import_ids(next((CORPUS / "claude-code" / "session-subagent" / "subagents").glob("*.jsonl")))
    assert parent != agent and stored(agent[0]).title.startswith("SUBTASK")


def test_a_call_killed_while_it_ran_is_not_run_with_its_note(home: Path) -> None:
    for name in ("claude-code/session-killed.jsonl", "codex/rollout-killed.jsonl"):
        conv = stored(import_ids(CORPUS / name)[0])
        turn = [e for e in conv.items if isinstance(e, StoredTurn)][-1]
        assert turn.outcome == "cut_off" and turn.note and "recorded no result" in turn.note
        assert [b.state for b in turn.blocks if isinstance(b, ToolCallBlock)] == ["not run"]


def test_codex_compaction_is_a_note_and_custom_tool_calls_come_through(home: Path) -> None:
    conv = stored(import_ids(CORPUS / "codex" / "rollout-compacted.jsonl")[0])
    assert any(e.note and e.note.startswith("Codex compacted") for e in conv.items if isinstance(e, StoredTurn))
    conv = stored(import_ids(CORPUS / "codex" / "rollout-tools-resume.jsonl")[0])
    patch = next(b for e in conv.items if isinstance(e, StoredTurn) for b in e.blocks
                 if isinstance(b, ToolCallBlock) and b.name == "apply_patch")
    assert patch.state == "ran" and "Add File: added.txt" in str(patch.arguments)


def test_codex_usage_falls_back_to_token_count_events(home: Path, tmp_path: Path) -> None:
    """A rollout without token_usage_record lines (Codex before them) has its usage from token_count."""
    lines = (CORPUS / "codex" / "rollout-tools-resume.jsonl").read_text().splitlines()
    older = tmp_path / "older.jsonl"
    older.write_text("\n".join(line for line in lines if '"type":"token_usage_record"' not in line) + "\n")
    assert older.read_text().count("token_usage_record") == 0
    expected = shown(stored(import_ids(CORPUS / "codex" / "rollout-tools-resume.jsonl")[0])).usage
    assert shown(stored(import_ids(older, "--as-new")[0])).usage == expected


def test_llm_0_32_and_later_threads_are_found(home: Path) -> None:
    for version in ("0.32", "0.36"):
        path = CORPUS / "llm" / f"logs-{version}.db"  # committed: a corpus file missing is a failure, not a skip
        ids = import_ids(path)
        assert len(ids) == 2 and stored(ids[0]).title == "What time is it?"


def test_llm_0_26_without_an_exception_column_imports(home: Path) -> None:
    db = sqlite3.connect(CORPUS / "llm" / "logs-0.26.db")
    assert "exception" not in {r[1] for r in db.execute("PRAGMA table_info(tool_results)")}
    db.close()
    conv = stored(import_ids(CORPUS / "llm" / "logs-0.26.db")[0])
    assert any(isinstance(b, ToolCallBlock) and b.name == "fail" and b.result for e in conv.items
               if isinstance(e, StoredTurn) for b in e.blocks)


def test_usage_is_absent_where_the_source_gave_none_never_0(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "logs.db"
    shutil.copy(CORPUS / "llm" / "logs-0.30.db", path)
    db = sqlite3.connect(path)
    db.execute("UPDATE responses SET input_tokens = NULL, output_tokens = NULL")
    db.commit()
    db.close()
    for conversation in import_ids(path):
        assert all(e.usage is None for e in stored(conversation).items if isinstance(e, StoredTurn))


def test_a_rewound_claude_code_session_is_a_tree_with_the_current_path_as_head(home: Path) -> None:
    conv = stored(import_ids(CORPUS / "claude-code" / "session-rewound.jsonl")[0])
    assert [e.text for e in conv.items if isinstance(e, StoredUser)] == ["First question", "Instead, answer again"]
    assert [e.text for e in conv.tree if isinstance(e, StoredUser)] == ["First question", "Instead, answer again",
                                                                       "Second question"]
    second = next(e for e in conv.tree if isinstance(e, StoredUser) and e.text == "Second question")
    assert second.parent == conv.items[1].seq  # it follows the first answer, beside the rewind
    branch = [e for e in conv.tree if e.seq > second.seq]
    assert [b.state for e in branch if isinstance(e, StoredTurn) for b in e.blocks
            if isinstance(b, ToolCallBlock)] == ["ran"]


def test_imported_ids_are_unique_in_the_12_characters_transcripts_shows(home: Path) -> None:
    ids = [i for name in FILES for i in import_ids(CORPUS / name)]
    assert len({i[:12] for i in ids}) == len(ids)
    for conversation in ids:
        code, printed, _ = run_cli("export", conversation[:12], "--format", "callstream")
        assert code == 0 and json.loads(printed)["conversation"]["id"] == conversation


def test_the_same_file_twice_is_refused_with_a_sentence_and_as_new_imports_it(home: Path) -> None:
    path = CORPUS / "claude-code" / "session-killed.jsonl"
    first = import_ids(path)
    code, _, err = run_cli("import", str(path))
    assert code != 0 and "already stored" in err and "Traceback" not in err
    assert import_ids(path, "--as-new") != first


def test_a_newer_version_s_unknown_lines_import_what_they_can_and_say_what_was_skipped(home: Path,
                                                                                       tmp_path: Path) -> None:
    lines = (CORPUS / "claude-code" / "session-killed.jsonl").read_text().splitlines()
    newer = []
    for line in lines:
        record = json.loads(line)
        if record.get("type") == "assistant":
            record["message"]["content"].append({"type": "hologram", "data": "?"})
            record["newField"] = {"from": "a later version"}
        newer.append(json.dumps(record))
    newer.append(json.dumps({"type": "timeline-marker", "uuid": "x", "at": 1}))
    path = tmp_path / "newer.jsonl"
    path.write_text("\n".join(newer) + "\n")
    code, printed, err = run_cli("import", str(path))
    assert code == 0, err
    assert "'timeline-marker'" in printed and "'hologram'" in printed and "left out" in printed
    conversation = printed.split()[2]
    assert [e.text for e in stored(conversation).items if isinstance(e, StoredUser)] == ["Wait for it"]


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(st.sampled_from(["type", "uuid", "parentUuid", "logicalParentUuid", "message",
                                                 "payload", "isMeta", "isCompactSummary", "sessionId"]),
                                st.one_of(st.none(), st.text(max_size=5), st.integers(),
                                          st.sampled_from(["user", "assistant", "system", "response_item",
                                                           "compacted", "a", "b"]),
                                          st.fixed_dictionaries({"content": st.one_of(st.text(max_size=5), st.lists(
                                              st.dictionaries(st.sampled_from(["type", "text", "id", "input"]),
                                                              st.text(max_size=4), max_size=3), max_size=3))}))),
                max_size=8))
def test_any_json_lines_import_or_are_refused_with_a_sentence(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    from app.store.interchange import ImportError_, read_foreign

    path = tmp_path / "any.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    for form in ("claude-code", "codex"):
        try:
            read_foreign(path, form)
        except ImportError_ as exc:
            assert str(exc)


def test_a_newer_codex_s_unknown_items_import_what_they_can_and_say_what_was_skipped(home: Path,
                                                                                   tmp_path: Path) -> None:
    lines = (CORPUS / "codex" / "rollout-killed.jsonl").read_text().splitlines()
    lines.insert(3, json.dumps({"timestamp": "2026-12-02T00:00:00Z", "type": "response_item",
                                "payload": {"type": "tool_search_call", "query": "?"}}))
    lines.append(json.dumps({"timestamp": "2026-12-02T00:00:01Z", "type": "memory_record", "payload": {}}))
    path = tmp_path / "newer.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, printed, err = run_cli("import", str(path))
    assert code == 0, err
    assert "'tool_search_call'" in printed and "'memory_record'" in printed and "left out" in printed
    conversation = printed.split()[2]
    assert [e.text for e in stored(conversation).items if isinstance(e, StoredUser)] == ["Wait for it"]
