"""A server's request to the model (MCP sampling, issue 26 item 3): server-everything's
``trigger-sampling-request`` called by a scripted model through the real chat loop (stdio and
Streamable HTTP), the person sending it, editing the reply and refusing; ``ask`` refusing unless
allowed; the per-server setting; what is kept; exactly once under the fixture server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.chat.events import CallState
from app.chat.session import ChatSession
from app.ledger import SqliteLedger as Ledger
from app.mcp import attach_servers, open_hub
from app.net.endpoint import Endpoint
from app.net.stream import Timeouts
from app.settings.mcp import MCPConfigError, parse_servers
from app.stream import ToolCallBlock
from app.stream.blocks import block_from_record, block_record
from app.stream.sampling import SamplingRequest, choose_model, parse_sampling
from app.tools.registry import Registry
from tests import streamgen
from tests.faultserver import FaultServer, Reply
from tests.test_mcp_everything import everything, everything_over_http

TOOL = "ev__trigger-sampling-request"
#: What server-everything sends for ``prompt`` (its tool's own words around it).
ASKED = "Resource trigger-sampling-request context: "


def person(session: ChatSession, answers: list[tuple[str, str | None]]) -> list[SamplingRequest]:
    """A listener that answers each state of each request to the model the moment its card shows it,
    with the next of ``answers`` ("send" | "return" | "refuse", edited text); returns those that waited."""
    seen: list[SamplingRequest] = []

    def answer(key: str, asked: SamplingRequest) -> None:
        if session.sampling.waiting(key) is not asked:
            return
        if asked not in seen:
            seen.append(asked)  # it waited for the person
        if answers and session.sampling.answer(key, *answers[0]):
            answers.pop(0)

    def listen(event: object) -> None:
        if isinstance(event, CallState) and event.state == "running":
            block = session.turns[-1].blocks[event.index]
            if (
                isinstance(block, ToolCallBlock)
                and block.samplings
                and block.samplings[-1].state in ("asked", "replied")
            ):
                asked = block.samplings[-1]
                assert block.key is not None
                asyncio.get_running_loop().call_soon(answer, block.key, asked)

    session.listeners.append(listen)
    return seen


async def run_through_loop(
    tmp_path: Path, table: dict[str, Any], answers: list[tuple[str, str | None]], sampled: bytes | None
) -> tuple[ChatSession, FaultServer, list[SamplingRequest]]:
    """One exchange: the model calls the sampling tool, the request is answered, the model says Done."""
    registry = Registry([])
    hub = open_hub(parse_servers({"ev": table}, "test"), tmp_path / "logs")
    attach_servers(registry, hub)
    await registry.settled()
    script = streamgen.call_script(0, "c0", TOOL, json.dumps({"prompt": "name a colour", "maxTokens": 25}))
    try:
        assert registry.get(TOOL) is not None, hub.servers[0].status.line()
        with FaultServer() as model:
            model.replies.append(Reply(streamgen.anthropic([("text", "Asking. "), *script])))
            if sampled is not None:
                model.replies.append(Reply(sampled))
            model.replies.append(Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")))
            session = ChatSession(
                Endpoint("anthropic", model.url, "m", "test"),
                registry,
                Ledger(tmp_path / "l.db"),
                "conv-sampling",
                backoff=0.01,
                timeouts=Timeouts(10.0, 30.0, 60.0),
                system="Be brief.",
            )
            seen = person(session, answers)
            try:
                done = await session.send("sample something")
            finally:
                await session.aclose()
    finally:
        await registry.aclose()
    assert done.status == "done", done
    return session, model, seen


def the_call(session: ChatSession) -> ToolCallBlock:
    (call,) = [b for b in session.turns[0].blocks if isinstance(b, ToolCallBlock)]
    return call


async def test_sampling_over_stdio_asks_runs_and_returns_the_edited_reply(tmp_path: Path) -> None:
    reply = streamgen.anthropic([("text", "Teal.")], stop_reason="end_turn")
    session, model, seen = await run_through_loop(
        tmp_path, everything(approval="never"), [("send", None), ("return", "Teal, edited.")], reply
    )
    call = the_call(session)
    assert call.state == "ran", (call.state, call.result)
    (asked,) = call.samplings
    assert seen == [asked]
    # what the card shows: the server, its message, its system prompt, maxTokens, the model chosen
    assert asked.headline() == f"ev asks the model: {ASKED}name a colour"
    assert asked.system == "You are a helpful test server." and asked.max_tokens == 25
    assert asked.chosen == "m (the current model)"
    assert (asked.state, asked.reply, asked.returned, asked.edited) == ("returned", "Teal.", "Teal, edited.", True)
    # what the model was sent: the server's messages and system prompt, its maxTokens, no tools
    sampling = model.requests[1]["body"]
    assert sampling["system"] == "You are a helpful test server." and sampling["max_tokens"] == 25
    assert json.dumps(sampling["messages"]).count(ASKED + "name a colour") == 1 and "tools" not in sampling
    # the server got the edited reply, and the model the tool's result with it
    assert "Teal, edited." in (call.result or "") and "Teal, edited." in json.dumps(model.requests[2]["body"])
    # the tokens it spent count in the turn's usage (the usage line reads it)
    assert session.turns[0].usage is not None and asked.usage is not None
    assert session.turns[0].usage.input == 2 * asked.usage.input  # type: ignore[operator]
    # exactly once: the call ran once, under its one key
    entries = [e for e in Ledger(tmp_path / "l.db").entries() if e["tool"] == TOOL]
    assert [(e["key"], e["state"]) for e in entries] == [(call.key, "ran")]


async def test_refused_before_it_is_sent_nothing_reaches_the_model(tmp_path: Path) -> None:
    session, model, _ = await run_through_loop(tmp_path, everything(approval="never"), [("refuse", None)], None)
    call = the_call(session)
    (asked,) = call.samplings
    assert (asked.state, asked.reason) == ("refused", "the person refused to send it to the model")
    assert len(model.requests) == 2  # the turn and the next: no sampling request
    assert "User rejected sampling request" in (call.result or "")


async def test_a_refused_reply_never_reaches_the_server(tmp_path: Path) -> None:
    reply = streamgen.anthropic([("text", "Secret plan.")], stop_reason="end_turn")
    session, model, _ = await run_through_loop(
        tmp_path, everything(approval="never"), [("send", None), ("refuse", None)], reply
    )
    call = the_call(session)
    (asked,) = call.samplings
    assert (asked.state, asked.reply, asked.returned) == ("refused", "Secret plan.", None)
    assert "Secret plan." not in (call.result or "") and "Secret plan." not in json.dumps(model.requests[2]["body"])


async def test_sampling_allowed_over_streamable_http_runs_without_asking(tmp_path: Path) -> None:
    reply = streamgen.anthropic([("text", "Blue.")], stop_reason="end_turn")
    with everything_over_http() as url:
        session, model, seen = await run_through_loop(
            tmp_path, {"url": url, "approval": "never", "sampling": "allow"}, [], reply
        )
    call = the_call(session)
    (asked,) = call.samplings
    assert seen == [] and (asked.state, asked.returned) == ("returned", "Blue.")
    assert model.requests[1]["body"]["max_tokens"] == 25 and "Blue." in (call.result or "")


async def test_deny_declares_no_sampling_so_the_tool_is_not_offered(tmp_path: Path) -> None:
    registry = Registry([])
    hub = open_hub(parse_servers({"ev": everything(sampling="deny")}, "test"), tmp_path / "logs")
    attach_servers(registry, hub)
    await registry.settled()
    try:
        assert hub.servers[0].status.state == "ready"
        assert registry.get("ev__echo") is not None and registry.get(TOOL) is None
    finally:
        await registry.aclose()


def test_the_setting_is_one_of_ask_allow_deny() -> None:
    assert parse_servers({"a": {"command": "x"}}, "t")["a"].sampling == "ask"
    assert parse_servers({"a": {"command": "x", "sampling": "allow"}}, "t")["a"].sampling == "allow"
    with pytest.raises(MCPConfigError, match=r"mcp\.a\.sampling must be one of ask, allow, deny"):
        parse_servers({"a": {"command": "x", "sampling": "yes"}}, "mcp")


HI = {"role": "user", "content": {"type": "text", "text": "hi"}}


@pytest.mark.parametrize(
    ("params", "why"),
    [
        pytest.param(
            {
                "messages": [{"role": "user", "content": {"type": "image", "data": "", "mimeType": "image/png"}}],
                "maxTokens": 5,
            },
            "a message holds image content, and callstream sends a server's request to the model as text only",
            id="image",
        ),
        pytest.param({"messages": [], "maxTokens": 5}, "it holds no messages", id="no-messages"),
        pytest.param({"messages": "hi", "maxTokens": 5}, "it holds no messages", id="messages-not-a-list"),
        pytest.param(
            {"messages": [{"role": "system", "content": HI["content"]}], "maxTokens": 5},
            "a message has the role 'system'",
            id="unknown-role",
        ),
        pytest.param(
            {"messages": [{"role": "assistant", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5},
            "its last message is not the user's, so there is nothing for the model to answer",
            id="last-not-user",
        ),
        pytest.param(
            {"messages": [HI], "maxTokens": 5, "tools": [{"name": "x"}]},
            "it asks the model to use tools, which callstream does not offer a server",
            id="tools",
        ),
        pytest.param({"messages": [HI]}, "its maxTokens is not a positive whole number", id="no-max-tokens"),
        pytest.param(
            {"messages": [HI], "maxTokens": 0}, "its maxTokens is not a positive whole number", id="zero-max-tokens"
        ),
    ],
)
def test_a_request_callstream_cannot_send_is_refused_saying_why(params: dict[str, Any], why: str) -> None:
    asked = parse_sampling("s", params)
    assert (asked.state, asked.reason) == ("refused", f"callstream cannot send this request: {why}")


def test_model_hints_pick_a_model_the_profile_offers_else_the_current_one() -> None:
    assert choose_model(["sonnet"], "gpt-5", ["claude-sonnet-4-5"]) == (
        "claude-sonnet-4-5",
        "claude-sonnet-4-5 (the server's hint 'sonnet')",
    )
    assert choose_model(["opus", "gpt"], "gpt-5", []) == ("gpt-5", "gpt-5 (the server's hint 'gpt')")
    model, words = choose_model(["claude-3"], "gpt-5", ["gpt-5-mini"])
    assert model == "gpt-5" and "no model this profile offers matches the hints 'claude-3'" in words


def test_what_is_kept_is_redacted_and_survives_the_store() -> None:
    from app.stream.redact import register_secret

    secret = "sk-live-0123456789abcdefghijklmnop"
    register_secret(secret)
    asked = parse_sampling(
        "ev",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": f"use {secret}"}}],
            "systemPrompt": "Be kind.",
            "maxTokens": 9,
        },
    )
    asked.state, asked.reply, asked.returned, asked.model = "returned", f"ok {secret}", "ok", "m"
    block = ToolCallBlock("c1", "ev__x", state="ran", result="ok", samplings=[asked])
    back = block_from_record(json.loads(json.dumps(block_record(block))))
    assert isinstance(back, ToolCallBlock)
    (kept,) = back.samplings
    assert secret not in json.dumps(block_record(block))
    assert (kept.state, kept.returned, kept.system, kept.max_tokens) == ("returned", "ok", "Be kind.", 9)
    assert kept.messages[0].text == "use [redacted]" and kept.reply == "ok [redacted]"


@given(
    st.dictionaries(
        st.sampled_from(["messages", "maxTokens", "systemPrompt", "modelPreferences", "tools"]),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(
                    st.sampled_from(["role", "content", "type", "text", "hints", "name"]), inner, max_size=3
                )
            ),
            max_leaves=12,
        ),
    )
)
def test_any_params_give_a_request_or_a_stated_refusal_never_an_error(params: dict[str, Any]) -> None:
    asked = parse_sampling("s", params)
    assert asked.state == "asked" or (asked.state == "refused" and asked.reason)
    assert SamplingRequest.from_dict(json.loads(json.dumps(asked.to_dict()))) is not None


@pytest.fixture
def home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The profile's key variable set (its value never matters to the scripted model)."""
    monkeypatch.setenv("NO_KEY", "not-a-real-key")
    return home


