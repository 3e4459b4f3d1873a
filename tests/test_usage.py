"""Token usage: what each dialect reads from the wire (real recorded streams,
exact numbers), the same for any chunking, ``None`` — never zeros — where the
provider said nothing; the sums per turn and per conversation; the store, the
exports, ``ask`` and the TUI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.stream import assemble
from app.stream.usage import Usage, total, usage_words
from tests import streamgen
from tests.conftest import REAL
from tests.test_chunking import split_at

# -- each dialect on real recorded streams --------------------------------------------------------

#: fixture → (model, input, output, cached, reasoning), as the provider reported them. Anthropic's
#: input adds its cache reads and writes; Gemini's output adds its thoughts (so the fields mean the
#: same on every wire: input with cached, output with reasoning).
REAL_USAGE: dict[str, tuple[str, int | None, int | None, int | None, int | None]] = {
    # OpenAI chat: the include_usage chunk (choices: []), or usage on the finish chunk (Groq: both)
    "openai-chat/fantasy-gpt4o-add-multiply": ("gpt-4o-2024-08-06", 106, 50, 0, 0),
    "openai-chat/fantasy-groq-kimi-k2-preamble": ("moonshotai/kimi-k2-instruct-0905", 201, 58, None, None),
    "openai-chat/fantasy-llama-cpp-gpt-oss-weather": ("openai/gpt-oss-20b", 139, 41, None, None),
    "openai-chat/fantasy-openrouter-kimi-add-multiply": ("moonshotai/kimi-k2.5-0127", 125, 97, 64, 56),
    "openai-chat/fantasy-xai-grok-4-fast-oneshot": ("grok-4-fast-reasoning", 432, 68, 153, 136),
    "openai-chat/fantasy-zai-glm-4-7-flash-preamble": ("glm-4.7-flash", 275, 112, 43, 64),
    "openai-chat/openai-python-parallel-weather-stock": ("gpt-4o-2024-08-06", 149, 60, None, 0),
    "openai-chat/pydantic-ai-groq-gpt-oss-valid-call": ("openai/gpt-oss-120b", 304, 49, None, 23),
    # Responses: response.completed's usage
    "openai-responses/fantasy-gpt5-reasoning-add-multiply": ("gpt-5-2025-08-07", 109, 223, 0, 128),
    "openai-responses/pydantic-ai-deepseek-responses-tool": ("deepseek-v4-flash", 366, 59, 256, 14),
    "openai-responses/llm-multiply": ("gpt-5.5-2026-04-23", 58, 23, 0, 0),
    # Anthropic: input at message_start, output at message_delta (cumulative)
    "anthropic/fantasy-sonnet4-add-multiply-preamble": ("claude-sonnet-4-20250514", 502, 137, 0, None),
    "anthropic/fantasy-vertex-claude37-weather": ("claude-3-7-sonnet-20250219", 394, 76, 0, None),
    "anthropic/llm-anthropic-thinking-fixed-version": ("claude-haiku-4-5-20251001", 598, 92, 0, 53),
    # a server tool ran: message_delta's input (7621) replaces message_start's (2307)
    "anthropic/pydantic-ai-code-execution-text-editor": ("claude-sonnet-4-6", 7621, 384, 0, None),
    # Gemini: usageMetadata on every chunk, the last one wins; thoughts added to the candidates
    "gemini/fantasy-gemini25-flash-thinking-weather": ("gemini-2.5-flash", 54, 76, None, 62),
    "gemini/fantasy-vertex-gemini25-pro-add-multiply": ("gemini-2.5-pro", 57, 79, None, 69),
    "gemini/pydantic-ai-get-capital": ("gemini-2.0-flash", 52, 5, None, None),
    # Vertex: {"trafficType": "ON_DEMAND"} alone on every chunk until the last one counts
    "gemini/vercel-vertex-partial-args": ("gemini-3.1-pro-preview", 26, 155, None, 132),
}

needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"real fixtures absent: {REAL} not found")


def _real(name: str) -> bytes:
    return (REAL / f"{name}.sse").read_bytes()


@needs_real
@pytest.mark.parametrize("name", sorted(REAL_USAGE))
def test_each_dialect_reads_the_usage_of_a_real_stream(name: str) -> None:
    model, *counts = REAL_USAGE[name]
    turn = assemble([_real(name)], dialect=name.split("/")[0])
    assert turn.model == model
    assert turn.usage == Usage(*counts)


@needs_real
@pytest.mark.parametrize("path", sorted(REAL.glob("gemini/*.sse")) if REAL.is_dir() else [], ids=lambda p: p.stem)
def test_gemini_usage_adds_up_to_its_own_total(path: Path) -> None:
    """Gemini's totalTokenCount is prompt + candidates + thoughts: our input + output."""
    last = None
    for line in path.read_text().splitlines():
        if line.startswith("data:") and '"totalTokenCount"' in line:
            last = json.loads(line[5:])["usageMetadata"]
    turn = assemble([path.read_bytes()])
    if last is None:
        assert turn.usage is None
        return
    assert turn.usage is not None and turn.usage.input is not None and turn.usage.output is not None
    assert turn.usage.input + turn.usage.output == last["totalTokenCount"]


