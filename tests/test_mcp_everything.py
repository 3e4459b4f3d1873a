"""The MCP reference server, ``@modelcontextprotocol/server-everything`` (npm,
pinned in peers/everything/package-lock.json; ``make peers-everything``), as a
user would run it: over stdio, every tool it offers called by a scripted model
through the real chat loop. These tests skip, saying why, without node or the
package. Issue 26: identity, progress, log messages, instructions, tasks."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.server import Server

from app import __version__
from app.chat.events import CallState
from app.chat.session import ChatSession
from app.cli import main
from app.ledger import SqliteLedger as Ledger
from app.mcp import attach_servers, open_hub
from app.mcp.capabilities import TASKS_REQUIRED
from app.net.endpoint import Endpoint
from app.net.stream import Timeouts
from app.settings.mcp import MCPConfigError, parse_servers
from app.stream import ToolCallBlock
from app.tools.registry import Registry
from tests import streamgen
from tests.conftest import ROOT
from tests.faultserver import FaultServer, Reply
from tests.mcp_fixture import listening_on_loopback
from tests.waiting import wait_until

ENTRY = ROOT / "peers" / "everything" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / \
    "index.js"
NODE = shutil.which("node")


def need_everything() -> str:
    if NODE is None:
        pytest.skip(reason="node is not on PATH (server-everything is a node program)")
    if not ENTRY.exists():
        pytest.skip(reason=f"server-everything is not installed in {ENTRY.parents[3]} (make peers-everything)")
    return NODE


def everything(**extra: Any) -> dict[str, Any]:
    return {"command": need_everything(), "args": [str(ENTRY), "stdio"], "startup_timeout": 60, **extra}


#: What the scripted model asks of each tool server-everything offers a client that declares no
#: sampling, elicitation or roots, and what the model must then be sent back.
CALLS: dict[str, tuple[dict[str, Any], str]] = {
    "echo": ({"message": "hello there"}, "Echo: hello there"),
    "get-annotated-message": ({"messageType": "success"}, "success"),
    "get-env": ({}, "PATH"),
    "get-resource-links": ({"count": 2}, "resource"),
    "get-resource-reference": ({}, "Resource 1"),
    "get-structured-content": ({"location": "Chicago"}, "temperature"),
    "get-sum": ({"a": 2, "b": 3}, "5"),
    "get-tiny-image": ({}, "image"),
    "gzip-file-as-resource": ({"name": "a.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resource"},
                              "a.gz"),
    "toggle-simulated-logging": ({}, "logging"),
    "toggle-subscriber-updates": ({}, "update"),
    "trigger-long-running-operation": ({"duration": 0.4, "steps": 2}, "Long running operation completed"),
    # offered because callstream declares elicitation (form and URL); answered by the person (``answering``)
    "trigger-elicitation-request": ({}, "- Name: Ada Lovelace"),
    "trigger-url-elicitation": ({"url": "https://example.invalid/consent", "elicitationId": "e-1"},
                                "declined to open the URL"),
    # offered because callstream declares roots: the working directory by default
    "get-roots-list": ({}, Path.cwd().resolve().as_uri()),
    # offered because callstream declares sampling: sent by the person, the model's reply returned as written
    "trigger-sampling-request": ({"prompt": "name a colour", "maxTokens": 20}, "Teal."),
}
#: What the person answers each request for input with (the form's fields as typed).
ANSWERS: dict[str, tuple[str, dict[str, Any]]] = {
    "trigger-elicitation-request": ("accept", {"name": "Ada Lovelace", "check": True, "integer": "7",
                                               "untitledSingleSelectEnum": "Joey"}),
    "trigger-url-elicitation": ("decline", {}),
}
#: Tools it offers only to a client that declares what callstream does not: sampling as a task.
CONDITIONAL = ("trigger-sampling-request-async",)


def answering(session: ChatSession) -> None:
    """A listener that answers each request for input the moment its card shows it (the form's keys)."""
    import asyncio

    def listen(event: object) -> None:
        if isinstance(event, CallState) and event.state == "running":
            block = session.turns[-1].blocks[event.index]
            if isinstance(block, ToolCallBlock) and block.elicitations and block.elicitations[-1].state == "asked":
                action, entered = ANSWERS[block.name.removeprefix("ev__")]
                asyncio.get_running_loop().call_soon(session.asking.answer, block.key, action, entered)
            if isinstance(block, ToolCallBlock) and block.samplings and block.samplings[-1].state in ("asked",
                                                                                                       "replied"):
                action = "send" if block.samplings[-1].state == "asked" else "return"
                asyncio.get_running_loop().call_soon(session.sampling.answer, block.key, action)

    session.listeners.append(listen)


async def test_everything_over_stdio_every_offered_tool_runs_through_the_chat_loop(tmp_path: Path) -> None:
    table = everything(approval="never", log_level="debug")
    registry = Registry([])
    hub = open_hub(parse_servers({"ev": table}, "test"), tmp_path / "logs")
    attach_servers(registry, hub)
    await registry.settled()
    server = hub.servers[0]
    status = server.status
    try:
        assert status.state == "ready", status.line()
        # the task-augmented tool arrives with the tools it registers once it knows the client
        await wait_until(lambda: any(t.name == "simulate-research-query" for t in status.tools),
                         "the task-augmented tool to be listed", seen=lambda: [t.name for t in status.tools])
        listed = {t.name: t for t in status.tools}
        assert set(CALLS) <= set(listed), sorted(listed)
        assert not set(CONDITIONAL) & set(listed)  # nothing declared that callstream does not implement
        assert listed["simulate-research-query"].unsupported == TASKS_REQUIRED
        assert registry.get("ev__simulate-research-query") is None  # never offered, so never failing
        assert "1 not offered" in status.line()

        script: list[Any] = [("text", "Trying every tool. ")]
        for slot, (name, (arguments, _)) in enumerate(CALLS.items()):
            script += streamgen.call_script(slot, f"c{slot}", f"ev__{name}", json.dumps(arguments))
        with FaultServer() as model:
            model.replies.append(Reply(streamgen.anthropic(script)))
            model.replies.append(Reply(streamgen.anthropic([("text", "Teal.")], stop_reason="end_turn")))  # sampled
            model.replies.append(Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")))
            session = ChatSession(Endpoint("anthropic", model.url, "m", "test"), registry, Ledger(tmp_path / "l.db"),
                                  "conv-everything", backoff=0.01, timeouts=Timeouts(10.0, 30.0, 60.0),
                                  system="Be brief.")
            progress: list[str] = []

            def listen(event: object) -> None:
                if isinstance(event, CallState) and event.state == "running":
                    block = session.turns[-1].blocks[event.index]
                    if isinstance(block, ToolCallBlock) and block.progress:
                        progress.append(block.progress)

            session.listeners.append(listen)
            answering(session)
            try:
                done = await session.send("try them all")
            finally:
                await session.aclose()
        assert done.status == "done", done
        first, sampled, second = (r["body"] for r in model.requests)
        # the sampling tool's request: the server's system prompt and maxTokens, its message, no tools
        assert sampled["system"] == "You are a helpful test server." and sampled["max_tokens"] == 20
        assert "context: name a colour" in json.dumps(sampled["messages"]) and "tools" not in sampled
        offered = {tool["name"] for tool in first["tools"]}
        assert offered == {f"ev__{name}" for name in CALLS} | {"read_resource"}  # it offers resources
        # its instructions are offered after the session's own system prompt, labelled as the server's
        system = json.dumps(first["system"])
        assert system.index("Be brief.") < system.index("Instructions from the MCP server 'ev'")
        calls = [b for b in session.turns[0].blocks if isinstance(b, ToolCallBlock)]
        assert [c.state for c in calls] == ["ran"] * len(CALLS), [(c.name, c.state, c.result) for c in calls]
        sent = json.dumps(second["messages"])
        for call in calls:
            expected = CALLS[call.name.removeprefix("ev__")][1]
            assert expected.lower() in (call.result or "").lower(), (call.name, call.result)
            assert json.dumps(call.result)[1:-1] in sent  # what the card holds is what the model is sent
        # each request for input is on its call's card, as asked and as answered; the call ran once, under its key
        asked = {c.name.removeprefix("ev__"): c for c in calls if c.elicitations or c.samplings}
        (sampling,) = asked["trigger-sampling-request"].samplings
        assert sampling.headline() == "ev asks the model: Resource trigger-sampling-request context: name a colour"
        assert (sampling.state, sampling.returned, sampling.model) == ("returned", "Teal.", "m")
        form, url = asked["trigger-elicitation-request"].elicitations, asked["trigger-url-elicitation"].elicitations
        assert [(e.mode, e.state) for e in form] == [("form", "accept")] and form[0].answer is not None
        assert form[0].answer["name"] == "Ada Lovelace" and form[0].answer["integer"] == 7
        assert "Your full, legal name" in [f.description for f in form[0].fields]
        assert [(e.mode, e.state, e.url) for e in url] == [("url", "decline", "https://example.invalid/consent")]
        ledger = Ledger(tmp_path / "l.db")
        for call in asked.values():
            entries = [e for e in ledger.entries() if e["tool"] == call.name]
            assert [(e["key"], e["state"]) for e in entries] == [(call.key, "ran")], entries
        # the long-running call's card showed its progress as the server reported it
        assert progress[:2] == ["1/2 (50%)", "2/2 (100%)"], progress
        # its log messages reach its log and the /mcp panel's lines
        simulated = re.compile(r"\[(debug|info|notice|warning|error|critical|alert|emergency)\] \w+[ -]level[ -]"
                               r"message", re.IGNORECASE)  # its words, one of which the server misspells
        await wait_until(lambda: any(simulated.match(line) for line in status.messages),
                         "a simulated log message from the server", seen=lambda: list(status.messages))
        assert "[info] everything-server: Roots updated: 1 root(s) received from client" in status.messages
        log = (tmp_path / "logs" / "ev.log").read_text()
        assert "[callstream: log message]" in log
    finally:
        await registry.aclose()


@contextlib.contextmanager
def everything_over_http() -> Iterator[str]:
    """server-everything's Streamable HTTP transport on a free port of 127.0.0.1 only (a preload binds
    its ``listen(PORT)`` there); yields its URL and stops it after."""
    node = need_everything()

    def command(port: int) -> tuple[list[str], dict[str, str]]:
        return ([node, "--require", str(ROOT / "tests" / "loopback_listen.cjs"), str(ENTRY), "streamableHttp"],
                {"PATH": os.environ.get("PATH", ""), "PORT": str(port)})

    with listening_on_loopback("server-everything", command) as url:
        yield url


async def test_everything_over_streamable_http_sends_progress_to_the_card(tmp_path: Path) -> None:
    with everything_over_http() as url:
        registry = Registry([])
        hub = open_hub(parse_servers({"ev": {"url": url, "approval": "never"}}, "test"), tmp_path / "logs")
        attach_servers(registry, hub)
        await registry.settled()
        status = hub.servers[0].status
        arguments, expected = CALLS["trigger-long-running-operation"]
        script = streamgen.call_script(0, "c0", "ev__trigger-long-running-operation", json.dumps(arguments))
        try:
            assert status.state == "ready" and status.transport == "http", status.line()
            with FaultServer() as model:
                model.replies.append(Reply(streamgen.anthropic(script)))
                model.replies.append(Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")))
                session = ChatSession(Endpoint("anthropic", model.url, "m", "test"), registry,
                                      Ledger(tmp_path / "l.db"), "conv-http", backoff=0.01,
                                      timeouts=Timeouts(10.0, 30.0, 60.0))
                progress: list[str] = []

                def listen(event: object) -> None:
                    if isinstance(event, CallState) and event.state == "running":
                        block = session.turns[-1].blocks[event.index]
                        if isinstance(block, ToolCallBlock) and block.progress:
                            progress.append(block.progress)

                session.listeners.append(listen)
                try:
                    done = await session.send("take your time")
                finally:
                    await session.aclose()
        finally:
            await registry.aclose()
    assert done.status == "done", done
    call = session.turns[0].blocks[0]
    assert isinstance(call, ToolCallBlock) and call.state == "ran" and expected in (call.result or "")
    assert progress[:2] == ["1/2 (50%)", "2/2 (100%)"], progress
    assert expected in json.dumps(model.requests[1]["body"]["messages"])


def test_mcp_list_and_doctor_name_the_task_tool_not_offered(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = everything()
    args = ", ".join(json.dumps(a) for a in table["args"])
    (home / "config.toml").write_text(f"[mcp.ev]\ncommand = {json.dumps(table['command'])}\nargs = [{args}]\n"
                                      "startup_timeout = 60\n")
    assert main(["mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert f"ev__simulate-research-query  (side effect)  'simulate-research-query' {TASKS_REQUIRED}" in out
    assert main(["mcp", "doctor"]) == 1
    out = capsys.readouterr().out
    assert f"ev · simulate-research-query (ev__simulate-research-query): {TASKS_REQUIRED}" in out
    assert "ev · echo" not in out
    assert main(["mcp", "list", "--json"]) == 0
    (server,) = json.loads(capsys.readouterr().out)
    assert server["unsupported"] == {"simulate-research-query": TASKS_REQUIRED}


def _whoami() -> Server[Any]:
    """An in-memory SDK server whose one tool answers what the client said of itself."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="whoami", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        client = ctx.session.client_params
        seen = {"info": client.client_info.model_dump(exclude_none=True) if client else None,
                "capabilities": (ctx.session.client_capabilities.model_dump(exclude_none=True)
                                 if ctx.session.client_capabilities else None)}
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(seen))])

    return Server("whoami", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.mark.parametrize("sampling", ["ask", "deny"])
async def test_the_client_says_it_is_callstream_and_declares_only_what_it_implements(tmp_path: Path,
                                                                                     sampling: str) -> None:
    from app.tools.base import ToolContext

    registry = Registry([])
    attach_servers(registry, open_hub(parse_servers({"me": {"command": "unused", "sampling": sampling}}, "test"),
                                      tmp_path, targets={"me": _whoami()}))
    await registry.settled()
    try:
        tool = registry.get("me__whoami")
        assert tool is not None
        seen = json.loads(await tool.run({}, ToolContext("k")))
    finally:
        await registry.aclose()
    assert seen["info"]["name"] == "callstream" and seen["info"]["version"] == __version__
    declared = {k for k, v in (seen["capabilities"] or {}).items() if v is not None}
    # what callstream implements: no tasks; sampling (text only: no sampling.tools) unless the server's is "deny"
    assert declared == {"elicitation", "roots"} | ({"sampling"} if sampling != "deny" else set()), seen
    assert seen["capabilities"].get("sampling") in ({}, None)
    assert set(seen["capabilities"]["elicitation"]) == {"form", "url"}


def test_a_log_level_outside_the_specification_is_refused() -> None:
    with pytest.raises(MCPConfigError, match="log_level must be one of debug, info"):
        parse_servers({"x": {"command": "x", "log_level": "loud"}}, "test")


def test_roots_that_are_not_a_list_of_paths_are_refused() -> None:
    with pytest.raises(MCPConfigError, match="roots"):
        parse_servers({"x": {"command": "x", "roots": "/tmp"}}, "test")


async def test_configured_roots_are_listed_as_file_uris(tmp_path: Path) -> None:
    from app.mcp.roots import Roots

    listed = await Roots([str(tmp_path), "${HERE}/sub"], {"HERE": str(tmp_path)})(None)
    assert [str(r.uri) for r in listed.roots] == [tmp_path.as_uri(), (tmp_path / "sub").as_uri()]
    assert (await Roots(None)(None)).roots[0].uri.path == str(Path.cwd().resolve())


def test_instructions_that_are_not_true_or_false_are_refused() -> None:
    with pytest.raises(MCPConfigError, match="instructions must be true or false"):
        parse_servers({"x": {"command": "x", "instructions": "yes"}}, "test")



async def test_the_mcp_screen_shows_the_task_tool_not_offered_and_the_server_log_messages(home: Path) -> None:
    from textual.widgets import Static

    from app.settings.config import load_config
    from app.tui.app import make_app
    from app.tui.mcp_screen import McpScreen
    from tests.waiting import wait_for
    from widgets.prompt_input import PromptInput

    table = everything()
    args = ", ".join(json.dumps(a) for a in table["args"])
    (home / "config.toml").write_text(f'[providers.demo]\nprovider = "demo"\n\n[mcp.ev]\n'
                                      f"command = {json.dumps(table['command'])}\nargs = [{args}]\n"
                                      'startup_timeout = 60\nlog_level = "debug"\n')
    app = make_app(config=load_config())
    app.cursor_blink = False
    async with app.run_test(size=(140, 60)) as pilot:
        app.screen.query_one(PromptInput).text = "/mcp"
        await pilot.press("enter")

        def servers() -> str:
            if not isinstance(app.screen, McpScreen):
                return ""
            return str(app.screen.query_one("#servers-text", Static).render())

        await wait_for(pilot, lambda: "ev__simulate-research-query  (not offered): requires task augmentation"
                       in servers(), "the task tool, not offered, on /mcp", seen=servers)
        assert isinstance(app.screen, McpScreen)
        server = app.screen.hub.servers[0]
        await server.call("toggle-simulated-logging", {}, "k-logging")  # the server starts logging at once
        await wait_for(pilot, lambda: "log messages (latest" in servers() and re.search(r"level[ -]message",
                                                                                         servers(), re.IGNORECASE),
                       "the server's log message on /mcp", seen=servers)
        await server.call("toggle-simulated-logging", {}, "k-logging-off")


async def test_a_log_message_below_the_level_is_dropped_and_a_hostile_one_is_one_inert_line(tmp_path: Path) -> None:
    from app.mcp.notifications import ServerMessages

    messages = ServerMessages("warning", tmp_path / "ev.log")
    await messages(types.LoggingMessageNotificationParams(level="info", data="chatty"))
    await messages(types.LoggingMessageNotificationParams(level="error", logger="db",
                                                          data="bad\x1b[2J\nthing"))
    assert list(messages.lines) == ["[error] db: bad\\x1b[2J thing"]  # the escape shown, never sent
    assert "chatty" not in (tmp_path / "ev.log").read_text()
    off = ServerMessages("off", None)
    await off(types.LoggingMessageNotificationParams(level="emergency", data="x"))
    assert not off.lines


async def test_instructions_false_keeps_a_servers_instructions_out_of_the_request(tmp_path: Path) -> None:
    table = everything(approval="never", instructions=False)
    registry = Registry([])
    attach_servers(registry, open_hub(parse_servers({"ev": table}, "test"), tmp_path / "logs"))
    await registry.settled()
    script = streamgen.call_script(0, "c0", "ev__echo", json.dumps({"message": "hi"}))
    try:
        with FaultServer() as model:
            model.replies.append(Reply(streamgen.anthropic(script)))
            model.replies.append(Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")))
            session = ChatSession(Endpoint("anthropic", model.url, "m", "test"), registry, Ledger(tmp_path / "l.db"),
                                  "conv-quiet", backoff=0.01, timeouts=Timeouts(10.0, 30.0, 60.0), system="Be brief.")
            try:
                done = await session.send("echo")
            finally:
                await session.aclose()
    finally:
        await registry.aclose()
    assert done.status == "done", done
    assert "Instructions from the MCP server" not in json.dumps(model.requests[0]["body"])
    assert "Be brief." in json.dumps(model.requests[0]["body"]["system"])