def ask_config(home: Path, url: str, **server: str) -> None:
    table = everything(approval="never", **server)
    args = ", ".join(json.dumps(a) for a in table["args"])
    extra = "".join(f'{k} = "{v}"\n' for k, v in server.items())
    (home / "config.toml").write_text(
        f'default = "fx"\n[providers.fx]\nprovider = "anthropic"\nbase_url = "{url}"\nmodel = "m"\n'
        f'key_env = "NO_KEY"\n\n[mcp.ev]\ncommand = {json.dumps(table["command"])}\nargs = [{args}]\n'
        f'startup_timeout = 60\napproval = "never"\n{extra}'
    )


def sampling_call() -> bytes:
    return streamgen.anthropic(streamgen.call_script(0, "c1", TOOL, json.dumps({"prompt": "name a colour"})))


def test_ask_refuses_a_request_to_the_model_says_so_and_exits_1(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli.ask import run_ask

    with FaultServer() as server:
        server.replies += [
            Reply(sampling_call()),
            Reply(streamgen.anthropic([("text", "It was refused.")], stop_reason="end_turn")),
        ]
        ask_config(home, server.url)
        code = run_ask("sample something")
    err = capsys.readouterr().err
    assert code == 1
    assert (
        f"! ev asks the model: {ASKED}name a colour — refused (callstream ask never prompts, so it refused it "
        '(sampling = "allow" for the server lets it through)); so the call ev__trigger-sampling-request '
        "failed"
    ) in err
    assert len(server.requests) == 2  # nothing was sent to the model for the server
    assert "User rejected sampling request" in json.dumps(server.requests[1]["body"])


def test_ask_runs_a_request_the_config_allows_and_counts_its_tokens(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.ask import run_ask

    with FaultServer() as server:
        server.replies += [
            Reply(sampling_call()),
            Reply(streamgen.anthropic([("text", "Teal.")], stop_reason="end_turn")),
            Reply(streamgen.anthropic([("text", "It said teal.")], stop_reason="end_turn")),
        ]
        ask_config(home, server.url, sampling="allow")
        code = run_ask("sample something", as_json=True)
    printed = capsys.readouterr()
    out = json.loads(printed.out)
    assert code == 0, out
    assert (
        f"· ev asks the model: {ASKED}name a colour — sent to m (the current model); returned (as the model "
        "wrote it, m): Teal."
    ) in printed.err
    assert server.requests[1]["body"]["max_tokens"] == 100  # the tool's default maxTokens
    (call,) = [b for b in out["turns"][0]["blocks"] if b["type"] == "tool_call"]
    assert call["state"] == "ran" and "Teal." in call["result"]
    assert call["samplings"][0]["state"] == "returned" and call["samplings"][0]["returned"] == "Teal."
    # three requests' tokens: the turn, the server's request, the next turn
    per_request = call["samplings"][0]["usage"]["input"]
    assert out["usage"]["input"] == 3 * per_request


def test_ask_elicit_answers_a_form_from_the_command_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli.ask import run_ask

    script = streamgen.call_script(0, "c1", "ev__trigger-elicitation-request", "{}")
    with FaultServer() as server:
        server.replies += [
            Reply(streamgen.anthropic(script)),
            Reply(streamgen.anthropic([("text", "Thanks.")], stop_reason="end_turn")),
        ]
        ask_config(home, server.url)
        code = run_ask("ask me", elicit={"name": "Ada Lovelace", "integer": "7"}, elicit_defaults=True)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "- Name: Ada Lovelace" in json.dumps(server.requests[1]["body"])


def test_ask_elicit_without_a_required_value_declines_saying_which(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.ask import run_ask

    script = streamgen.call_script(0, "c1", "ev__trigger-elicitation-request", "{}")
    with FaultServer() as server:
        server.replies += [
            Reply(streamgen.anthropic(script)),
            Reply(streamgen.anthropic([("text", "Declined.")], stop_reason="end_turn")),
        ]
        ask_config(home, server.url)
        code = run_ask("ask me", elicit={"integer": "7"})
    err = capsys.readouterr().err
    assert code == 1
    assert (
        "the ev server asked for input (Please provide inputs for the following fields:); no value given for"
        " name" in err
    )


def test_ask_elicit_that_is_not_field_equals_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["ask", "hi", "--elicit", "name"])
    assert exit_.value.code == 2
    assert "'name': expected FIELD=VALUE (e.g. name=Ada)" in capsys.readouterr().err


@given(
    st.dictionaries(
        st.sampled_from(["server", "state", "messages", "hints", "usage", "max_tokens", "reply"]),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.sampled_from(["role", "text", "input"]), inner, max_size=3)
            ),
            max_leaves=10,
        ),
    )
)
def test_any_stored_record_reads_back_as_a_request_never_an_error(record: dict[str, Any]) -> None:
    back = SamplingRequest.from_dict(record)
    assert back is not None and back.state in ("returned", "refused", "failed")


