"""The official SDKs stream every demo scenario from a real demo server and
parse it as those providers' streams; where the scenario is a fault, the SDK
sees that fault (issue 3, first proof)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from app.demo.model import SCENARIOS
from app.demo.server import DemoServer
from tests.demo_client import SUPPORT_TOOLS

CHAT_TOOLS = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                "parameters": t.parameters}} for t in SUPPORT_TOOLS]
RESPONSES_TOOLS = [{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}
                   for t in SUPPORT_TOOLS]
ANTHROPIC_TOOLS = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                   for t in SUPPORT_TOOLS]

CONNECTION_DROPS = {"cutoff", "retry-after-dispatch"}


@pytest.fixture
def server() -> Iterator[DemoServer]:
    with DemoServer(speed=0) as srv:
        yield srv


def openai_client(server: DemoServer) -> openai.OpenAI:
    return openai.OpenAI(api_key="demo", base_url=server.base_url + "/v1", max_retries=0,
                         timeout=openai.Timeout(10.0, read=1.0))


def chat(server: DemoServer, text: str) -> Any:
    client = openai_client(server)
    with client.chat.completions.stream(model="demo", messages=[{"role": "user", "content": text}],
                                        tools=CHAT_TOOLS) as stream:
        for _ in stream:
            pass
        return stream.get_final_completion().choices[0]


def responses(server: DemoServer, text: str) -> Any:
    client = openai_client(server)
    with client.responses.stream(model="demo", input=text, tools=RESPONSES_TOOLS) as stream:
        types = [event.type for event in stream]
        return types, stream.get_final_response()


def messages(server: DemoServer, text: str) -> Any:
    client = anthropic.Anthropic(api_key="demo", base_url=server.base_url, max_retries=0,
                                 timeout=anthropic.Timeout(10.0, read=1.0))
    with client.messages.stream(model="demo", max_tokens=1024, messages=[{"role": "user", "content": text}],
                                tools=ANTHROPIC_TOOLS) as stream:
        for _ in stream:
            pass
        return stream.get_final_message()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_openai_chat_sdk(server: DemoServer, scenario: str) -> None:
    text = f"/demo {scenario}"
    if scenario == "cutoff":
        with pytest.raises(openai.APIConnectionError):
            chat(server, text)
    elif scenario == "error":
        with pytest.raises(openai.APIError, match="Overloaded"):
            chat(server, text)
    elif scenario == "slow":
        with pytest.raises(openai.APITimeoutError):
            chat(server, text)
    elif scenario == "truncated":
        with pytest.raises(openai.LengthFinishReasonError):
            chat(server, text)
    else:
        choice = chat(server, text)
        assert choice.finish_reason == "tool_calls" and choice.message.content
        calls = choice.message.tool_calls
        if scenario == "malformed":
            with pytest.raises(json.JSONDecodeError):
                json.loads(calls[0].function.arguments)
        elif scenario == "retry-after-dispatch":  # on chat: the ticket whole, the lookup's arguments broken
            assert isinstance(json.loads(calls[0].function.arguments), dict)
            with pytest.raises(json.JSONDecodeError):
                json.loads(calls[1].function.arguments)
        else:
            assert all(isinstance(json.loads(c.function.arguments), dict) for c in calls)
            assert len(calls) == (4 if scenario == "parallel" else 1)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_openai_responses_sdk(server: DemoServer, scenario: str) -> None:
    text = f"/demo {scenario}"
    if scenario in CONNECTION_DROPS:
        with pytest.raises(openai.APIConnectionError):
            responses(server, text)
    elif scenario == "slow":
        with pytest.raises(openai.APITimeoutError):
            responses(server, text)
    elif scenario in ("error", "truncated"):
        # the SDK yields the error / incomplete event, then refuses a final response
        with pytest.raises(RuntimeError, match="response.completed"):
            responses(server, text)
    else:
        types, response = responses(server, text)
        assert response.status == "completed" and types[-1] == "response.completed"
        calls = [item for item in response.output if item.type == "function_call"]
        if scenario == "malformed":
            with pytest.raises(json.JSONDecodeError):
                json.loads(calls[0].arguments)
        else:
            assert all(isinstance(json.loads(c.arguments), dict) for c in calls)


def test_openai_responses_sdk_sees_the_error_event(server: DemoServer) -> None:
    client = openai_client(server)
    with client.responses.stream(model="demo", input="/demo error", tools=RESPONSES_TOOLS) as stream:
        events = list(stream)
    assert events[-1].type == "error" and events[-1].message == "Overloaded"


def test_openai_responses_sdk_sees_incomplete(server: DemoServer) -> None:
    client = openai_client(server)
    with client.responses.stream(model="demo", input="/demo truncated", tools=RESPONSES_TOOLS) as stream:
        events = list(stream)
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_anthropic_sdk(server: DemoServer, scenario: str) -> None:
    text = f"/demo {scenario}"
    if scenario in CONNECTION_DROPS:
        with pytest.raises((anthropic.APIConnectionError, httpx2.RemoteProtocolError)):
            messages(server, text)
    elif scenario == "error":
        with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
            messages(server, text)
    elif scenario == "slow":
        with pytest.raises((anthropic.APITimeoutError, httpx2.ReadTimeout)):
            messages(server, text)
    elif scenario == "malformed":
        with pytest.raises(ValueError, match="parse tool parameter JSON"):
            messages(server, text)
    else:
        message = messages(server, text)
        calls = [b for b in message.content if b.type == "tool_use"]
        if scenario == "truncated":
            # the SDK's partial parse hands back a plausible input for a call cut off mid-way
            assert message.stop_reason == "max_tokens" and calls and "body" not in calls[0].input
        else:
            assert message.stop_reason == "tool_use"
            assert all(isinstance(c.input, dict) and c.input for c in calls)


def test_anthropic_sdk_completes_the_ordinary_flow(server: DemoServer) -> None:
    message = messages(server, "Show me Grace Hopper's open and shipped orders")
    calls = [b for b in message.content if b.type == "tool_use"]
    assert [c.input for c in calls] == [{"customer": "Grace Hopper", "status": "open"},
                                        {"customer": "Grace Hopper", "status": "shipped"}]


# -- google-genai and pydantic-ai (issue 14, proof 3) -------------------------------------------

SEARCH = "Show me Grace Hopper's open and shipped orders"
SEARCHES = [{"customer": "Grace Hopper", "status": "open"}, {"customer": "Grace Hopper", "status": "shipped"}]


def _genai_stream(server: DemoServer, stream_arguments: bool) -> list[Any]:
    from google import genai
    from google.genai import types

    if stream_arguments:  # a Vertex-only option (as on the real service): the client in Vertex mode
        from google.oauth2.credentials import Credentials

        client = genai.Client(vertexai=True, project="demo", location="us-central1",
                              credentials=Credentials(token="demo"),
                              http_options=types.HttpOptions(base_url=server.base_url))
    else:
        client = genai.Client(api_key="demo", http_options=types.HttpOptions(base_url=server.base_url))
    declarations = [types.FunctionDeclaration(name=t.name, description=t.description,
                                              parameters_json_schema=t.parameters) for t in SUPPORT_TOOLS]
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
            stream_function_call_arguments=True)) if stream_arguments else None,
    )
    calls = []
    for chunk in client.models.generate_content_stream(model="demo", contents=SEARCH, config=config):
        calls += chunk.function_calls or []
    return calls


def test_google_genai_streams_whole_calls(server: DemoServer) -> None:
    calls = _genai_stream(server, stream_arguments=False)
    assert [c.name for c in calls] == ["search_orders", "search_orders"]
    assert [c.args for c in calls] == SEARCHES  # whole args, never None


def test_google_genai_reads_partial_args_when_it_asks_for_them(server: DemoServer) -> None:
    calls = _genai_stream(server, stream_arguments=True)
    assert [c.name for c in calls if c.name] == ["search_orders", "search_orders"]
    assert all(c.args is None for c in calls)
    values: list[dict[str, str]] = []
    for call in calls:
        if call.name:
            values.append({})
        for piece in call.partial_args or []:
            key = piece.json_path.removeprefix("$.")
            values[-1][key] = values[-1].get(key, "") + (piece.string_value or "")
    assert values == SEARCHES  # the typed pieces add up to the whole arguments


def _pydantic_agent_models(server: DemoServer) -> dict[str, Any]:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.google import GoogleProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    openai_provider = OpenAIProvider(base_url=server.base_url + "/v1", api_key="demo")
    return {
        "openai-chat": OpenAIChatModel("demo", provider=openai_provider),
        "openai-responses": OpenAIResponsesModel("demo", provider=openai_provider),
        "anthropic": AnthropicModel("demo", provider=AnthropicProvider(base_url=server.base_url, api_key="demo")),
        "gemini": GoogleModel("demo", provider=GoogleProvider(api_key="demo", base_url=server.base_url)),
    }


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_pydantic_ai_streams_whole_calls_and_runs_its_tools(server: DemoServer, dialect: str) -> None:
    import asyncio

    from pydantic_ai import Agent, FunctionToolCallEvent

    agent = Agent(_pydantic_agent_models(server)[dialect])
    ran: list[dict[str, Any]] = []

    @agent.tool_plain
    def search_orders(customer: str | None = None, status: str | None = None,
                      text: str | None = None) -> dict[str, Any]:
        """Find orders by customer, status, dates or text."""
        ran.append({k: v for k, v in {"customer": customer, "status": status, "text": text}.items() if v})
        order = "A-1016" if status == "open" else "A-1026"
        return {"orders": [{"order_id": order, "customer": customer, "status": status, "placed": "2026-11-26"}]}

    async def run() -> tuple[list[Any], str]:
        events: list[Any] = []
        output = ""
        async with agent.run_stream_events(SEARCH) as stream:
            async for event in stream:
                if isinstance(event, FunctionToolCallEvent):
                    events.append(event.part)
                if type(event).__name__ == "AgentRunResultEvent":
                    output = str(event.result.output)
        return events, output

    parts, output = asyncio.run(run())
    assert [p.tool_name for p in parts] == ["search_orders", "search_orders"]
    assert [p.args_as_dict() for p in parts] == SEARCHES  # the streamed arguments, parsed whole
    assert sorted(ran, key=str) == sorted(SEARCHES, key=str)  # both ran, once each (pydantic-ai runs them at once)
    assert "A-1016" in output and "A-1026" in output  # the model's answer reads the tools' results
