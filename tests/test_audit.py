"""``callstream audit`` on synthetic streams built to contain each difference
class: it finds exactly the expected moments and the expected class."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.replay.audit import audit_recording, summarise
from app.store.recording import RecordingWriter
from tests import streamgen
from tests.conftest import ROOT

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}, "scope": {"type": "string"},
                                           "status": {"type": "string"}, "path": {"type": "string"}}}


def recording(tmp_path: Path, name: str, fragments: list[str], required: list[str], complete: bool = True,
              step: float = 0.1) -> Path:
    path = tmp_path / f"{name}.ndjson"
    clock = [0.0]
    writer = RecordingWriter(path, {"conversation": name, "dialect": "openai-chat", "provider": "t", "model": "m"},
                             clock=lambda: clock[0])
    request = {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True,
               "tools": [{"type": "function", "function": {"name": "find", "parameters": {**SCHEMA,
                                                                                         "required": required}}}]}
    writer.marker("user", {"text": "x"})
    writer.marker("turn", {"turn": 0, "request": request})
    writer.marker("attempt", {"turn": 0, "attempt": 1})
    script = [("start", 0, "c1", "find")] + [("args", 0, f) for f in fragments]
    body = streamgen.openai_chat(script, finish="tool_calls" if complete else None, done=complete)
    for frame in body.split(b"\n\n"):
        if frame:
            clock[0] += step
            writer.chunk(clock[0], frame + b"\n\n")
    writer.marker("end", {"turn": 0, "attempt": 1, "cause": "eof" if complete else "disconnect"})
    writer.close()
    return path


CASES = [
    ("value extended", ['{"status": "la', 'te"}'], ["status"], True, [1, 2]),
    ("escape resolved differently", ['{"path": "C:\\', '\\Users"}'], ["path"], True, [1, 2]),
    ("key repeated", ['{"q": "a", ', '"q": "b"}'], ["q"], True, [1, 2]),
    ("optional field added", ['{"q": "a"', ', "scope": "all"}'], ["q"], True, [1, 2]),
    ("identical", ['{"q": "a"}'], ["q"], True, [1]),
    ("never completed", ['{"q": "a", "sc'], ["q"], False, [1]),
    ("optional field added", ['{', '"q": "a"}'], [], True, [1, 2]),  # nothing required: "{" is enough
]


@pytest.mark.parametrize("klass,fragments,required,complete,moments", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_audit_finds_the_moments_and_the_class(tmp_path: Path, klass: str, fragments: list[str],
                                               required: list[str], complete: bool, moments: list[int]) -> None:
    (audit,) = audit_recording(recording(tmp_path, "case", fragments, required, complete))
    assert audit.required == required
    assert audit.moments == moments
    assert audit.klass == klass, audit.classes


def test_required_fields_that_arrive_last_leave_no_early_moment(tmp_path: Path) -> None:
    path = recording(tmp_path, "late", ['{"scope": "all", ', '"q": "x"}'], ["q"])
    (audit,) = audit_recording(path)
    assert audit.moments == [2] and audit.klass == "identical"


def test_no_required_field_ever_means_no_row(tmp_path: Path) -> None:
    assert audit_recording(recording(tmp_path, "none", ['{"scope": "all"}'], ["q"])) == []


def test_gap_is_measured_from_the_first_moment_to_the_call_end(tmp_path: Path) -> None:
    path = recording(tmp_path, "gap", ['{"status": "la', 'te', '"}'], ["status"], step=0.25)
    (audit,) = audit_recording(path)
    assert audit.gap is not None and abs(audit.gap - 1.0) < 1e-6  # 3 frames + finish + [DONE] after the first
    summary = summarise([audit])
    assert summary["gap"]["median_seconds"] == audit.gap and summary["counts"]["value extended"] == 1


def test_examples_show_only_allow_listed_fields(tmp_path: Path) -> None:
    path = recording(tmp_path, "ex", ['{"status": "la', 'te", "q": "secret-ish"}'], ["status"])
    (audit,) = audit_recording(path, display=lambda name: [("status", "Status")])
    assert audit.examples == ["find: Status: 'la' → 'late'; an unlisted field"]


def test_audit_cli_json_and_raw_captures(tmp_path: Path, home: Path) -> None:
    path = recording(tmp_path, "cli", ['{"status": "la', 'te"}'], ["status"])
    raw = ROOT / "transcripts" / "sample-openai-chat-two-searches.sse"
    result = subprocess.run([sys.executable, "-m", "app", "audit", str(path), str(raw), "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert {row["tool"] for row in document["calls"]} == {"find", "search_orders"}
    assert document["summary"]["calls"] == len(document["calls"]) == 3
    raw_rows = [row for row in document["calls"] if row["tool"] == "search_orders"]
    assert all(row["gap_seconds"] is None for row in raw_rows)  # a raw capture has no real timing
    human = subprocess.run([sys.executable, "-m", "app", "audit", str(path)], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
    assert "value extended" in human.stdout and "median" in human.stdout


def test_audit_of_a_missing_file_is_a_clear_error(home: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "app", "audit", "/nonexistent.ndjson"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 2 and "cannot read" in result.stderr


@pytest.mark.parametrize("content", [b"# notes, not a stream\n", b"\x00\x01\x02 binary", b""],
                         ids=["text", "binary", "empty"])
def test_audit_of_a_file_that_is_not_a_recording_says_so(tmp_path: Path, home: Path, content: bytes) -> None:
    good = recording(tmp_path, "good", ['{"status": "la', 'te"}'], ["status"])
    bad = tmp_path / "notes.txt"
    bad.write_bytes(content)
    result = subprocess.run([sys.executable, "-m", "app", "audit", str(good), str(bad)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "is not a recording" in result.stderr
    assert str(bad) in result.stderr


def test_audit_follows_a_model_switch(home: Path) -> None:
    from tests.test_replay import switched_conversation

    _, path, dialects = switched_conversation()
    assert dialects == ["openai-chat", "anthropic", "gemini"]
    audits = audit_recording(path)
    # the calls of every dialect are found, each read in the dialect it was streamed in (before, only the first)
    assert [(a.turn, a.name, a.final) for a in audits] == [
        (0, "get_order", {"order_id": "A-1042"}),
        (2, "search_orders", {"customer": "Grace Hopper", "status": "open"}),
        (2, "search_orders", {"customer": "Grace Hopper", "status": "shipped"}),
        (4, "get_order", {"order_id": "A-1043"})]
