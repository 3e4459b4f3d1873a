"""Issue 26 items 5 and 7: a server's resources — read by the model through the built-in,
read-only ``read_resource`` after a tool returned a link or an embedded resource, listed and read
on the command line, attached to a person's message, re-listed when the server says they
changed — against server-everything (peers/everything) and in-memory SDK servers."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.server import Server

from app.chat.session import ChatSession
from app.cli import main
from app.ledger import SqliteLedger as Ledger
from app.mcp import attach_servers, open_hub
from app.mcp.catalog import catalog_of
from app.mcp.resources import READER_NAME, ResourceError, as_attachments, as_text, read
from app.net.endpoint import Endpoint
from app.net.stream import Timeouts
from app.settings.mcp import parse_servers
from app.stream import ToolCallBlock
from app.stream.resource_lines import resource_refs
from app.tools.approvals import Approvals
from app.tools.registry import Registry
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.test_mcp_everything import everything
from tests.waiting import wait_until

LINKED = "demo://resource/dynamic/text/2"


async def chat_once(registry: Registry, tmp_path: Path, replies: list[bytes],
                    text: str) -> tuple[Any, ChatSession, FaultServer]:
    """``text`` sent through the real chat loop to a scripted Anthropic model answering ``replies`` in
    turn, with ``registry``'s tools: (how the exchange ended, the session, the model's server)."""
    with FaultServer() as model:
        model.replies += [Reply(reply) for reply in replies]
        session = ChatSession(Endpoint("anthropic", model.url, "m", "test"), registry, Ledger(tmp_path / "l.db"),
                              "conv-resources", backoff=0.01, timeouts=Timeouts(10.0, 30.0, 60.0))
        try:
            return await session.send(text), session, model
        finally:
            await session.aclose()


async def test_a_resource_link_on_a_card_is_read_by_the_model_through_the_read_only_built_in(tmp_path: Path) -> None:
    registry = Registry([])
    hub = open_hub(parse_servers({"ev": everything(approval="never")}, "test"), tmp_path / "logs")
    attach_servers(registry, hub)
    await registry.settled()
    try:
        reader = registry.get(READER_NAME)
        assert reader is not None and reader.read_only  # offered: ev declares resources
        assert reader.parameters["properties"]["server"]["enum"] == ["ev"]
        assert Approvals().decide(reader) == "run"  # the one approval function treats it as any read
        first = streamgen.interleave(
            streamgen.call_script(0, "c0", "ev__get-resource-links", json.dumps({"count": 2})),
            streamgen.call_script(1, "c1", "ev__get-resource-reference", json.dumps({})))
        second = streamgen.call_script(0, "c2", READER_NAME, json.dumps({"server": "ev", "uri": LINKED}))
        replies = [streamgen.anthropic(first), streamgen.anthropic(second),
                   streamgen.anthropic([("text", "Read it.")], stop_reason="end_turn")]
        done, session, model = await chat_once(registry, tmp_path, replies, "what do the resources say?")
    finally:
        await registry.aclose()
    assert done.status == "done", done
    assert READER_NAME in {t["name"] for t in model.requests[0]["body"]["tools"]}
    links, embedded = [b for b in session.turns[0].blocks if isinstance(b, ToolCallBlock)]
    # the card: the links as resource lines it can open, the embedded resource's text after its line
    assert f"[resource link {LINKED}: text/plain]" in (links.result or "")
    assert resource_refs(links.result or "") == ["demo://resource/dynamic/blob/1", LINKED]
    assert resource_refs(embedded.result or "") == ["demo://resource/dynamic/text/1"]
    assert "Resource 1: This is a plaintext resource" in (embedded.result or "")
    # the model read the linked resource through the built-in, and was sent what it says
    (reading,) = [b for b in session.turns[1].blocks if isinstance(b, ToolCallBlock)]
    assert (reading.name, reading.state) == (READER_NAME, "ran"), (reading.state, reading.result)
    assert f"[resource {LINKED}: text/plain" in (reading.result or "")
    assert "Resource 2: This is a plaintext resource" in (reading.result or "")
    assert "Resource 2: This is a plaintext resource" in json.dumps(model.requests[2]["body"]["messages"])


async def test_resources_templates_and_prompts_are_listed_and_read(tmp_path: Path) -> None:
    hub = open_hub(parse_servers({"ev": everything()}, "test"), tmp_path / "logs")
    catalog = catalog_of(hub)
    hub.start()
    try:
        await hub.wait_settled()
        await wait_until(lambda: catalog.offered["ev"].prompts, "ev's prompts to be listed")
        await catalog.settled()
        offered = catalog.offered["ev"]
        assert "demo://resource/static/document/architecture.md" in [r.uri for r in offered.resources]
        assert "demo://resource/dynamic/text/{resourceId}" in [t.uri_template for t in offered.templates]
        assert {p.name for p in offered.prompts} >= {"simple-prompt", "args-prompt", "resource-prompt"}
        blob = as_text(await read(catalog, "ev", "demo://resource/dynamic/blob/1"), 100_000)
        assert blob.startswith("[resource demo://resource/dynamic/blob/1: text/plain, ")  # a blob that is text
        assert "Resource 1" in blob
        (attached,) = as_attachments(await read(catalog, "ev", "demo://resource/dynamic/text/3"))
        assert attached.name == "demo://resource/dynamic/text/3" and attached.kind == "text"
        assert b"Resource 3" in attached.data
        with pytest.raises(ResourceError, match="no connected MCP server named 'nope'"):
            await read(catalog, "nope", "x://y")
        with pytest.raises(ResourceError, match="ev could not read demo://nothing"):
            await read(catalog, "ev", "demo://nothing")
    finally:
        await hub.close()


def _changing() -> tuple[Server[Any], dict[str, list[str]]]:
    """An in-memory server whose resources and prompts are what ``names`` says now; its one tool
    adds a resource and a prompt and says so (on the 2026-07-28 ``subscriptions/listen`` stream)."""
    from mcp.server.subscriptions import (
        InMemorySubscriptionBus,
        ListenHandler,
        PromptsListChanged,
        ResourcesListChanged,
        ResourceUpdated,
    )

    bus = InMemorySubscriptionBus()
    names: dict[str, list[str]] = {"resources": ["mem://a"], "prompts": ["first"]}

    async def read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
        if params.uri == "mem://bin":
            blob = base64.b64encode(bytes(range(256))).decode()
            return types.ReadResourceResult(contents=[types.BlobResourceContents(uri="mem://bin", blob=blob,
                                                                                 mime_type="application/x-thing")])
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text="hi\x1b[2J there",
                                                                             mime_type="text/plain")])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri=u, name=u) for u in names["resources"]])

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name=n) for n in names["prompts"]])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="grow", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        if params.name == "touch":
            await bus.publish(ResourceUpdated(uri="mem://a"))
            return types.CallToolResult(content=[types.TextContent(text="touched")])
        names["resources"].append("mem://b")
        names["prompts"].append("second")
        await bus.publish(ResourcesListChanged())
        await bus.publish(PromptsListChanged())
        return types.CallToolResult(content=[types.TextContent(text="grown")])

    return Server("changing", on_list_resources=list_resources, on_read_resource=read_resource,
                  on_list_prompts=list_prompts, on_list_tools=list_tools, on_call_tool=call_tool,
                  on_subscriptions_listen=ListenHandler(bus)), names


async def test_resources_and_prompts_list_changed_re_list_them(tmp_path: Path) -> None:
    server, _ = _changing()
    hub = open_hub(parse_servers({"mem": {"command": "unused"}}, "test"), tmp_path, targets={"mem": server})
    catalog = catalog_of(hub)
    told: list[int] = []
    catalog.listeners.append(lambda: told.append(1))
    hub.start()
    try:
        await hub.wait_settled()
        await wait_until(lambda: catalog.offered["mem"].prompts, "the first listing")
        await catalog.settled()
        assert [r.uri for r in catalog.offered["mem"].resources] == ["mem://a"]
        before = len(told)
        await hub.servers[0].call("grow", {}, "k-grow")
        await wait_until(lambda: [p.name for p in catalog.offered["mem"].prompts] == ["first", "second"]
                         and [r.uri for r in catalog.offered["mem"].resources] == ["mem://a", "mem://b"],
                         "both lists listed again", seen=lambda: catalog.offered["mem"])
        assert len(told) > before
        binary = as_text(await read(catalog, "mem", "mem://bin"), 100_000)
        assert binary == "[resource mem://bin: application/x-thing, 256 B] (binary content, not shown to the model)"
        (summary,) = as_attachments(await read(catalog, "mem", "mem://bin"))
        assert summary.kind == "text" and summary.data.decode() == binary  # a stated summary, never the bytes
    finally:
        await hub.close()


def test_mcp_resources_and_mcp_read_on_the_command_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = everything()
    args = ", ".join(json.dumps(a) for a in table["args"])
    (home / "config.toml").write_text(f"[mcp.ev]\ncommand = {json.dumps(table['command'])}\nargs = [{args}]\n"
                                      "startup_timeout = 60\n")
    assert main(["mcp", "resources", "ev"]) == 0
    out = capsys.readouterr().out
    assert "demo://resource/static/document/architecture.md" in out
    assert "demo://resource/dynamic/text/{resourceId}" in out
    assert main(["mcp", "read", "ev", "demo://resource/dynamic/text/4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[resource demo://resource/dynamic/text/4: text/plain") and "Resource 4" in out
    assert main(["mcp", "read", "ev", "demo://nothing"]) == 1
    assert "ev could not read demo://nothing" in capsys.readouterr().err
    assert main(["mcp", "resources", "nope"]) == 2
    assert "no MCP server named 'nope'" in capsys.readouterr().err


def test_a_resource_line_names_its_uri_once_and_a_hostile_uri_stays_one_token() -> None:
    from app.stream.resource_lines import link_line

    text = "\n".join([link_line("a://x y\nz", None), link_line("a://x y\nz", "text/plain"), "[resource b://c: t, 1 B]"])
    assert resource_refs(text) == ["a://xyz", "b://c"]


def fixture_server(**extra: Any) -> dict[str, Any]:
    import sys

    from tests.conftest import ROOT

    return {"command": sys.executable, "args": ["-m", "tests.mcp_resources_fixture"], "cwd": str(ROOT),
            "startup_timeout": 60, **extra}


async def test_an_image_resource_read_by_the_model_reaches_it_as_an_image(tmp_path: Path, home: Path) -> None:
    registry = Registry([])
    attach_servers(registry, open_hub(parse_servers({"rx": fixture_server()}, "test"), tmp_path / "logs"))
    await registry.settled()
    try:
        script = streamgen.call_script(0, "c0", READER_NAME, json.dumps({"server": "rx", "uri": "img://pixel"}))
        replies = [streamgen.anthropic(script), streamgen.anthropic([("text", "A picture.")], stop_reason="end_turn")]
        done, session, model = await chat_once(registry, tmp_path, replies, "look at the pixel")
    finally:
        await registry.aclose()
    assert done.status == "done", done
    (call,) = [b for b in session.turns[0].blocks if isinstance(b, ToolCallBlock)]
    assert call.state == "ran" and "(sent to the model as an image; attachment " in (call.result or "")
    sent = json.dumps(model.requests[1]["body"]["messages"])
    assert '"type": "image"' in sent and '"media_type": "image/png"' in sent  # the image itself, in the result


async def test_a_tool_result_with_resource_links_lists_them_for_the_card(tmp_path: Path) -> None:
    from tests.mcp_resources_fixture import HOSTILE

    registry = Registry([])
    hub = open_hub(parse_servers({"rx": fixture_server()}, "test"), tmp_path / "logs")
    attach_servers(registry, hub)
    await registry.settled()
    try:
        tool = registry.get("rx__linker")
        assert tool is not None
        from app.tools.base import ToolContext

        text = await tool.run({}, ToolContext("k"))
        assert resource_refs(text) == ["hostile://note", "img://pixel", "bin://blob"]
        catalog = catalog_of(hub)
        note = as_text(await read(catalog, "rx", "hostile://note"), 100_000)
        assert note.endswith(HOSTILE)  # the model gets the text as the server wrote it; screens show it inert
        assert as_text(await read(catalog, "rx", "bin://blob"), 100_000).endswith("(binary content, not shown to "
                                                                                  "the model)")
    finally:
        await registry.aclose()


async def test_read_resource_without_a_uri_is_a_failed_call_that_says_what_it_needs(tmp_path: Path) -> None:
    from app.tools.base import ToolContext, ToolError

    registry = Registry([])
    attach_servers(registry, open_hub(parse_servers({"rx": fixture_server()}, "test"), tmp_path / "logs"))
    await registry.settled()
    try:
        reader = registry.get(READER_NAME)
        assert reader is not None
        with pytest.raises(ToolError, match=r"read_resource needs a server \(one of rx\) and a uri"):
            await reader.run({"server": "rx"}, ToolContext("k"))
        with pytest.raises(ToolError, match="no connected MCP server named 'elsewhere'"):
            await reader.run({"server": "elsewhere", "uri": "a://b"}, ToolContext("k2"))
    finally:
        await registry.aclose()


# -- pure parts: the resource lines and a prompt's typed arguments (properties and bad input) ---------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from app.mcp.catalog import Prompt, PromptArgument  # noqa: E402
from app.mcp.prompts import PromptError, parse_arguments  # noqa: E402
from app.stream.resource_lines import binary_line, link_line, resource_head  # noqa: E402

_URI = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@given(st.lists(st.tuples(_URI, st.sampled_from(["link", "head", "binary"]), st.text(max_size=30)), max_size=8),
       st.text(max_size=200))
def test_every_resource_line_is_found_again_once_whatever_surrounds_it(lines: list[tuple[str, str, str]],
                                                                      noise: str) -> None:
    text = noise.replace("[resource", "(resource")
    expected: list[str] = []
    for uri, kind, body in lines:
        made = {"link": link_line(uri, "text/plain"), "head": resource_head(uri, None, "1 B"),
                "binary": binary_line(uri, "x/y", "2 B")}[kind]
        text += f"\n{made}\n{body.replace('[resource', '(resource')}"
        one = "".join(uri.split()) or "?"
        if one not in expected and "]" not in one:
            expected.append(one)
    found = resource_refs(text)
    assert [u for u in found if u in expected] == expected


ARGS = Prompt("p", arguments=(PromptArgument("city", required=True), PromptArgument("state")))


@given(st.text(min_size=1, max_size=30), st.one_of(st.none(), st.text(max_size=30)))
def test_prompt_arguments_typed_quoted_are_read_back_as_typed(city: str, state: str | None) -> None:
    import shlex

    typed = f"city={shlex.quote(city)}" + (f" state={shlex.quote(state)}" if state is not None else "")
    expected = {"city": city, **({"state": state} if state is not None else {})}
    assert parse_arguments("s", ARGS, typed) == expected


def test_a_prompt_argument_by_position_fills_the_first_not_named() -> None:
    assert parse_arguments("s", ARGS, "state=NY 'New York'") == {"state": "NY", "city": "New York"}


def test_a_missing_required_prompt_argument_names_the_usage() -> None:
    with pytest.raises(PromptError, match=r"/s:p needs city; usage: /s:p city=… \[state=…\]"):
        parse_arguments("s", ARGS, "state=NY")


def test_one_prompt_argument_too_many_is_refused() -> None:
    with pytest.raises(PromptError, match="takes no more arguments"):
        parse_arguments("s", ARGS, "a b c")


def test_an_unclosed_quote_in_prompt_arguments_is_refused() -> None:
    with pytest.raises(PromptError, match="cannot read the arguments"):
        parse_arguments("s", ARGS, "city='Paris")


async def test_a_subscription_on_a_2026_server_is_a_listen_stream_whose_updates_reach_the_catalog(
        tmp_path: Path) -> None:
    from app.mcp.resources import subscribe

    server, _ = _changing()
    hub = open_hub(parse_servers({"mem": {"command": "unused"}}, "test"), tmp_path, targets={"mem": server})
    catalog = catalog_of(hub)
    updated: list[tuple[str, str]] = []
    catalog.updates.append(lambda name, uri: updated.append((name, uri)))
    hub.start()
    try:
        await hub.wait_settled()
        assert hub.servers[0].status.protocol == "2026-07-28"
        assert await subscribe(catalog, "mem", "mem://a")
        await hub.servers[0].call("touch", {}, "k-touch")
        await wait_until(lambda: ("mem", "mem://a") in updated, "the update", seen=lambda: updated)
    finally:
        await hub.close()


def test_a_profile_may_name_read_resource_where_an_mcp_server_is_configured() -> None:
    from app.settings.checks import ConfigError
    from app.settings.tools import check_profile_tools

    check_profile_tools("config.toml", "p", ["read_resource", "ev__echo"], set(), {"ev"})
    with pytest.raises(ConfigError, match="names 'read_resource'"):
        check_profile_tools("config.toml", "p", ["read_resource"], set(), set())
