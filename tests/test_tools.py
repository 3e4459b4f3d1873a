"""Built-in tools over the support store, command tools from the config, and
the finaliser's verdicts."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path

import pytest

from app.demo.orders import SupportStore
from app.settings.checks import ConfigError
from app.settings.config import load_config
from app.settings.tools import CommandToolConfig
from app.stream import ToolCallBlock, assemble
from app.stream.strictjson import StrictJSONError, parse_arguments
from app.tools.base import ToolContext, ToolError
from app.tools.builtin import builtin_tools
from app.tools.command import command_tool
from app.tools.finalise import NotRun, Rejected, Valid, finalise
from app.tools.registry import Registry
from tests.conftest import fixture_params


def run(tool, arguments, key="k1"):  # type: ignore[no-untyped-def]
    async def go() -> str:
        return await tool.run(arguments, ToolContext(idempotency_key=key))

    return asyncio.run(go())


@pytest.fixture
def tools(tmp_path: Path):  # type: ignore[no-untyped-def]
    return {t.name: t for t in builtin_tools(tmp_path)}


def test_store_is_seeded_once_and_believably(tmp_path: Path) -> None:
    store = SupportStore(tmp_path / "s.db")
    first = store.search_orders(limit=100)
    store.close()
    again = SupportStore(tmp_path / "s.db").search_orders(limit=100)
    assert first == again and first["count"] == 60
    assert {o["status"] for o in first["orders"]} >= {"open", "late", "shipped", "delivered"}
    assert SupportStore(tmp_path / "s.db").get_order("A-1042")["customer"] == "Ada Lovelace"  # type: ignore[index]


def test_search_orders_filters(tools) -> None:  # type: ignore[no-untyped-def]
    result = json.loads(run(tools["search_orders"], {"customer": "ada", "status": "late"}))
    assert [o["order_id"] for o in result["orders"]] == ["A-1042"]
    assert json.loads(run(tools["search_orders"], {"customer": "100%_"}))["count"] == 0  # LIKE wildcards escaped
    dated = json.loads(run(tools["search_orders"], {"placed_from": "2026-11-01", "limit": 100}))
    assert all(o["placed"] >= "2026-11-01" for o in dated["orders"])


def test_get_order_missing_is_a_tool_error(tools) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolError, match="no order A-9999"):
        run(tools["get_order"], {"order_id": "A-9999"})


def test_create_ticket_honours_the_idempotency_key(tools, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = {"order_id": "A-1042", "subject": "Late", "body": "Where is it?"}
    first = json.loads(run(tools["create_ticket"], args, key="same"))
    again = json.loads(run(tools["create_ticket"], args, key="same"))
    other = json.loads(run(tools["create_ticket"], args, key="different"))
    assert first["ticket"] == again["ticket"] and again["replayed"] is True
    assert other["ticket"] != first["ticket"]
    assert len(SupportStore(tmp_path / "support.db").tickets()) == 2


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "tool.py"
    path.write_text(body)
    return [sys.executable, str(path)]


def test_command_tool_gets_json_stdin_and_the_key(tmp_path: Path) -> None:
    command = _script(tmp_path, "import sys, os, json\nargs = json.load(sys.stdin)\n"
                                "print(json.dumps({'got': args, 'key': os.environ['CALLSTREAM_IDEMPOTENCY_KEY']}))\n")
    tool = command_tool(CommandToolConfig("echo", command))
    assert json.loads(run(tool, {"a": "é"}, key="KEY")) == {"got": {"a": "é"}, "key": "KEY"}


def test_a_command_tool_reads_a_huge_argument_from_a_file_not_a_pipe(tmp_path: Path) -> None:
    """The JSON waits in a temporary file (stdin), not in our memory behind a pipe (issue 31 item 6)."""
    command = _script(tmp_path, "import sys, os, stat, json, hashlib\n"
                                "regular = stat.S_ISREG(os.fstat(0).st_mode)\n"
                                "args = json.load(sys.stdin)\n"
                                "print(json.dumps({'regular': regular, 'size': len(args['body']),\n"
                                "                  'sha': hashlib.sha256(args['body'].encode()).hexdigest()}))\n")
    body = ("é\"\\ parcel \n" * 200_000)[:2_000_000]
    got = json.loads(run(command_tool(CommandToolConfig("big", command)), {"body": body, "n": 1}))
    assert got == {"regular": True, "size": len(body), "sha": hashlib.sha256(body.encode()).hexdigest()}


def test_command_tool_nonzero_exit_is_a_failure_with_stderr(tmp_path: Path) -> None:
    command = _script(tmp_path, "import sys\nsys.stderr.write('disk full')\nsys.exit(3)\n")
    with pytest.raises(ToolError, match="disk full"):
        run(command_tool(CommandToolConfig("bad", command)), {})


def test_command_tool_timeout(tmp_path: Path) -> None:
    command = _script(tmp_path, "import signal\nsignal.pause()\n")  # the scenario: a tool that outlives its timeout
    with pytest.raises(ToolError, match="timed out"):
        run(command_tool(CommandToolConfig("slow", command, timeout=0.3)), {})


def test_command_tool_missing_program() -> None:
    with pytest.raises(ToolError, match="cannot start"):
        run(command_tool(CommandToolConfig("gone", ["/nonexistent/program"])), {})


def test_config_declares_command_tools_and_profiles(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'default = "local"\n'
        '[providers.local]\nprovider = "openai-chat"\nmodel = "qwen"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'read_timeout = 300\n'
        '[tools.note]\ncommand = "python3 note.py --fast"\ndescription = "Append a note"\n'
        'display = ["text", ["when", "When"]]\ntimeout = 5\n'
        'parameters = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }\n'
    )
    config = load_config(path)
    profile = config.profile()
    assert (profile.provider, profile.model, profile.read_timeout) == ("openai-chat", "qwen", 300.0)
    tool = config.tools["note"]
    assert tool.command == ["python3", "note.py", "--fast"] and tool.display == [("text", "Text"), ("when", "When")]
    registry = Registry.default(tmp_path, config)
    assert registry.names() == ["search_orders", "get_order", "create_ticket", "note"]


@pytest.mark.parametrize("text,message", [
    ("[providers.x]\nprovider = 'cohere'\n", "provider must be one of"),
    ("[providers.x]\napi_key = 'sk-123'\n", "keys do not go in the config file"),
    ("[providers.x]\nread_timeout = -1\n", "read_timeout must be a positive number"),
    ("[tools.t]\ncommand = 5\n", "command must be a command line"),
    ("[tools.t]\ncommand = 'x'\nparameters = 'nope'\n", "parameters is not JSON"),
    ("[tools.t]\ncommand = 'x'\ndisplay = 'text'\n", "display must be a list of field names or [field, label] pairs"),
    ("[tools.t]\ncommand = 'x'\ndisplay = [['text']]\n", "display entries are field names or [field, label] pairs"),
    ("default = 'missing'\n", None),
    ("this is = not toml [", "not valid TOML"),
])
def test_bad_config_is_a_clear_error(tmp_path: Path, text: str, message: str | None) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path).profile()
    assert str(path) in str(caught.value)
    if message:
        assert message in str(caught.value)


def _call(name: str, raw: str) -> ToolCallBlock:
    turn = assemble([
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"'
        + name.encode() + b'","arguments":' + json.dumps(raw).encode() + b'}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
    ])
    return turn.calls[0]


def test_finalise_valid_rejected_and_not_run(tmp_path: Path) -> None:
    registry = Registry.default(tmp_path)
    assert finalise(_call("get_order", '{"order_id": "A-1042"}'), registry) == Valid({"order_id": "A-1042"})
    unknown = finalise(_call("delete_everything", "{}"), registry)
    assert isinstance(unknown, Rejected) and "no tool called 'delete_everything'" in unknown.message
    assert "search_orders" in unknown.message
    wrong = finalise(_call("create_ticket", '{"order_id": 1042, "priority": "urgent!!"}'), registry)
    assert isinstance(wrong, Rejected)
    assert "order_id: 1042 is not of type 'string'" in wrong.message
    assert "'subject' is a required property" in wrong.message and "Nothing was run" in wrong.message
    broken = finalise(_call("get_order", '{"order_id": "A-1042"'), registry)
    assert isinstance(broken, NotRun) and "do not parse" in broken.reason


@pytest.mark.parametrize("path", fixture_params())
def test_every_prefix_of_a_real_call_fails_or_differs(path: Path) -> None:
    """The brief's third lesson, on real calls: every proper prefix of the
    argument buffer either fails to parse strictly, or fails the tool's schema
    (here: one requiring every field the final call has), or parses to
    arguments different from the final ones. Dispatching early is never safe."""
    from app.tools.finalise import schema_problems

    for call in assemble([path.read_bytes()]).calls:
        if not call.final or call.provider_executed:
            continue
        final = call.arguments
        assert final is not None
        schema = {"type": "object", "required": sorted(final), "properties": {k: {} for k in final}}
        raw = call.arguments_raw
        outcomes = {"no parse": 0, "schema": 0, "different": 0}
        for cut in range(len(raw)):
            prefix = raw[:cut]
            if prefix.strip() == raw.strip():
                continue  # only trailing whitespace was missing
            try:
                early = parse_arguments(prefix)
            except StrictJSONError:
                outcomes["no parse"] += 1
                continue
            assert early != final, (path.name, cut)
            outcomes["schema" if schema_problems(schema, early) else "different"] += 1
        assert sum(outcomes.values()) >= len(raw.rstrip()) - 1


def test_a_ticket_body_of_megabytes_is_stored_as_it_was_written(tools, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The body goes in a piece at a time (``dbfile.put_text``) and reads back as the text it was."""
    body = 'Where is it? "é😀" \\ \n' * 60_000
    args = {"order_id": "A-1042", "subject": "Late", "body": body}
    ticket = json.loads(run(tools["create_ticket"], args, key="big"))["ticket"]
    stored = {t["ticket_id"]: t for t in SupportStore(tmp_path / "support.db").tickets()}
    assert stored[ticket]["body"] == body and stored[ticket]["subject"] == "Late"
