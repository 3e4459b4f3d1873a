"""A hypothesis stateful test of "each tool runs once" (issue 4's first proof).

Conversations with side-effecting calls under random fault schedules: the
stream is cut before a call's end, cut or errored after it (so it was already
dispatched), a tool fails while running, the process "crashes" between a claim
and its result (a claim left by a dead process), and each turn is retried 0–3
times — and the model asked again is a sampling model: its retry regenerates
the calls with other arguments, omits them, or reorders them (issue 12).
Invariants: every side effect happens at most once per key, every call ends in
a terminal state, nothing runs unless its call ended in the stream, and every
call that ran is in the history with its real result and shown as having run.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from app.chat.session import ChatSession
from app.ledger import Ledger, SqliteLedger, idempotency_key
from app.net.endpoint import Endpoint
from app.stream import TERMINAL_STATES, ToolCallBlock
from app.tools.base import Tool, ToolContext, ToolError
from app.tools.registry import Registry
from tests import streamgen
from tests.ledgers import leave_dead_claim
from tests.waiting import next_turn

FAULTS = ["cut_before_end", "cut_after_end", "error_after_end", "complete"]
#: What the model writes when the same request comes again (a retry).
RETRIES = ["same", "regenerate", "omit", "reorder"]


class _Body(httpx.AsyncByteStream):
    def __init__(self, data: bytes, cut: bool) -> None:
        self.data = data
        self.cut = cut

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        for i in range(0, len(self.data), 97):
            yield self.data[i : i + 97]
        if self.cut:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")


class ExactlyOnce(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ledger = self.open_ledger()
        self.runs: dict[str, int] = {}
        self.ran_args: list[tuple[int, str]] = []
        self.ended: set[tuple[int, str]] = set()
        self.history: list[Any] = []
        self.next_turn = 0
        self.schedule: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.records: list[Any] = []
        self.crashed: set[str] = set()
        self.retry_shape = "same"
        self._asked = 0
        #: The arguments of every run in the current send.
        self.sent_runs: list[str] = []

        async def effect(arguments: dict[str, Any], ctx: ToolContext) -> str:
            self.runs[ctx.idempotency_key] = self.runs.get(ctx.idempotency_key, 0) + 1
            self.ran_args.append((self._turn_of_request, json.dumps(arguments, sort_keys=True)))
            self.sent_runs.append(json.dumps(arguments, sort_keys=True))
            await next_turn()  # concurrent calls interleave here, as real I/O would
            if arguments.get("boom"):
                raise ToolError("the downstream service failed")
            return f"effect {arguments['n']}"

        self.registry = Registry([Tool("effect", "a side effect", {"type": "object"}, effect, read_only=False)])
        self._turn_of_request = 0

    def open_ledger(self) -> Ledger:
        return SqliteLedger(Path(tempfile.mkdtemp(prefix="exactly-once-")) / "ledger.db")

    def teardown(self) -> None:
        self.ledger.close()

    def _reply(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        last = body["messages"][-1]["content"]
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last):
            data = streamgen.anthropic([("text", "Noted.")], stop_reason="end_turn")
            return httpx.Response(200, stream=_Body(data, False))
        fault = self.schedule.pop(0) if self.schedule else "complete"
        self._asked += 1
        calls = self.calls
        if self._asked > 1:  # the same question again: a sampling model writes another answer
            if self.retry_shape == "regenerate":
                calls = [{**args, "n": args["n"] + 10} for args in calls]
            elif self.retry_shape == "omit":
                calls = []
            elif self.retry_shape == "reorder":
                calls = list(reversed(calls))
        if not calls:
            data = streamgen.anthropic([("text", "Nothing to do.")], stop_reason="end_turn")
            return httpx.Response(200, stream=_Body(data, False))
        script: list[Any] = [("text", "On it. ")]
        for slot, args in enumerate(calls):
            script += streamgen.call_script(slot, f"t{slot}", "effect", json.dumps(args), 5)
        if fault == "cut_before_end":
            last_end = max(i for i, step in enumerate(script) if step[0] == "end")
            data = streamgen.anthropic(script[:last_end], stop_reason=None, stop=False)
            ended = [json.dumps(a, sort_keys=True) for a in calls[:-1]]
            cut = True
        elif fault in ("cut_after_end", "error_after_end"):
            data = streamgen.anthropic(script, stop_reason=None, stop=False)
            if fault == "error_after_end":
                data += b"".join(streamgen.MessagesEncoder().error("Overloaded"))
            ended = [json.dumps(a, sort_keys=True) for a in calls]
            cut = fault == "cut_after_end"
        else:
            data = streamgen.anthropic(script)
            ended = [json.dumps(a, sort_keys=True) for a in calls]
            cut = False
        self.ended.update((self._turn_of_request, a) for a in ended)
        return httpx.Response(200, stream=_Body(data, cut))

    @rule(schedule=st.lists(st.sampled_from(FAULTS), max_size=4),
          calls=st.lists(st.sampled_from([{"n": 1}, {"n": 2}, {"n": 1, "boom": True}]), min_size=1, max_size=3),
          retries=st.integers(min_value=0, max_value=3), retry_shape=st.sampled_from(RETRIES))
    def send(self, schedule: list[str], calls: list[dict[str, Any]], retries: int, retry_shape: str = "same") -> None:
        self.schedule = list(schedule)
        self.calls = calls
        self.retry_shape = retry_shape
        self._asked = 0
        self.sent_runs = []
        start = len(self.history)
        self._turn_of_request = self.next_turn
        client = httpx.AsyncClient(transport=httpx.MockTransport(self._reply))
        session = ChatSession(Endpoint("anthropic", "http://model.test", "m", "test"), self.registry, self.ledger,
                              "conv", self.history, retries=retries, backoff=0.0, http=client,
                              first_turn=self.next_turn)

        async def go() -> None:
            try:
                await session.send("do it")
            finally:
                await session.aclose()

        asyncio.run(go())
        self.history = session.history
        self.next_turn = session.next_turn
        self.records += session.turns
        self._every_run_is_in_the_history(session, start)

    def _every_run_is_in_the_history(self, session: ChatSession, start: int) -> None:
        """What ran this send is in the history the model sees next (its call and
        its real result) and on screen as having run — whatever the retry wrote."""
        from app.stream.history import Assistant, ToolResult

        new = session.history[start:]
        called = {c.id: json.dumps(c.arguments, sort_keys=True) for e in new if isinstance(e, Assistant)
                  for c in e.calls}
        answered = Counter(called[e.call_id] for e in new if isinstance(e, ToolResult) and e.call_id in called)
        shown = Counter(json.dumps(b.arguments, sort_keys=True) for t in session.turns for b in t.blocks
                        if isinstance(b, ToolCallBlock) and b.state in ("ran", "failed") and not b.reused)
        ran = Counter(self.sent_runs)
        assert not ran - answered, (ran, answered)
        assert not ran - shown, (ran, shown)

    @rule(calls=st.sampled_from([[{"n": 1}], [{"n": 2}, {"n": 1}]]))
    def crash_between_claim_and_result(self, calls: list[dict[str, Any]]) -> None:
        """A claim left behind by a process that died while the tool ran."""
        key = idempotency_key("conv", self.next_turn, "effect", calls[0], 1)
        leave_dead_claim(self.ledger, key, "conv", self.next_turn, "effect", calls[0], 1)
        self.crashed.add(key)
        self.send(["complete"], calls, 0)

    @invariant()
    def each_side_effect_at_most_once(self) -> None:
        assert all(count == 1 for count in self.runs.values()), self.runs
        assert not (set(self.runs) & self.crashed)  # a call whose outcome is unknown is never re-run

    @invariant()
    def every_call_ends_in_a_terminal_state(self) -> None:
        for record in self.records:
            for block in record.blocks:
                if isinstance(block, ToolCallBlock):
                    assert block.state in TERMINAL_STATES, (block.name, block.state)

    @invariant()
    def nothing_runs_from_a_prefix(self) -> None:
        for ran in self.ran_args:
            assert ran in self.ended, ran


class ExactlyOncePostgres(ExactlyOnce):
    """The same machine over the shared PostgreSQL ledger (a real server)."""

    url = ""

    def open_ledger(self) -> Ledger:
        import psycopg

        from app.ledger.postgres import PostgresLedger

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("TRUNCATE callstream_ledger")
        return PostgresLedger(self.url, lease=5.0)


TestExactlyOnce = ExactlyOnce.TestCase
TestExactlyOnce.settings = settings(max_examples=25, stateful_step_count=6, deadline=None)
TestExactlyOncePostgres = ExactlyOncePostgres.TestCase
TestExactlyOncePostgres.settings = settings(max_examples=25, stateful_step_count=6, deadline=None)


@pytest.fixture(autouse=True)
def _postgres_for_its_case(request: pytest.FixtureRequest) -> None:
    if request.cls is TestExactlyOncePostgres:
        ExactlyOncePostgres.url = request.getfixturevalue("pg_ledger_url")
