"""Transcripts: saved in block shape as the turn goes, reopened intact,
interrupted turns carried forward with a note, valid history for every
provider, and a database that survives SIGKILL at any moment."""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from app.files.paths import data_dir
from app.ledger import SqliteLedger
from app.net.endpoint import Endpoint
from app.settings.config import Config
from app.store import Store, export_document, history_of
from app.stream import ToolCallBlock, block_record
from app.stream.dialects import REQUEST_BUILDERS
from app.stream.history import Assistant, ToolResult
from app.stream.jsonwrite import plain
from app.tools.registry import Registry
from tests import storefaults, streamgen
from tests.conftest import ROOT
from tests.conversations import converse, demo_config, stored
from tests.faultserver import FaultServer, Reply


def test_a_conversation_reopens_in_the_shape_it_ran(home: Path) -> None:
    session = converse(["Ada Lovelace says her order is late. Check her open and late orders and open a ticket."])
    conv = stored(session.conversation)
    turns = [i for i in conv.items if hasattr(i, "blocks")]
    assert [t.turn for t in turns] == [t.index for t in session.turns]
    for live, saved in zip(session.turns, turns, strict=True):
        assert [block_record(b) for b in saved.blocks] == [block_record(b) for b in live.blocks]
        assert saved.outcome == live.result.outcome and saved.attempts == live.attempts
    assert history_of(conv) == session.history
    assert conv.title.startswith("Ada Lovelace says her order is late")


def test_an_interrupted_turn_is_prose_plus_a_note_and_the_next_request_carries_it(home: Path) -> None:
    session = converse(["/demo truncated"])
    conv = stored(session.conversation)
    (turn,) = [i for i in conv.items if hasattr(i, "blocks")]
    note = "Interrupted: the output limit cut the reply off while create_ticket was being prepared; it was not run."
    assert turn.note == note
    call = next(b for b in turn.blocks if isinstance(b, ToolCallBlock))
    assert call.state == "not run" and call.arguments_raw  # the buffer is kept for the log and the screen
    history = history_of(conv)
    assert history[-1] == Assistant("Writing up the ticket for A-1042.", [], note)  # no call, no result
    _, body = REQUEST_BUILDERS["anthropic"]("m", history, [], None)
    assert note in body["messages"][-1]["content"][0]["text"]


def test_continuing_a_stored_conversation(home: Path) -> None:
    first = converse(["Show me order A-1042"])
    again = converse(["Thanks"], conversation=first.conversation[:10])
    assert again.conversation == first.conversation
    conv = stored(first.conversation)
    users = [i.text for i in conv.items if hasattr(i, "text") and not hasattr(i, "blocks")]
    assert users == ["Show me order A-1042", "Thanks"]
    turns = [i.turn for i in conv.items if hasattr(i, "blocks")]
    assert turns == sorted(set(turns))  # turn indices continue, never reused


SHAPES = ["complete", "rejected", "cut_off", "malformed", "truncated", "retried", "unknown"]


def _shape_session(shape: str, dialect: str, home: Path) -> str:
    """Drive one conversation into ``shape`` and return its id."""
    if shape == "complete":
        return converse(["Show me order A-1042"], demo_config(dialect)).conversation
    if shape == "rejected":
        return converse(["/demo invalid-args"], demo_config(dialect)).conversation
    if shape == "cut_off":
        return converse(["/demo cutoff"], demo_config(dialect, retries=0)).conversation
    if shape == "malformed":
        return converse(["/demo malformed"], demo_config(dialect)).conversation
    if shape == "truncated":
        return converse(["/demo truncated"], demo_config(dialect)).conversation
    if shape == "retried":
        return converse(["/demo retry-after-dispatch"], demo_config(dialect)).conversation
    # unknown: made below from a complete run, as if the process died while the tool ran
    return converse(["Show me order A-1042"], demo_config(dialect)).conversation


def _mark_unknown(conversation: str) -> None:
    """Turn the last ran call of the conversation into an interrupted run (a crash mid-tool)."""
    storefaults.interrupt_last_ran_call(data_dir() / "callstream.db", conversation)


