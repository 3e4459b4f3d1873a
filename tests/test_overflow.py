"""A conversation too long for the model's context window (issue 29 item 3): a fault server on
127.0.0.1 answers each provider's real context-length error body; the turn ends as a stated failure
in one line that says so and offers compaction — in the session, ``ask`` and the TUI — and is not
retried (the same request would fail the same way). Other 400s stay what they were.

The bodies are the providers' own, as published in reports of real failures: OpenAI's
``context_length_exceeded`` (the Chat Completions wording, e.g. smol-ai/developer#7 and
evalstate/fast-agent#621; the Responses wording from OpenAI's error reference), Anthropic's
``prompt is too long`` (anthropics/claude-code#14195), Gemini's ``The input token count … exceeds the
maximum number of tokens allowed`` (google-gemini/gemini-cli#6678, with its ``errors`` list and in the
list the streaming endpoint wraps it in), and llama-server's ``exceed_context_size_error``.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cli.ask import run_ask
from app.net.endpoint import Endpoint
from app.net.overflow import overflow_words
from app.runtime.wiring import open_runtime
from app.settings.config import Config
from app.tui.app import make_app
from tests import test_tui as tui
from tests.faultserver import FaultServer, Reply
from widgets.note import NoteBlock

OPENAI = {"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages "
                               "resulted in 130532 tokens. Please reduce the length of the messages.",
                    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
RESPONSES = {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input "
                                  "and try again.", "type": "invalid_request_error", "param": "input",
                       "code": "context_length_exceeded"}}
ANTHROPIC = {"type": "error", "error": {"type": "invalid_request_error",
                                        "message": "prompt is too long: 209353 tokens > 199999 maximum"},
             "request_id": "req_011CWAgPbMohjStFaYrkLZCm"}
GEMINI = {"error": {"code": 400, "message": "The input token count (1200293) exceeds the maximum number of tokens "
                                            "allowed (1048576).",
                    "errors": [{"message": "The input token count (1200293) exceeds the maximum number of tokens "
                                           "allowed (1048576).", "domain": "global", "reason": "badRequest"}],
                    "status": "INVALID_ARGUMENT"}}
LLAMA_SERVER = {"error": {"code": 400, "message": "request (4476 tokens) exceeds the available context size "
                                                  "(4096 tokens)",
                          "type": "exceed_context_size_error", "n_prompt_tokens": 4476, "n_ctx": 4096}}

#: dialect, model, the body, the provider's words the line keeps
CASES = {
    "openai": ("openai-chat", "gpt-4o", OPENAI, "This model's maximum context length is 128000 tokens"),
    "openai-responses": ("openai-responses", "gpt-5", RESPONSES, "Your input exceeds the context window"),
    "anthropic": ("anthropic", "claude-sonnet-4-5", ANTHROPIC, "prompt is too long: 209353 tokens > 199999"),
    "gemini": ("gemini", "gemini-2.5-flash", GEMINI, "The input token count (1200293) exceeds the maximum"),
    "gemini-in-a-list": ("gemini", "gemini-2.5-pro", [GEMINI], "The input token count (1200293)"),
    "llama-server": ("openai-chat", "qwen", LLAMA_SERVER, "request (4476 tokens) exceeds the available context"),
}


def _send(dialect: str, model: str, body: Any) -> tuple[Any, Any, FaultServer]:
    with FaultServer() as server:
        server.replies.append(Reply(json.dumps(body).encode(), status=400))
        runtime = open_runtime(config=Config(), endpoint=Endpoint(dialect, server.url, model, "test"))
        session = runtime.session()
        session.backoff = 0.0

        async def go() -> Any:
            try:
                return await session.send("hi")
            finally:
                await session.aclose()
                runtime.close()

        done = asyncio.run(go())
    return session, done, server


@pytest.mark.parametrize("case", list(CASES))
def test_each_provider_s_context_length_error_is_one_line_with_the_offer(case: str) -> None:
    dialect, model, body, words = CASES[case]
    session, done, server = _send(dialect, model, body)
    assert done.status == "failed" and len(server.requests) == 1  # not retried: it would fail the same way
    (turn,) = session.turns
    assert turn.attempts == 1 and turn.result is not None
    assert turn.result.cause == "context_overflow"
    note = turn.note or ""
    assert "\n" not in note and len(note) <= 400
    assert "too long for the model's context window" in note
    assert "/compact" in note and "ask --compact" in note and words in note
    assert json.loads(turn.result.detail or "") == body  # the whole body, for the details


@pytest.mark.parametrize("body", [
    {"type": "error", "error": {"type": "invalid_request_error",
                                "message": "max_tokens: 10000 > 4096, which is the maximum allowed number of output "
                                           "tokens for claude-3-5-sonnet-20240620"}},
    {"error": {"message": "Invalid value for 'temperature'", "type": "invalid_request_error", "code": None}},
    "not json at all",
])
def test_another_400_is_not_an_overflow(body: Any) -> None:
    session, done, _ = _send("anthropic", "claude-sonnet-4-5", body)
    assert done.status == "failed"
    (turn,) = session.turns
    assert turn.result is not None and turn.result.cause is None
    assert "/compact" not in (turn.note or "")


def test_overflow_words_only_for_client_errors() -> None:
    assert overflow_words(400, ANTHROPIC) == "prompt is too long: 209353 tokens > 199999 maximum"
    assert overflow_words(500, ANTHROPIC) is None  # a server error saying so is still a server error
    assert overflow_words(400, None) is None and overflow_words(400, [1, 2]) is None
    assert overflow_words(400, {"error": "prompt is too long"}) is None  # not a shape any provider sends


def test_ask_says_it_in_one_line_and_exits_1(home: Path) -> None:
    with FaultServer() as server:
        server.replies.append(Reply(json.dumps(ANTHROPIC).encode(), status=400))
        (home / "config.toml").write_text(f'default = "c"\n[providers.c]\nprovider = "anthropic"\n'
                                          f'model = "claude-sonnet-4-5"\nbase_url = "{server.url}"\n')
        out, err = io.StringIO(), io.StringIO()
        assert run_ask("hi", out=out, err=err) == 1
    lines = [line for line in err.getvalue().splitlines() if "context window" in line]
    assert lines and all("ask --compact" in line for line in lines)


async def test_the_tui_says_it_with_the_offer() -> None:
    with FaultServer() as server:
        server.replies.append(Reply(json.dumps(OPENAI).encode(), status=400))
        app = tui.still(make_app(config=Config(), endpoint=Endpoint("openai-chat", server.url, "gpt-4o", "test")))
        async with app.run_test(size=tui.SIZE) as pilot:
            await tui.send(app, pilot, "hi")
            notes = [str(n.render()) for n in app.screen.query(NoteBlock)]
            assert any("too long for the model's context window" in n and "/compact" in n for n in notes), notes


# -- any body ------------------------------------------------------------------------------------------


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                     max_leaves=20)


@given(status=st.integers(100, 599), payload=_json)
def test_any_error_body_is_read_without_a_crash(status: int, payload: Any) -> None:
    words = overflow_words(status, payload)
    assert words is None or isinstance(words, str)
    if status not in (400, 413, 422):
        assert words is None


@given(message=st.text(max_size=200))
def test_a_message_is_an_overflow_only_in_a_provider_s_words(message: str) -> None:
    words = overflow_words(400, {"error": {"message": message, "type": "invalid_request_error"}})
    known = ("prompt is too long", "maximum context length", "exceeds the context window",
             "exceeds the available context size")
    if words is not None:
        assert any(k in message.lower() for k in known) or "input token count" in message.lower()