async def test_a_request_to_the_model_inside_a_side_effect_keeps_its_key_and_runs_it_once(tmp_path: Path) -> None:
    import sys

    from app.tools.dispatcher import CallUpdate, Dispatcher
    from tests.conftest import ROOT

    counts = tmp_path / "runs.json"
    table = {
        "command": sys.executable,
        "args": ["-m", "tests.mcp_poet"],
        "cwd": str(ROOT),
        "approval": "never",
        "env": {"MCP_POET_COUNTS": str(counts), "PYTHONPATH": str(ROOT)},
    }
    registry = Registry([])
    attach_servers(registry, open_hub(parse_servers({"poet": table}, "test"), tmp_path / "logs"))
    await registry.settled()
    ledger = Ledger(tmp_path / "l.db")
    try:
        script = streamgen.call_script(0, "c0", "poet__write_poem", "{}")
        with FaultServer() as model:
            model.replies += [
                Reply(streamgen.anthropic(script)),
                Reply(streamgen.anthropic([("text", "Waves.")], stop_reason="end_turn")),
                Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")),
            ]
            session = ChatSession(
                Endpoint("anthropic", model.url, "m", "test"),
                registry,
                ledger,
                "conv-once",
                backoff=0.01,
                timeouts=Timeouts(10.0, 30.0, 60.0),
            )
            person(session, [("send", None), ("return", None)])
            try:
                done = await session.send("a poem")
            finally:
                await session.aclose()
        assert done.status == "done", done
        call = the_call(session)
        said = json.loads(call.result or "{}")
        assert said == {"poem": "Waves.", "key": call.key, "runs": 1}  # the key the ledger holds, one run
        entries = [e for e in ledger.entries() if e["tool"] == "poet__write_poem"]
        assert [(e["key"], e["state"]) for e in entries] == [(call.key, "ran")]
        # the same call of the same turn again (a retry, a reopened conversation): the ledger answers, the
        # tool does not run again and its server asks the model nothing
        updates: list[CallUpdate] = []
        again = Dispatcher(registry, ledger, session.key_conversation, 0, updates.append)
        sampled: list[SamplingRequest] = []

        async def sampler(key: str, asked: SamplingRequest, changed: Any) -> None:
            sampled.append(asked)

        again.sampler = sampler
        assert again.submit("r", "poet__write_poem", {}) == call.key
        await again.wait()
        assert [(u.state, u.reused) for u in updates if u.state in ("ran", "failed")] == [("ran", True)]
        # both round trips carried the call's one key; the effect happened once
        assert json.loads(counts.read_text()) == {f"asked {call.key}": 1, call.key: 1} and sampled == []
        # the server's hint matched no model this profile offers: the current one, and the card says why
        (asked,) = call.samplings
        assert asked.chosen == "m (the current model: no model this profile offers matches the hints 'claude-3')"
    finally:
        await registry.aclose()