@needs_real
@given(data=st.data())
def test_usage_is_the_same_for_any_chunking(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(REAL_USAGE)))
    body = _real(name)
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=60))
    whole = assemble([body])
    split = assemble(split_at(body, cuts))
    assert (split.usage, split.model) == (whole.usage, whole.model)
    assert whole.usage == Usage(*REAL_USAGE[name][1:])


@needs_real
@pytest.mark.parametrize("name", ["openai-chat/fantasy-gpt4o-add-multiply", "anthropic/vercel-tool-no-args"])
def test_usage_byte_by_byte(name: str) -> None:
    body = _real(name)
    assert assemble(streamgen.chunked(body, 1)).usage == assemble([body]).usage is not None


def test_real_llama_server_captures_carry_its_usage() -> None:
    """tests/captures: llama-server's Messages and Responses streams say the same (715 in, 714 of them
    from its cache, 63 out); its chat capture was made without include_usage and has none."""
    captures = Path(__file__).parent / "captures"
    for name in ("llama-server-messages-parallel", "llama-server-responses-parallel"):
        turn = assemble([(captures / f"{name}.sse").read_bytes()])
        assert turn.usage == Usage(715, 63, 714, None), name
        assert turn.model == "smollm2-135m"
    assert assemble([(captures / "llama-server-chat-parallel.sse").read_bytes()]).usage is None


# -- no usage is None, never zeros ----------------------------------------------------------------

SCRIPT = [("text", "Looking it up. "), ("start", 0, "call_1", "search_orders"), ("args", 0, '{"customer": "Ada"}'),
          ("end", 0)]


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_a_stream_without_usage_has_none(dialect: str) -> None:
    body = {"openai-chat": streamgen.openai_chat, "openai-responses": streamgen.openai_responses,
            "anthropic": streamgen.anthropic, "gemini": streamgen.gemini}[dialect](SCRIPT)
    for line in body.decode().splitlines():  # take out whatever usage the encoder wrote
        if line.startswith("data:") and "\"usage" in line:
            payload = json.loads(line[5:])
            payload.pop("usageMetadata", None)
            payload.pop("usage", None)
            for inner in ("response", "message"):
                if isinstance(payload.get(inner), dict):
                    payload[inner].pop("usage", None)
            body = body.replace(line.encode(), b"data: " + json.dumps(payload).encode())
    assert b"\"usage" not in body
    turn = assemble([body], dialect)
    assert turn.outcome == "complete"
    assert turn.usage is None and "usage" not in turn.to_dict()
    assert usage_words(turn.usage) == ""


def test_an_anthropic_stream_cut_after_message_start_knows_its_input_only() -> None:
    """message_start's output count is a placeholder: a cut-off before message_delta leaves the output
    unknown rather than 1."""
    body = (b'data: {"type":"message_start","message":{"id":"m1","model":"claude","content":[],'
            b'"usage":{"input_tokens":40,"cache_read_input_tokens":2,"output_tokens":1}}}\n\n'
            b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
            b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n')
    turn = assemble([body])
    assert turn.outcome == "cut_off"
    assert turn.usage == Usage(42, None, 2, None)
    assert usage_words(turn.usage) == "tokens 42 in (2 cached)"


@pytest.mark.parametrize("bad", ['"12"', "-3", "true", "1.5", "null", "[]", "1e30"])
def test_a_count_that_is_not_a_whole_number_is_not_a_count(bad: str) -> None:
    body = ('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
            f'data: {{"choices":[],"usage":{{"prompt_tokens":{bad},"completion_tokens":7}}}}\n\n'
            "data: [DONE]\n\n").encode()
    turn = assemble([body])
    assert turn.outcome == "complete"
    assert turn.usage == Usage(None, 7, None, None)


def test_vertex_traffic_type_alone_is_no_usage() -> None:
    body = (b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],'
            b'"usageMetadata":{"trafficType":"ON_DEMAND"},"modelVersion":"gemini-x"}\n\n')
    turn = assemble([body])
    assert (turn.outcome, turn.usage, turn.model) == ("complete", None, "gemini-x")


# -- sums ------------------------------------------------------------------------------------------

def test_sums_add_what_is_known_and_keep_none_where_nothing_is() -> None:
    a, b = Usage(10, 5, None, None), Usage(20, None, 4, None)
    assert a + b == Usage(30, 5, 4, None)
    assert total([None, a, None, b]) == Usage(30, 5, 4, None)
    assert total([None, None]) is None and total([]) is None
    assert Usage(1, 1).merged(Usage(None, 9)) == Usage(1, 9)


def test_usage_words() -> None:
    assert usage_words(Usage(1234, 56)) == "tokens 1,234 in · 56 out"
    assert usage_words(Usage(1234, 56, 1000, 20)) == "tokens 1,234 in (1,000 cached) · 56 out (20 reasoning)"
    assert usage_words(Usage(0, 0, 0, 0)) == "tokens 0 in · 0 out"  # a 0 the provider said is shown as said
    assert usage_words(None) == "" and usage_words(Usage()) == ""


def test_a_stored_usage_record_is_checked_field_by_field() -> None:
    assert Usage.from_dict({"input": 3, "output": "4", "cached": -1, "reasoning": True}) == Usage(3)
    assert Usage.from_dict({"output": None}) is None and Usage.from_dict("x") is None
    assert Usage.from_dict(Usage(1, 2, 3, 4).to_dict()) == Usage(1, 2, 3, 4)
