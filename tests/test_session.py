"""The conversation loop over real HTTP: retries, stated failures, the
interruption note, cancellation, and exactly-once across retries."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.chat.events import AttemptFailed, AttemptStarted, BlockOpened, ChatEvent, ExchangeDone
from app.chat.session import ChatSession
from app.ledger import SqliteLedger
from app.net.endpoint import Endpoint
from app.net.stream import Timeouts
from app.settings.config import Config
from app.settings.tools import CommandToolConfig
from app.store import StoredTurn, history_of
from app.stream import BlockAdded, BlockChanged, CallClosed, ToolCallBlock, Update
from app.stream.history import Assistant, CallRecord, ToolResult, User
from app.tools.base import Tool, ToolContext
from app.tools.dispatcher import CANCELLED_UNKNOWN
from app.tools.registry import Registry
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.waiting import wait_until


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with FaultServer() as srv:
        yield srv


def session_for(server: FaultServer, tmp_path: Path, dialect: str = "anthropic", registry: Registry | None = None,
                **kwargs: Any) -> ChatSession:
    endpoint = Endpoint(dialect, server.url, "m", "test")
    return ChatSession(endpoint, registry or Registry.default(tmp_path), SqliteLedger(tmp_path / "ledger.db"), "conv-1",
                       backoff=0.01, timeouts=Timeouts(2.0, 2.0, 10.0), **kwargs)


def send(session: ChatSession, text: str, events: list[ChatEvent] | None = None) -> ExchangeDone:
    if events is not None:
        session.listeners.append(events.append)

    async def go() -> ExchangeDone:
        try:
            return await session.send(text)
        finally:
            await session.aclose()

    return asyncio.run(go())


TEXT_ONLY = [("text", "Hello there.")]
ORDER_CALL = [("text", "Checking. ")] + streamgen.call_script(0, "t1", "get_order", '{"order_id": "A-1042"}')


def test_a_plain_reply(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(streamgen.anthropic(TEXT_ONLY, stop_reason="end_turn")))
    session = session_for(server, tmp_path)
    assert send(session, "hi").status == "done"
    assert session.history == [User("hi"), Assistant("Hello there.")]


def test_a_call_runs_and_its_result_goes_into_the_next_request(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL)))
    server.replies.append(Reply(streamgen.anthropic([("text", "It is late.")], stop_reason="end_turn")))
    session = session_for(server, tmp_path)
    assert send(session, "where is A-1042?").status == "done"
    second = server.requests[1]["body"]["messages"]
    assert second[1]["content"][1] == {"type": "tool_use", "id": "t1", "name": "get_order",
                                        "input": {"order_id": "A-1042"}}
    result = second[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "t1"
    assert json.loads(result["content"])["order"]["customer"] == "Ada Lovelace"
    call = session.turns[0].blocks[1]
    assert call.state == "ran" and set(call.timings) >= {"waiting", "running", "ran"}


def test_429_then_success_retries_with_a_note(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(b'{"error":{"message":"slow down"}}', status=429, headers={"Retry-After": "0"}))
    server.replies.append(Reply(streamgen.anthropic(TEXT_ONLY, stop_reason="end_turn")))
    events: list[ChatEvent] = []
    session = session_for(server, tmp_path)
    assert send(session, "hi", events).status == "done"
    notes = [e.message for e in events if isinstance(e, AttemptFailed)]
    assert notes == ["Attempt 1 failed: HTTP 429: slow down. Retrying in 0.0 s."]
    assert session.turns[0].attempts == 2


def test_a_4xx_is_not_retried_and_shows_the_provider_message(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(b'{"error":{"message":"model not found: m"}}', status=404))
    session = session_for(server, tmp_path)
    done = send(session, "hi")
    assert done.status == "failed" and len(server.requests) == 1
    assert session.turns[0].result.error == "HTTP 404: model not found: m"  # type: ignore[union-attr]


def test_a_cut_off_retry_replaces_the_failed_attempts_prose(server: FaultServer, tmp_path: Path) -> None:
    first = streamgen.anthropic([("text", "Half a thought")], stop_reason=None, stop=False)
    server.replies.append(Reply(first, cut_at=len(first)))
    server.replies.append(Reply(streamgen.anthropic([("text", "A whole thought.")], stop_reason="end_turn")))
    events: list[ChatEvent] = []
    session = session_for(server, tmp_path)
    assert send(session, "hi", events).status == "done"
    assert [e.attempt for e in events if isinstance(e, AttemptStarted)] == [1, 2]
    assert [b.text for b in session.turns[0].blocks] == ["A whole thought."]
    assert session.history[-1] == Assistant("A whole thought.")


def test_retries_exhausted_is_a_stated_failure_with_the_note(server: FaultServer, tmp_path: Path) -> None:
    body = streamgen.anthropic([("text", "Filing it. ")] + streamgen.call_script(0, "t1", "create_ticket",
                                                                              '{"order_id": "A-1042", "subj'),
                               stop_reason=None, stop=False)
    for _ in range(3):
        server.replies.append(Reply(body, cut_at=len(body)))
    session = session_for(server, tmp_path, retries=2)
    done = send(session, "file a ticket")
    assert done.status == "failed" and len(server.requests) == 3
    note = "Interrupted: the connection dropped while create_ticket was being prepared; it was not run."
    assert session.turns[0].note == note
    assert session.history[-1] == Assistant("Filing it. ", [], note)  # prose + note, no call, no result
    call = session.turns[0].blocks[1]
    assert call.state == "not run"


def test_truncated_and_malformed_are_not_retried(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL[:3], stop_reason="max_tokens")))
    session = session_for(server, tmp_path)
    assert send(session, "x").status == "failed" and len(server.requests) == 1
    assert session.turns[0].note and "output limit" in session.turns[0].note


def test_schema_rejection_is_answered_in_band_and_the_conversation_goes_on(server: FaultServer,
                                                                          tmp_path: Path) -> None:
    bad = streamgen.call_script(0, "t1", "create_ticket", '{"order_id": 1042}')
    server.replies.append(Reply(streamgen.anthropic(bad)))
    server.replies.append(Reply(streamgen.anthropic([("text", "Sorry.")], stop_reason="end_turn")))
    session = session_for(server, tmp_path)
    assert send(session, "x").status == "done"
    call = session.turns[0].blocks[0]
    assert call.state == "rejected" and "is not of type 'string'" in (call.result or "")
    tool_result = server.requests[1]["body"]["messages"][2]["content"][0]
    assert tool_result["is_error"] is True and "Nothing was run" in tool_result["content"]


def test_cancel_mid_stream_is_a_stated_failure(server: FaultServer, tmp_path: Path) -> None:
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL), chunk=20, delay=0.2))
    session = session_for(server, tmp_path)
    opened: list[ChatEvent] = []
    session.listeners.append(lambda e: opened.append(e) if isinstance(e, BlockOpened) else None)

    async def go() -> ExchangeDone:
        task = asyncio.create_task(session.send("x"))
        # the call is announced; its arguments are still streaming, a chunk every 0.2 s
        await wait_until(lambda: any(e.block.type == "tool_call" for e in opened), "the call to be announced")
        session.cancel()
        try:
            return await task
        finally:
            await session.aclose()

    done = asyncio.run(go())
    assert done.status == "cancelled"
    assert session.turns[0].note and session.turns[0].note.startswith("Interrupted: the turn was cancelled")
    assert all(b.state == "not run" for b in session.turns[0].blocks if b.type == "tool_call")


def _cancel_while_running(server: FaultServer, tmp_path: Path, read_only: bool) -> tuple[ChatSession, list[int]]:
    started = asyncio.Event()
    runs: list[int] = []

    async def slow(arguments: dict[str, Any], ctx: ToolContext) -> str:
        runs.append(1)
        started.set()
        await asyncio.Event().wait()  # the scenario: a tool still running when the turn is cancelled
        return "never"

    registry = Registry([Tool("get_order", "", {"type": "object"}, slow, read_only=read_only)])
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL)))
    session = session_for(server, tmp_path, registry=registry)

    async def go() -> ExchangeDone:
        task = asyncio.create_task(session.send("x"))
        await asyncio.wait_for(started.wait(), 10)
        session.cancel()
        try:
            return await task
        finally:
            await session.aclose()

    assert asyncio.run(go()).status == "cancelled"
    return session, runs


def test_a_read_only_tool_cancelled_while_it_ran_is_failed_cancelled(server: FaultServer, tmp_path: Path) -> None:
    session, _ = _cancel_while_running(server, tmp_path, read_only=True)
    call = session.turns[0].blocks[1]
    assert call.state == "failed" and call.result == "Error: cancelled while it ran."
    assert isinstance(session.history[-1], ToolResult)  # it did start: its real (failed) result is kept


def test_a_side_effecting_tool_cancelled_while_it_ran_is_unknown_and_never_rerun(server: FaultServer,
                                                                                tmp_path: Path) -> None:
    session, runs = _cancel_while_running(server, tmp_path, read_only=False)
    call = session.turns[0].blocks[1]
    assert call.state == "unknown"
    assert call.result == CANCELLED_UNKNOWN
    assert session.history[-1] == ToolResult("t1", "get_order", CANCELLED_UNKNOWN, True)  # the model is told so
    claim = session.ledger.claim(call.key or "", "conv-1", 0, "get_order", {"order_id": "A-1042"}, 1)
    assert claim.state == "unknown" and runs == [1]  # the ledger never lets it run again


def append_tool(tmp_path: Path, read_only: bool = False) -> tuple[Path, CommandToolConfig]:
    """A real command tool with a real side effect: one line appended to a file per run."""
    log = tmp_path / "appended.txt"
    script = tmp_path / "append.py"
    script.write_text("import json, os, sys\nargs = json.load(sys.stdin)\n"
                      f"open({str(log)!r}, 'a').write(os.environ['CALLSTREAM_IDEMPOTENCY_KEY'] + ' ' + args['line']"
                      " + '\\n')\nprint('ok')\n")
    return log, CommandToolConfig("append_line", [sys.executable, str(script)], read_only=read_only,
                                  parameters={"type": "object", "properties": {"line": {"type": "string"}},
                                              "required": ["line"]}, display=[("line", "Line")])


#: A reply cut off without its end, per dialect with per-call end events.
UNENDED = {"anthropic": {"stop_reason": None, "stop": False}, "openai-responses": {"final": None},
           "gemini": {"finish": None}}


@pytest.mark.parametrize("dialect", sorted(UNENDED))
def test_a_call_that_ran_before_the_stream_dropped_is_continued_from_never_regenerated(
        server: FaultServer, home: Path, dialect: str) -> None:
    """The adversary's case: a sampling model asked again would write the call
    with other arguments ("note attempt 2"). The loop never asks again: the
    next request carries the call that ran, its real result and the note."""
    from app.store.transcripts import Store
    from tests.conversations import converse

    log, tool = append_tool(home)
    encode = streamgen.ENCODERS[dialect]
    call = streamgen.call_script(0, "t1", "append_line", '{"line": "note attempt 1"}')
    dying = encode([("text", "Appending. ")] + call + [("start", 1, "t2", "append_line")], **UNENDED[dialect])
    regenerated = encode([("text", "Appending. ")] + streamgen.call_script(0, "t9", "append_line",
                                                                          '{"line": "note attempt 2"}'))
    server.replies.append(Reply(dying, cut_at=len(dying)))
    server.replies.append(Reply(encode([("text", "Appended.")], **({"stop_reason": "end_turn"}
                                                                     if dialect == "anthropic" else {}))))
    server.replies.append(Reply(regenerated))  # what a blind retry would have been answered
    endpoint = Endpoint(dialect, server.url, "m", "test")
    session = converse(["append a note"], Config(tools={"append_line": tool}), endpoint)
    lines = log.read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["note attempt 1"]  # exactly one side effect
    assert len(server.requests) == 2
    # Gemini sends a call whole: the second one never reached the wire
    states = ["ran"] if dialect == "gemini" else ["ran", "not run"]
    note = ("Interrupted: the connection dropped." if dialect == "gemini" else
            "Interrupted: the connection dropped while append_line was being prepared; it was not run.")
    first = session.turns[0]
    assert [b.state for b in first.blocks if isinstance(b, ToolCallBlock)] == states
    assert first.note == note and first.attempts == 1
    call_id = first.blocks[1].id  # Gemini's calls have no id on the wire: the loop names them
    assert session.history[1] == Assistant("Appending. ", [CallRecord(call_id, "append_line",
                                                                      {"line": "note attempt 1"})], note)
    assert session.history[2] == ToolResult(call_id, "append_line", "ok\n")
    request = json.dumps(server.requests[1]["body"])
    assert "note attempt 1" in request and note in request and "ok\\n" in request
    store = Store(home / "home" / "callstream.db")
    try:
        conv = store.load(session.conversation)
    finally:
        store.close()
    assert conv is not None
    stored = [b.state for i in conv.items if isinstance(i, StoredTurn) for b in i.blocks
              if isinstance(b, ToolCallBlock)]
    assert stored == states
    assert history_of(conv) == session.history


def test_round_limit(server: FaultServer, tmp_path: Path) -> None:
    for i in range(3):
        server.replies.append(Reply(streamgen.anthropic(streamgen.call_script(0, f"t{i}", "get_order",
                                                                             '{"order_id": "A-1042"}'))))
    session = session_for(server, tmp_path, max_rounds=3)
    done = send(session, "loop forever")
    assert done.status == "round_limit" and "3 rounds" in (done.message or "")


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_every_dialect_through_the_loop(server: FaultServer, tmp_path: Path, dialect: str) -> None:
    encode = streamgen.ENCODERS[dialect]
    server.replies.append(Reply(encode(ORDER_CALL)))
    server.replies.append(Reply(encode([("text", "It is late.")], **({"finish": "stop"} if dialect == "openai-chat"
                                                                      else {}))))
    session = session_for(server, tmp_path, dialect=dialect)
    assert send(session, "where is A-1042?").status == "done"
    assert isinstance(session.history[2], ToolResult) and "Ada Lovelace" in session.history[2].content
    assert session.history[-1] == Assistant("It is late.")


def test_no_tools_offered_means_a_streamed_call_is_answered_never_run(server: FaultServer, tmp_path: Path) -> None:
    runs: list[dict[str, Any]] = []

    async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
        runs.append(arguments)
        return "ran"

    registry = Registry([Tool("get_order", "", {"type": "object"}, effect, read_only=False)])
    server.replies.append(Reply(streamgen.anthropic(ORDER_CALL)))
    server.replies.append(Reply(streamgen.anthropic([("text", "No tools, then.")], stop_reason="end_turn")))
    session = session_for(server, tmp_path, registry=registry, offer_tools=False)
    assert send(session, "where is A-1042?").status == "done"
    assert "tools" not in server.requests[0]["body"] or not server.requests[0]["body"]["tools"]
    assert runs == [] and session.ledger.entries() == []  # never dispatched, never claimed
    call = session.turns[0].blocks[1]
    message = "Error: no tools were offered in this request, so 'get_order' was not run."
    assert call.state == "rejected" and call.result == message
    assert session.history[2] == ToolResult("t1", "get_order", message, True)  # answered in-band
    assert "tools" not in server.requests[1]["body"] or not server.requests[1]["body"]["tools"]


_UPDATES = st.lists(st.one_of(
    st.builds(BlockChanged, st.integers(0, 2), st.sampled_from(["", "a", "bc", "d"])),
    st.builds(BlockAdded, st.integers(0, 2)),
    st.builds(CallClosed, st.integers(0, 2), st.booleans()),
), max_size=40)


@given(_UPDATES)
def test_a_chunks_deltas_to_one_block_reach_listeners_once(updates: list[Update]) -> None:
    from app.chat.feed import grown_once

    out = grown_once(updates)

    def others(us: list[Update]) -> list[Update]:
        return [u for u in us if not (isinstance(u, BlockChanged) and u.delta)]

    def flat(us: list[Update]) -> list[tuple[int, str]]:
        return [(u.index, c) for u in us if isinstance(u, BlockChanged) for c in u.delta]

    assert others(out) == others(updates)  # nothing else moves, drops or doubles
    assert flat(out) == flat(updates)  # every character, in order, to its block
    for before, after in zip(out, out[1:], strict=False):
        assert not (isinstance(before, BlockChanged) and isinstance(after, BlockChanged) and before.delta
                    and after.delta and before.index == after.index)