async def test_a_hint_picks_a_model_of_a_profile_on_the_same_endpoint_and_the_request_goes_to_it(home: Path) -> None:
    import sys

    from app.runtime.wiring import open_runtime
    from app.settings.config import load_config
    from tests.conftest import ROOT

    with FaultServer() as model:
        config_file = home / "config.toml"
        config_file.write_text(
            f'default = "main"\n[providers.main]\nprovider = "anthropic"\nbase_url = "{model.url}"\nmodel = "m"\n'
            f'key_env = "NO_KEY"\n\n[providers.small]\nprovider = "anthropic"\nbase_url = "{model.url}"\n'
            f'model = "claude-3-5-haiku"\nkey_env = "NO_KEY"\n\n[providers.elsewhere]\nprovider = "anthropic"\n'
            f'model = "claude-3-opus"\nkey_env = "OTHER_KEY"\n\n'
            f'[mcp.poet]\ncommand = {json.dumps(sys.executable)}\nargs = ["-m", "tests.mcp_poet"]\n'
            f'cwd = {json.dumps(str(ROOT))}\napproval = "never"\n'
            f"env = {{ MCP_POET_COUNTS = {json.dumps(str(home / 'runs.json'))} }}\n"
        )
        runtime = open_runtime(config=load_config(config_file))
        # the models the hints may pick: this profile's, and another's on the same endpoint with the same key
        assert runtime.sampling_models() == ["m", "claude-3-5-haiku"]
        session = runtime.session()
        assert session.sampling.models == ["m", "claude-3-5-haiku"]
        script = streamgen.call_script(0, "c0", "poet__write_poem", "{}")
        model.replies += [
            Reply(streamgen.anthropic(script)),
            Reply(streamgen.anthropic([("text", "Waves.")], stop_reason="end_turn")),
            Reply(streamgen.anthropic([("text", "Done.")], stop_reason="end_turn")),
        ]
        person(session, [("send", None), ("return", None)])
        try:
            await runtime.registry.settled()
            done = await session.send("a poem")
        finally:
            await session.aclose()
            await runtime.registry.aclose()
            runtime.close()
    assert done.status == "done", done
    (asked,) = the_call(session).samplings
    assert asked.chosen == "claude-3-5-haiku (the server's hint 'claude-3')"
    assert model.requests[1]["body"]["model"] == "claude-3-5-haiku"  # the hint's model, on the same endpoint
    assert model.requests[2]["body"]["model"] == "m"  # the conversation goes on with its own


async def test_a_request_with_no_call_in_flight_is_refused_in_band() -> None:
    import mcp_types as types

    from app.mcp.sampling import REJECTED, Sampler

    params = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))], max_tokens=5
    )
    answer = await Sampler("s")(None, params)
    assert isinstance(answer, types.ErrorData) and answer.code == -1
    assert answer.message == f"{REJECTED}: it came while none of callstream's calls to it was running"


async def test_a_denied_server_that_asks_anyway_is_refused_and_the_card_says_why() -> None:
    import mcp_types as types

    from app.mcp.sampling import REJECTED, Sampler

    seen: list[SamplingRequest] = []

    async def sample(asked: SamplingRequest) -> None:
        seen.append(asked)

    sampler = Sampler("s", "deny")
    params = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))], max_tokens=5
    )
    with sampler.during(sample):
        answer = await sampler(None, params)
    assert isinstance(answer, types.ErrorData) and answer.message == f'{REJECTED}: sampling = "deny" for the s server'
    assert [(s.state, s.reason) for s in seen] == [("refused", 'sampling = "deny" for the s server')]