def _validate(dialect: str, body: dict[str, Any]) -> None:
    body = plain(body)  # as the provider reads it: the OpenAI wires' arguments are written in pieces
    if dialect == "openai-chat":
        from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

        TypeAdapter(CompletionCreateParamsStreaming).validate_python(body)
        calls = [c["id"] for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])]
        results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    elif dialect == "openai-responses":
        from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

        TypeAdapter(ResponseCreateParamsStreaming).validate_python(body)
        calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
        results = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    elif dialect == "anthropic":
        from anthropic.types.message_create_params import MessageCreateParamsStreaming

        TypeAdapter(MessageCreateParamsStreaming).validate_python(body)
        roles = [m["role"] for m in body["messages"]]
        assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
        calls = [b["id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
    else:
        parts = [p for c in body["contents"] for p in c["parts"]]
        calls = [p["functionCall"]["name"] for p in parts if "functionCall" in p]
        results = [p["functionResponse"]["name"] for p in parts if "functionResponse" in p]
        assert all(c["role"] in ("user", "model") for c in body["contents"])
    assert sorted(calls) == sorted(results), (calls, results)  # no call without its result, no orphan result


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses", "anthropic", "gemini"])
@pytest.mark.parametrize("shape", SHAPES)
def test_the_next_request_from_every_stored_shape_is_valid(home: Path, dialect: str, shape: str) -> None:
    conversation = _shape_session(shape, dialect, home)
    if shape == "unknown":
        _mark_unknown(conversation)
    conv = stored(conversation)
    history = history_of(conv)
    registry = Registry.default(data_dir())
    for target in REQUEST_BUILDERS:  # a conversation may continue on any provider
        _, body = REQUEST_BUILDERS[target]("m", history + [], registry.specs(), "sys")
        _validate(target, body)
    last = [i for i in conv.items if hasattr(i, "blocks")][-1]
    if shape in ("cut_off", "malformed", "truncated"):
        assert last.note and last.note.startswith("Interrupted:")
        assert isinstance(history[-1], Assistant) and history[-1].note == last.note
    if shape == "unknown":
        unknown = [b for i in conv.items if hasattr(i, "blocks") for b in i.blocks
                   if isinstance(b, ToolCallBlock) and b.state == "unknown"]
        assert unknown and any(isinstance(e, ToolResult) and "outcome is unknown" in e.content for e in history)
    if shape == "rejected":
        assert any(isinstance(e, ToolResult) and e.is_error and "do not match its schema" in e.content
                   for e in history)


def test_files_are_user_only(home: Path) -> None:
    converse(["Show me order A-1042"])
    directory = data_dir()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    for path in directory.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


def test_no_key_is_stored(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-DO-NOT-STORE-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.openai_chat([("text", "hello")], finish="stop")))
        endpoint = Endpoint("openai-chat", server.url, "m", "test", {"Authorization": f"Bearer {key}"})
        converse(["hi"], Config(), endpoint)
        assert server.requests[0]["headers"]["authorization"] == f"Bearer {key}"
    for path in data_dir().rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


def test_sigkill_at_random_moments_leaves_a_store_that_opens(home: Path) -> None:
    rng = random.Random(20261130)
    outcomes: dict[str, int] = {"killed mid-turn": 0, "between turns": 0}
    for run in range(20):
        conversation = f"kill-{run}"
        worker = subprocess.Popen([sys.executable, "-m", "tests.kill_worker", conversation], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "started", worker.stderr.read() if worker.stderr else ""
        time.sleep(rng.uniform(0.0, 1.6))  # the scenario: a kill at a random moment, mid-turn or between turns
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
        store = Store(data_dir() / "callstream.db")  # every reopen succeeds
        conv = store.load(conversation)
        store.close()
        SqliteLedger(data_dir() / "callstream.db").close()
        if conv is None:
            continue  # killed before the first write
        turns = [i for i in conv.items if hasattr(i, "blocks")]
        for turn in turns[:-1]:
            assert not turn.killed and turn.outcome == "complete", (run, turn)  # completed turns are whole
        for turn in turns:
            for block in turn.blocks:
                if isinstance(block, ToolCallBlock):
                    assert block.state in ("ran", "failed", "rejected", "not run", "unknown"), (run, block.state)
        if turns and turns[-1].killed:
            outcomes["killed mid-turn"] += 1
            assert turns[-1].note and turns[-1].note.startswith("Interrupted: callstream stopped")
        else:
            outcomes["between turns"] += 1
        history = history_of(conv)  # and the conversation can go on
        _validate("anthropic", REQUEST_BUILDERS["anthropic"]("m", history, [], None)[1])
    assert outcomes["killed mid-turn"] >= 5, outcomes


def _big_call_conversation(size: int) -> tuple[str, str]:
    body = ("The parcel left the hub on Tuesday and has not been scanned since. " * (size // 60 + 1))[:size]
    args = json.dumps({"order_id": "A-1042", "subject": "Late parcel", "body": body, "priority": "high"})
    script = [("text", "Filing it.")] + streamgen.call_script(0, "t1", "create_ticket", args, 16)
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic(script), chunk=16384))
        server.replies.append(Reply(streamgen.anthropic([("text", "Filed.")], stop_reason="end_turn")))
        session = converse(["file it"], endpoint=Endpoint("anthropic", server.url, "m", "test"))
    return session.conversation, args


def test_a_big_call_is_stored_once_not_once_per_state(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.files import dbfile

    writes: list[int] = []
    put_text = dbfile._Connection.put_text

    def counting(self: Any, table: str, key: Any, column: str, text: str) -> None:
        if table == "call_arguments":
            writes.append(len(text))
        put_text(self, table, key, column, text)

    monkeypatch.setattr(dbfile._Connection, "put_text", counting)
    conversation, args = _big_call_conversation(1_000_000)
    # ended → waiting → running → ran → turn end: the whole buffer written once
    assert writes[-1] == len(args) and writes.count(len(args)) == 1
    # while it formed, its prefix was kept for a kill (issue 12): each flush a quarter bigger, so linear overall
    assert sum(writes) <= 5 * len(args), writes
    held = storefaults.bytes_held_for_calls(data_dir() / "callstream.db")
    assert held <= 1.2 * len(args)  # the buffer once, no parsed copy beside it
    conv = stored(conversation)
    (call,) = [b for item in conv.items if hasattr(item, "blocks") for b in item.blocks if b.type == "tool_call"]
    assert call.state == "ran" and call.final
    assert call.arguments_raw == args and call.arguments == json.loads(args)  # parsed again on load


def test_a_record_that_holds_its_buffer_inline_still_loads(home: Path) -> None:
    conversation = converse(["Show me order A-1042"]).conversation
    storefaults.inline_call_buffers(data_dir() / "callstream.db")  # the shape files written before call_arguments
    calls = [b for item in stored(conversation).items if hasattr(item, "blocks") for b in item.blocks
             if b.type == "tool_call"]
    assert calls and all(c.arguments_raw and c.arguments == json.loads(c.arguments_raw) for c in calls)


def test_sigkill_while_a_call_forms_reopens_showing_it_and_the_note_that_names_it(home: Path) -> None:
    """20 kill -9 at random moments while the create_ticket call of /demo long
    forms: each reopens with the forming call (name, raw buffer kept for the
    log), marked not run, and the whole note naming it; the export, the
    reopen and the next request agree."""
    rng = random.Random(20261201)
    note = "Interrupted: callstream stopped while create_ticket was being prepared; it was not run."
    buffers = 0
    delays = [rng.uniform(0.0, 2.0) for _ in range(20)]  # a random moment while it forms (it takes ~5 s)

    def kill_while_forming(run: int) -> None:
        worker = subprocess.Popen([sys.executable, "-m", "tests.kill_worker", f"forming-{run}", "forming"], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        assert worker.stdout is not None
        try:
            assert worker.stdout.readline().strip() == "started", worker.stderr.read() if worker.stderr else ""
            assert worker.stdout.readline().strip() == "forming"
            time.sleep(delays[run])
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:  # four at a time: each is killed relative to its own call forming
        list(pool.map(kill_while_forming, range(20)))
    for run in range(20):
        conversation = f"forming-{run}"
        conv = stored(conversation)
        assert conv is not None
        (turn,) = [i for i in conv.items if hasattr(i, "blocks")]
        assert turn.killed and turn.note == note, (run, turn.note)
        (call,) = [b for b in turn.blocks if isinstance(b, ToolCallBlock)]
        assert call.name == "create_ticket" and call.state == "not run", (run, call.state)
        assert call.result == "Not run: callstream stopped while it was being prepared."
        raw = call.arguments_raw
        assert raw == "" or raw.startswith('{"order_id": "A-1042"'), (run, raw[:40])
        buffers += bool(raw)
        exported = export_document(conv)["items"][-1]
        assert exported["note"] == note and exported["killed"]
        assert [b["state"] for b in exported["blocks"] if b["type"] == "tool_call"] == ["not run"]
        assert next(b for b in exported["blocks"] if b["type"] == "tool_call")["arguments_raw"] == raw
        history = history_of(conv)
        assert history[-1] == Assistant(turn.blocks[0].text, [], note)  # no call, no result: the note
        _, body = REQUEST_BUILDERS["anthropic"]("m", history, [], None)
        assert body["messages"][-1]["content"][0]["text"].endswith(f"[{note}]")
    assert buffers >= 10, buffers  # most kills land after some of the buffer was written


def test_ctrl_r_on_a_reopened_turn_whose_call_ran_continues_from_it(home: Path) -> None:
    """The stream dropped after the ticket was filed and the loop had no
    retries left: reopened, Ctrl+R does not regenerate that turn (the ticket
    would be written again by a sampling model); it continues from it."""
    import asyncio

    from app.demo.orders import SupportStore
    from app.runtime.wiring import open_runtime

    first = converse(["/demo retry-after-dispatch"], demo_config("anthropic", retries=0))
    assert [b.state for b in first.turns[0].blocks if isinstance(b, ToolCallBlock)] == ["ran", "not run"]
    runtime = open_runtime(config=demo_config("anthropic", retries=0))
    session = runtime.session(first.conversation)
    assert session.can_retry()

    async def retry() -> str:
        try:
            return (await session.retry_last()).status
        finally:
            await session.aclose()
            runtime.close()

    assert asyncio.run(retry()) == "done"
    assert session.turns[0].index == first.turns[-1].index + 1  # a new turn after it, not the same one again
    support = SupportStore(data_dir() / "support.db")
    try:
        assert len(support.tickets()) == 1  # filed once
    finally:
        support.close()
    conv = stored(first.conversation)
    turns = [i for i in conv.items if hasattr(i, "blocks")]
    assert [b.state for b in turns[0].blocks if isinstance(b, ToolCallBlock)] == ["ran", "not run"]
    assert turns[0].note and turns[-1].outcome == "complete"


@pytest.mark.parametrize("text", ["", "{}", "a" * 200_000, ("ñ€𝄞 " * 40_000) + "end", "x" * 65_535 + "é" * 3])
def test_a_buffer_written_in_pieces_reads_back_as_the_same_text(tmp_path: Path, text: str) -> None:
    """``dbfile.put_text`` writes a call's buffer by incremental blob I/O, a
    64 KB piece at a time (multi-byte characters on the pieces' seams
    included); it reads back, as the store reads it, as the text it was."""
    from app.files import dbfile

    db = dbfile.connect(tmp_path / "t.db")
    db.execute("CREATE TABLE call_arguments (conversation TEXT, seq INTEGER, idx INTEGER, raw TEXT NOT NULL, "
               "PRIMARY KEY (conversation, seq, idx))")
    key = {"conversation": "c", "seq": 1, "idx": 0}
    dbfile.put_text(db, "call_arguments", key, "raw", "an older, longer buffer " * 9)
    dbfile.put_text(db, "call_arguments", key, "raw", text)  # replaced, not appended to
    rows = db.execute("SELECT CAST(raw AS TEXT), LENGTH(CAST(raw AS BLOB)) FROM call_arguments").fetchall()
    assert [tuple(r) for r in rows] == [(text, len(text.encode()))]
    db.close()


def test_a_buffer_written_in_pieces_is_redacted(tmp_path: Path) -> None:
    from app.files import dbfile
    from app.stream.redact import register_secret

    secret = "sk-blob-" + "z" * 30
    register_secret(secret)
    db = dbfile.connect(tmp_path / "t.db")
    db.execute("CREATE TABLE t (id TEXT PRIMARY KEY, raw TEXT NOT NULL)")
    dbfile.put_text(db, "t", {"id": "a"}, "raw", "y" * 70_000 + secret + "y" * 70_000)
    (stored_text,) = db.execute("SELECT CAST(raw AS TEXT) FROM t").fetchone()
    db.close()
    assert secret not in stored_text and "[redacted]" in stored_text
    assert secret.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_a_not_run_reason_is_a_field_worded_once_and_old_records_read_it_back() -> None:
    """Why a call did not run is ``ToolCallBlock.not_run``; its result reads
    ``not_run_words(reason)``, so the record need not repeat it, and a record
    stored before the field was reads the same reason back."""
    from app.stream import block_from_record, not_run_words

    call = ToolCallBlock("c1", "get_order")
    call.stop("the turn ended first")
    assert (call.state, call.not_run, call.result) == ("not run", "the turn ended first",
                                                       not_run_words("the turn ended first"))
    record = block_record(call)
    assert "not_run" not in record  # the result says it
    again = block_from_record(record)
    assert again == call and again.not_run == "the turn ended first"
    old = {"type": "tool_call", "id": "c2", "name": "x", "arguments_raw": "", "state": "needs approval",
           "result": "Not run: x needs approval (nobody could be asked; --approve x allows it)."}
    assert block_from_record(old).not_run == "x needs approval (nobody could be asked; --approve x allows it)"
    assert block_from_record({**old, "state": "ran", "result": "Not run: a tool's own words."}).not_run is None
