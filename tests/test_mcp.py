"""MCP tool servers through the official SDK: the fixture server in memory, as
a stdio subprocess and over Streamable HTTP on 127.0.0.1; config, names,
results, faults (never starts, crashes mid-call, hangs, isError, 500 tools),
and a call that runs once with its key in ``_meta`` and reaches the model in
every dialect."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.chat.session import ChatSession
from app.ledger import SqliteLedger as Ledger
from app.mcp import attach_servers, open_hub, tool_name
from app.mcp.names import MAX_NAME
from app.mcp.results import map_result
from app.net.endpoint import Endpoint
from app.net.stream import Timeouts
from app.settings.mcp import MCPConfigError, expand, from_mcp_json, parse_servers
from app.stream.dialects.schemas import DIALECT_NAMES, problems
from app.tools.registry import Registry
from tests import streamgen
from tests.conftest import ROOT
from tests.faultserver import FaultServer, Reply
from tests.mcp_fixture import make_server, serving_http
from tests.waiting import wait_until

FIXTURE = [sys.executable, "-m", "tests.mcp_fixture"]


MUTE = "import sys; print('fixture: muted, never answering', file=sys.stderr, flush=True); sys.stdin.read()"


def stdio(name: str = "fx", *extra: str, **table: Any) -> dict[str, Any]:
    return {name: {"command": FIXTURE[0], "args": [*FIXTURE[1:], "stdio", *extra], "cwd": str(ROOT),
                   "env": {"MCP_FIXTURE_COUNTS": "${COUNTS:-}"}, "startup_timeout": 60, **table}}


def hub_for(tables: dict[str, Any], tmp_path: Path, targets: dict[str, Any] | None = None) -> Any:
    return open_hub(parse_servers(tables, "test"), tmp_path / "logs", targets)


async def registry_with(tables: dict[str, Any], tmp_path: Path, targets: dict[str, Any] | None = None) -> Registry:
    registry = Registry([])
    attach_servers(registry, hub_for(tables, tmp_path, targets))
    await registry.settled()
    return registry


@contextlib.asynccontextmanager
async def opened(tables: dict[str, Any], tmp_path: Path,
                 targets: dict[str, Any] | None = None) -> AsyncIterator[Registry]:
    """``registry_with``, closed again however the test ends."""
    registry = await registry_with(tables, tmp_path, targets)
    try:
        yield registry
    finally:
        await registry.aclose()


def counts(path: Path) -> dict[str, int]:
    return json.loads(path.read_text()) if path.exists() else {}


# -- config, names, results ------------------------------------------------------


def test_variables_expand_from_the_environment_with_defaults() -> None:
    env = {"TOKEN": "s3cret", "EMPTY": ""}
    assert expand("Bearer ${TOKEN}", env) == "Bearer s3cret"
    assert expand("${MISSING:-fallback}/${EMPTY:-x}", env) == "fallback/x"


def test_an_unset_variable_without_a_default_is_named() -> None:
    with pytest.raises(MCPConfigError, match=r"\$\{NOPE\} is not set"):
        expand("${NOPE}", {})


def test_the_parsed_config_keeps_variables_as_written() -> None:
    servers = parse_servers({"s": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${T}"}}},
                            "t")
    assert servers["s"].headers == {"Authorization": "Bearer ${T}"}
    assert servers["s"].transport == "http"


def test_a_server_with_neither_command_nor_url_is_refused() -> None:
    with pytest.raises(MCPConfigError, match="needs either command"):
        parse_servers({"s": {"args": []}}, "t")


def test_an_unknown_approval_mode_is_refused() -> None:
    with pytest.raises(MCPConfigError, match="approval must be one of never, ask, always-ask"):
        parse_servers({"s": {"command": "x", "approval": "sometimes"}}, "t")


def test_an_unknown_server_key_is_refused() -> None:
    with pytest.raises(MCPConfigError, match="unknown key 'timeout'"):
        parse_servers({"s": {"command": "x", "timeout": 3}}, "t")


def test_a_bad_server_name_is_refused() -> None:
    with pytest.raises(MCPConfigError, match="server name"):
        parse_servers({"a b": {"command": "x"}}, "t")


def test_an_mcp_servers_file_becomes_tables_with_variables_kept() -> None:
    text = json.dumps({"mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"TOKEN": "${GH_TOKEN}"}},
        "web.search": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}})
    tables = from_mcp_json(text, "x.json")
    assert tables["git"] == {"command": "uvx", "args": ["mcp-server-git"], "env": {"TOKEN": "${GH_TOKEN}"}}
    assert tables["web_search"] == {"url": "http://127.0.0.1:9/sse", "transport": "sse"}


def test_an_mcp_servers_file_that_is_not_json_is_named() -> None:
    with pytest.raises(MCPConfigError, match="x.json: not JSON"):
        from_mcp_json("{", "x.json")


def test_names_are_namespaced_and_fit_every_wire_format() -> None:
    assert tool_name("git", "git_status") == "git__git_status"
    odd = tool_name("fs", "read.file/v2")
    assert odd.startswith("fs__read_file_v2_") and len(odd) <= MAX_NAME
    long_a, long_b = tool_name("server", "x" * 80 + "a"), tool_name("server", "x" * 80 + "b")
    assert len(long_a) == len(long_b) == MAX_NAME and long_a != long_b
    for name in (odd, long_a):
        assert all(c.isalnum() or c in "_-" for c in name)


def test_results_map_text_media_errors_and_structured_content() -> None:
    import mcp_types as types

    image = types.CallToolResult(content=[types.TextContent(text="here"),
                                          types.ImageContent(data="AAAA", mime_type="image/png")],
                                 structured_content={"n": 1})
    mapped = map_result(image)
    assert mapped.text == 'here\n[image: image/png, 3 B]\n{"n": 1}' and not mapped.is_error
    assert mapped.structured == {"n": 1}
    failed = map_result(types.CallToolResult(content=[types.TextContent(text="nope")], is_error=True))
    assert failed.is_error and failed.text == "nope"


# -- in memory -------------------------------------------------------------------


async def test_in_memory_tools_are_listed_namespaced_with_their_hints(tmp_path: Path) -> None:
    async with opened({"fx": {"command": "unused"}}, tmp_path, {"fx": make_server()}) as registry:
        assert {"fx__lookup", "fx__effect", "fx__picture"} <= set(registry.names())
        assert registry.get("fx__lookup").read_only  # type: ignore[union-attr]
        effect = registry.get("fx__effect")
        assert effect is not None and not effect.read_only and effect.origin == "mcp:fx"
        assert effect.display == ()  # nothing listed: every field hidden


async def test_in_memory_a_call_carries_its_key_in_meta(tmp_path: Path) -> None:
    from app.tools.base import ToolContext

    async with opened({"fx": {"command": "unused"}}, tmp_path, {"fx": make_server()}) as registry:
        effect = registry.get("fx__effect")
        assert effect is not None
        answer = json.loads(await effect.run({"label": "x"}, ToolContext("key-123")))
        assert answer["key"] == "key-123"
        picture = registry.get("fx__picture")
        assert picture is not None
        shown = await picture.run({}, ToolContext("k"))
        assert shown.startswith("[image: image/png, ") and "(sent to the model as an image; attachment" in shown
        # bytes that only start like a PNG are one line, never sent as an image
        assert (await picture.run({"broken": True}, ToolContext("k2"))).startswith("[image: image/png, 2.0 KB]\n{")


async def test_is_error_is_a_failed_call(tmp_path: Path) -> None:
    from app.tools.base import ToolContext, ToolError

    async with opened({"fx": {"command": "unused"}}, tmp_path, {"fx": make_server()}) as registry:
        fail = registry.get("fx__fail")
        assert fail is not None
        with pytest.raises(ToolError, match="the fixture always fails"):
            await fail.run({}, ToolContext("k"))


async def test_five_hundred_tools_are_paged_and_capped_with_the_dropped_named(tmp_path: Path) -> None:
    hub = hub_for({"many": {"command": "unused"}}, tmp_path, {"many": make_server(extra=500)})
    hub.start()
    await hub.wait_settled()
    try:
        status = hub.statuses()[0]
        assert status.state == "ready" and len(status.tools) == 128
        assert len(status.dropped) == 507 - 128 and status.dropped[-1] == "t499"  # every page was followed
        assert "379 not advertised" in status.line()
    finally:
        await hub.close()


async def test_tools_and_disabled_tools_choose_what_is_advertised(tmp_path: Path) -> None:
    tables = {"fx": {"command": "unused", "tools": ["lookup", "effect", "fail"], "disabled_tools": ["fail"]}}
    async with opened(tables, tmp_path, {"fx": make_server()}) as registry:
        assert sorted(registry.names()) == ["fx__effect", "fx__lookup"]


async def test_doctor_rules_name_the_tool_every_provider_rejects(tmp_path: Path) -> None:
    hub = hub_for({"fx": {"command": "unused"}}, tmp_path, {"fx": make_server()})
    hub.start()
    await hub.wait_settled()
    try:
        tools = {t.name: t for t in hub.statuses()[0].tools}
        for dialect in DIALECT_NAMES:
            assert problems(dialect, tools["bad_schema"].input_schema), dialect
            assert not problems(dialect, tools["effect"].input_schema), dialect
    finally:
        await hub.close()


# -- stdio -----------------------------------------------------------------------


async def test_stdio_a_server_that_cannot_start_fails_with_its_reason(tmp_path: Path) -> None:
    hub = hub_for({"gone": {"command": "no-such-mcp-server-xyz"}}, tmp_path)
    hub.start()
    await hub.wait_settled()
    status = hub.statuses()[0]
    assert status.state == "failed" and "cannot start it" in (status.reason or "")
    assert status.log == tmp_path / "logs" / "gone.log"
    await hub.close()


async def test_stdio_a_server_that_never_answers_fails_at_its_startup_timeout(tmp_path: Path) -> None:
    # a bare interpreter, not the fixture: importing the mcp SDK can itself take seconds on a loaded
    # machine, and the log line below must be written before the 3 s run out
    mute = {"mute": {"command": sys.executable, "args": ["-c", MUTE], "startup_timeout": 3}}
    hub = hub_for(mute, tmp_path)
    hub.start()
    await hub.wait_settled()
    status = hub.statuses()[0]
    assert status.state == "failed" and "did not start within 3 s" in (status.reason or "")
    await hub.close()
    assert "muted, never answering" in (tmp_path / "logs" / "mute.log").read_text()


async def test_stdio_crash_mid_call_is_unknown_and_the_next_call_restarts_it(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from app.tools.base import OutcomeUnknown, ToolContext

    monkeypatch.setenv("COUNTS", str(tmp_path / "counts.json"))
    async with opened(stdio(), tmp_path) as registry:
        hub = registry.source
        assert hub.statuses()[0].state == "ready" and hub.statuses()[0].transport == "stdio"
        crash, lookup = registry.get("fx__crash"), registry.get("fx__lookup")
        assert crash is not None and lookup is not None
        with pytest.raises(OutcomeUnknown, match="went away during the call"):
            await crash.run({}, ToolContext("k-crash"))
        assert hub.statuses()[0].state == "failed"
        assert await lookup.run({"q": "again"}, ToolContext("k2")) == "found: again"
        assert hub.statuses()[0].state == "ready" and hub.statuses()[0].restarts == 1
        assert counts(tmp_path / "counts.json") == {"k-crash": 1}
        assert "fixture: starting on stdio" in (tmp_path / "logs" / "fx.log").read_text()


async def test_stdio_a_hanging_side_effect_times_out_as_unknown(tmp_path: Path) -> None:
    from app.tools.base import OutcomeUnknown, ToolContext

    async with opened(stdio(tool_timeout=1), tmp_path) as registry:
        hang = registry.get("fx__hang")
        assert hang is not None
        started = time.monotonic()
        with pytest.raises(OutcomeUnknown, match=r"no answer within 1 s \(tool_timeout\)"):
            await hang.run({"seconds": 30}, ToolContext("k"))
        assert time.monotonic() - started < 20


# -- Streamable HTTP on 127.0.0.1 ------------------------------------------------------


@pytest.fixture
def http_fixture() -> Iterator[str]:
    with serving_http("tests.mcp_fixture") as url:
        yield url


async def test_streamable_http_lists_and_calls(http_fixture: str, tmp_path: Path) -> None:
    from app.tools.base import ToolContext

    async with opened({"web": {"url": http_fixture, "headers": {"X-Test": "${HOME}"}}}, tmp_path) as registry:
        status = registry.source.statuses()[0]
        assert status.state == "ready" and status.transport == "http", status.line()
        lookup, effect = registry.get("web__lookup"), registry.get("web__effect")
        assert lookup is not None and effect is not None
        assert await lookup.run({"q": "over http"}, ToolContext("k")) == "found: over http"
        assert json.loads(await effect.run({"label": "y"}, ToolContext("http-key")))["key"] == "http-key"


# -- through the chat loop, in every dialect --------------------------------------------

SCRIPTS = {
    "openai-chat": streamgen.openai_chat,
    "openai-responses": streamgen.openai_responses,
    "anthropic": streamgen.anthropic,
    "gemini": streamgen.gemini,
}
ENDS = {
    "openai-chat": lambda s: streamgen.openai_chat(s, finish="stop"),
    "openai-responses": streamgen.openai_responses,
    "anthropic": lambda s: streamgen.anthropic(s, stop_reason="end_turn"),
    "gemini": streamgen.gemini,
}



def answering(session: ChatSession, seen: list[str]) -> None:
    """A listener that answers "yes, once" the moment a call awaits approval
    (what the TUI's y key does), recording the states it saw."""
    from app.chat.events import CallState
    from app.tools.approvals import Answer

    def listen(event: object) -> None:
        if isinstance(event, CallState):
            seen.append(event.state)
            if event.state == "awaiting approval":
                block = session.turns[-1].blocks[event.index]
                asyncio.get_running_loop().call_soon(session.answer, block.key, Answer("once"))  # type: ignore

    session.listeners.append(listen)


@pytest.mark.parametrize("dialect", list(SCRIPTS))
async def test_an_mcp_call_awaits_approval_runs_once_and_its_result_reaches_the_model(dialect: str,
                                                                                      tmp_path: Path) -> None:
    from app.tools.approvals import Approvals

    call = [("text", "Doing it. ")] + streamgen.call_script(0, "c1", "fx__effect", '{"label": "ticket"}')
    with FaultServer() as server:
        server.replies.append(Reply(SCRIPTS[dialect](call)))
        server.replies.append(Reply(ENDS[dialect]([("text", "Done.")])))
        registry = Registry([])
        attach_servers(registry, hub_for({"fx": {"command": "unused"}}, tmp_path, {"fx": make_server()}))
        session = ChatSession(Endpoint(dialect, server.url, "m", "test"), registry, Ledger(tmp_path / "l.db"),
                              "conv-mcp", backoff=0.01, timeouts=Timeouts(5.0, 5.0, 20.0))
        session.approvals = Approvals()
        seen: list[str] = []
        answering(session, seen)
        try:
            done = await session.send("do it")
        finally:
            await session.aclose()
            await registry.aclose()
        assert done.status == "done", done
        assert seen[:3] == ["waiting", "awaiting approval", "running"] and seen[-1] == "ran"
        first, second = server.requests[0]["body"], server.requests[1]["body"]
        assert "fx__effect" in json.dumps(first)  # offered, under its namespaced name
        block = session.turns[0].blocks[1]
        assert block.state == "ran" and block.key  # type: ignore[union-attr]
        result = json.loads(block.result)  # type: ignore[union-attr]
        assert result["key"] == block.key and result["runs"] == 0  # type: ignore[union-attr]
        assert block.key in json.dumps(second)  # type: ignore[operator, union-attr]


async def test_exactly_once_through_mcp_across_a_cut_off_and_retry(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream dies after the call ended (so it was dispatched): the next
    request continues from what ran (never regenerated), and the stdio fixture
    counts one run for the key, which it saw in ``_meta``."""
    counts_file = tmp_path / "counts.json"
    monkeypatch.setenv("COUNTS", str(counts_file))
    call = [("text", "Doing it. ")] + streamgen.call_script(0, "c1", "fx__effect", '{"label": "once"}')
    body = streamgen.anthropic(call)
    with FaultServer() as server:
        server.replies.append(Reply(body[: body.index(b"message_delta")], chunk=64))
        server.replies.append(Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")))
        registry = await registry_with(stdio(approval="never"), tmp_path)
        session = ChatSession(Endpoint("anthropic", server.url, "m", "test"), registry, Ledger(tmp_path / "l.db"),
                              "conv-once", backoff=0.01, timeouts=Timeouts(5.0, 5.0, 30.0))
        try:
            done = await session.send("do it")
        finally:
            await session.aclose()
            await registry.aclose()
    assert done.status == "done", done
    block = session.turns[0].blocks[1]
    assert session.turns[0].note and block.state == "ran"  # type: ignore[union-attr]
    assert counts(counts_file) == {block.key: 1}  # type: ignore[union-attr]
    assert json.loads(block.result)["key"] == block.key  # type: ignore[union-attr]
    assert block.key in json.dumps(server.requests[1]["body"])  # type: ignore[operator, union-attr]


def test_the_fixture_server_module_runs_without_the_app() -> None:
    # the stdio child gets only the SDK's default env: it must import from the cwd alone
    out = subprocess.run([*FIXTURE, "--mute"], cwd=ROOT, input="", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "muted" in out.stderr


def test_asyncio_is_not_left_with_tasks(tmp_path: Path) -> None:
    async def go() -> int:
        registry = await registry_with({"fx": {"command": "unused"}}, tmp_path, {"fx": make_server()})
        await registry.aclose()

        def others() -> list[asyncio.Task[Any]]:
            return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

        # a task the close cancelled ends when it next runs: wait for that state, not a loop turn
        await wait_until(lambda: not others(), "every task the registry started to end", seen=others)
        return len(others())

    assert asyncio.run(go()) == 0


# -- request bodies carrying MCP tools, validated as the request-body tests do ---------------


async def test_request_bodies_with_mcp_tools_match_the_sdk_types(tmp_path: Path) -> None:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
    from pydantic import TypeAdapter

    from app.stream.dialects import REQUEST_BUILDERS
    from app.stream.history import User

    real = {"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema", "additionalProperties": False,
            "$defs": {"Tz": {"type": "string", "description": "an IANA zone"}},
            "properties": {"timezone": {"$ref": "#/$defs/Tz"}, "note": {"type": ["string", "null"]}}}
    async with opened({"fx": {"command": "unused"}}, tmp_path, {"fx": make_server()}) as registry:
        specs = [t.spec for t in (registry.get("fx__lookup"), registry.get("fx__effect")) if t is not None]
    from app.stream.history import ToolSpec

    specs.append(ToolSpec("time__convert", "convert a time", real))
    history = [User("what time is it?")]
    types = {"openai-chat": CompletionCreateParamsStreaming, "openai-responses": ResponseCreateParamsStreaming,
             "anthropic": MessageCreateParamsStreaming}
    for dialect, builder in REQUEST_BUILDERS.items():
        _, body = builder("m", history, specs, None)
        if dialect in types:
            TypeAdapter(types[dialect]).validate_python(body)
        text = json.dumps(body)
        assert "fx__lookup" in text and "fx__effect" in text
        if dialect == "openai-responses":
            assert all(tool["strict"] is False for tool in body["tools"])  # MCP tools are never strict
        if dialect == "gemini":
            declared = body["tools"][0]["functionDeclarations"][2]["parameters"]
            assert declared["properties"]["timezone"] == {"type": "string", "description": "an IANA zone"}
            assert "$schema" not in text and "additionalProperties" not in text and "$ref" not in text


async def test_the_display_allow_list_comes_from_the_config(tmp_path: Path) -> None:
    tables = {"fx": {"command": "unused", "tool": {"effect": {"display": [["label", "Label"]],
                                                              "approval": "always-ask"}}}}
    async with opened(tables, tmp_path, {"fx": make_server()}) as registry:
        effect = registry.get("fx__effect")
        assert effect is not None and [(f.path, f.label) for f in effect.display] == [("label", "Label")]
        assert effect.approval == "always-ask"


def test_a_servers_stderr_log_is_capped(tmp_path: Path) -> None:
    from app.mcp.logs import ServerLog

    log = ServerLog(tmp_path / "chatty.log", cap=1000)
    (tmp_path / "chatty.log").write_text("the previous run\n")
    writer = log.open()
    writer.write("x" * 5000)
    writer.close()
    assert log._thread is not None
    log._thread.join(10)
    text = (tmp_path / "chatty.log").read_text()
    assert text.startswith("x" * 1000) and "4000 more bytes of stderr dropped at the 1000-byte cap" in text
    assert (tmp_path / "chatty.log.1").read_text() == "the previous run\n"
