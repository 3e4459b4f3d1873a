"""Speculative warming: a read-only tool warms once its required fields are
stable; the result still comes from the final arguments, at the call's end;
a side-effecting tool is never warmed. Every live call carries its timings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from app.chat.session import ChatSession
from app.ledger import SqliteLedger
from app.net.endpoint import Endpoint
from app.tools.base import Tool, ToolContext
from app.tools.registry import Registry
from tests import streamgen
from tests.faultserver import FaultServer, Reply

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}, "scope": {"type": "string"}},
          "required": ["q"]}


def _tools(warmed: list[tuple[str, dict[str, Any]]], ran: list[dict[str, Any]]) -> Registry:
    def tool(name: str, read_only: bool) -> Tool:
        async def run(arguments: dict[str, Any], ctx: ToolContext) -> str:
            ran.append(arguments)
            return json.dumps({"ran_with": arguments})

        async def warm(partial: dict[str, Any]) -> None:
            warmed.append((name, partial))

        return Tool(name, "", SCHEMA, run, read_only=read_only, warm=warm)

    return Registry([tool("lookup", True), tool("write", False)])


def _run(tmp_path: Path, script: list[Any]) -> tuple[ChatSession, list[tuple[str, dict[str, Any]]], list[Any]]:
    warmed: list[tuple[str, dict[str, Any]]] = []
    ran: list[dict[str, Any]] = []
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic([("text", "Looking. ")] + script), chunk=40, delay=0.01))
        server.replies.append(Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")))
        session = ChatSession(Endpoint("anthropic", server.url, "m", "t"), _tools(warmed, ran),
                              SqliteLedger(tmp_path / "l.db"), "c")

        async def go() -> None:
            try:
                await session.send("go")
            finally:
                await session.aclose()

        asyncio.run(go())
    return session, warmed, ran


def _call(slot: int, name: str, fragments: list[str]) -> list[Any]:
    return [("start", slot, f"t{slot}", name)] + [("args", slot, f) for f in fragments] + [("end", slot)]


def test_the_result_comes_from_the_final_arguments_not_the_warm_time_ones(tmp_path: Path) -> None:
    session, warmed, ran = _run(tmp_path, _call(0, "lookup", ['{"q": "a', 'bc"', ', "scope": "all"}']))
    assert warmed == [("lookup", {"q": "abc"})]  # once, when q was stable; scope had not arrived
    assert ran == [{"q": "abc", "scope": "all"}]
    call = session.turns[0].blocks[1]
    assert json.loads(call.result) == {"ran_with": {"q": "abc", "scope": "all"}}  # type: ignore[attr-defined]
    timings = call.relative_timings()  # type: ignore[attr-defined]
    assert list(timings) == ["announced", "required", "ended", "dispatched", "started", "finished"]
    assert timings["required"] <= timings["ended"] <= timings["dispatched"] <= timings["finished"]


def test_a_side_effecting_tool_is_never_warmed(tmp_path: Path) -> None:
    session, warmed, ran = _run(tmp_path, _call(0, "write", ['{"q": "x"', "}"]))
    assert warmed == [] and ran == [{"q": "x"}]
    assert "required" in session.turns[0].blocks[1].relative_timings()  # type: ignore[attr-defined]


def test_a_call_whose_required_field_never_stabilises_is_never_warmed(tmp_path: Path) -> None:
    body = _call(0, "lookup", ['{"scope": "all", "q": "unfinish'])[:-1]
    warmed: list[tuple[str, dict[str, Any]]] = []
    with FaultServer() as server:
        data = streamgen.anthropic([("text", "x ")] + body, stop_reason=None, stop=False)
        server.replies.append(Reply(data, cut_at=len(data)))
        session = ChatSession(Endpoint("anthropic", server.url, "m", "t"), _tools(warmed, []),
                              SqliteLedger(tmp_path / "l.db"), "c", retries=0)
        asyncio.run(session.send("go"))
        asyncio.run(session.aclose())
    assert warmed == [] and session.turns[0].blocks[1].state == "not run"  # type: ignore[attr-defined]


def test_a_failing_warm_up_costs_nothing_but_itself(tmp_path: Path) -> None:
    async def broken(partial: dict[str, Any]) -> None:
        raise RuntimeError("warm-up failed")

    registry = _tools([], [])
    registry.get("lookup").warm = broken  # type: ignore[union-attr]
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic(_call(0, "lookup", ['{"q": "a"}']))))
        server.replies.append(Reply(streamgen.anthropic([("text", "ok")], stop_reason="end_turn")))
        session = ChatSession(Endpoint("anthropic", server.url, "m", "t"), registry, SqliteLedger(tmp_path / "l.db"),
                              "c")
        done = asyncio.run(session.send("go"))
        asyncio.run(session.aclose())
    assert done.status == "done" and session.turns[0].blocks[0].state == "ran"  # type: ignore[attr-defined]


def test_ask_json_carries_each_calls_timings(home: Path) -> None:
    import io

    from app.cli.ask import run_ask

    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    out = io.StringIO()
    assert run_ask("Show me order A-1042", "demo", as_json=True, out=out, err=io.StringIO()) == 0
    call = json.loads(out.getvalue())["turns"][0]["blocks"][1]
    assert set(call["timings"]) == {"announced", "required", "ended", "dispatched", "started", "finished"}
