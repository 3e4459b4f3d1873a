"""Token usage: what each dialect reads from the wire (real recorded streams,
exact numbers), the same for any chunking, ``None`` — never zeros — where the
provider said nothing; the sums per turn and per conversation; the store, the
exports, ``ask`` and the TUI."""

from __future__ import annotations

import asyncio
import io
import json
import re
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cli.ask import run_ask
from app.demo.server import _tokens
from app.net.endpoint import Endpoint
from app.runtime.wiring import open_runtime
from app.settings.config import Config
from app.store import ImportError_, Store, StoredTurn, export_document, import_document, markdown_of, schema
from app.stream import assemble
from app.stream.usage import Usage, total, usage_words
from app.tools.approvals import Approvals
from app.tui.app import make_app
from tests import storefaults, streamgen
from tests import test_tui as tui
from tests.conftest import REAL
from tests.conversations import demo_config
from tests.faultserver import FaultServer, Reply
from tests.snapshots import screen_svg
from tests.test_chunking import split_at
from tests.test_real_peer import peer  # noqa: F401  (the fixture)
from tests.test_real_peer import pytestmark as real_peer
from tests.waiting import quiet, screen_lines
from widgets.prompt_input import PromptInput
from widgets.prose import ProseBlock
from widgets.status_line import StatusLine
from widgets.usage_line import UsageLine

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


_counts = st.one_of(st.none(), st.integers(0, 10**9))
_usages = st.one_of(st.none(), st.builds(Usage, _counts, _counts, _counts, _counts))


@given(st.lists(_usages, max_size=30))
def test_the_total_is_the_reports_added_one_by_one(usages: list[Usage | None]) -> None:
    added: Usage | None = None
    for usage in usages:
        if usage is not None and usage.known:
            added = usage if added is None else added + usage
    assert total(usages) == added


@given(st.dictionaries(st.sampled_from(["input", "output", "cached", "reasoning", "other"]),
                       st.one_of(st.none(), st.booleans(), st.integers(-5, 10**16), st.text(max_size=3))))
def test_a_stored_usage_keeps_the_counts_and_nothing_else(value: dict[str, Any]) -> None:
    read = Usage.from_dict(value)
    kept = {k: v for k, v in value.items() if k != "other" and type(v) is int and 0 <= v <= 10**15}
    assert (read.to_dict() if read is not None else {}) == kept


def test_usage_words() -> None:
    assert usage_words(Usage(1234, 56)) == "tokens 1,234 in · 56 out"
    assert usage_words(Usage(1234, 56, 1000, 20)) == "tokens 1,234 in (1,000 cached) · 56 out (20 reasoning)"
    assert usage_words(Usage(0, 0, 0, 0)) == "tokens 0 in · 0 out"  # a 0 the provider said is shown as said
    assert usage_words(None) == "" and usage_words(Usage()) == ""


def test_a_stored_usage_record_is_checked_field_by_field() -> None:
    assert Usage.from_dict({"input": 3, "output": "4", "cached": -1, "reasoning": True}) == Usage(3)
    assert Usage.from_dict({"output": None}) is None and Usage.from_dict("x") is None
    assert Usage.from_dict(Usage(1, 2, 3, 4).to_dict()) == Usage(1, 2, 3, 4)


# -- the demo in all four formats, end to end over real HTTP ----------------------------------------

PROMPT = "Ada Lovelace says her order is late. Check her open and late orders and open a ticket."

#: Where each wire puts the reply's count (the demo's encoders write it once per reply).
OUTPUT_FIELD = {"openai-chat": "completion_tokens", "openai-responses": "output_tokens",
                "anthropic": "output_tokens", "gemini": "candidatesTokenCount"}


class _Tee(httpx.AsyncBaseTransport):
    """A real transport that keeps each request's bytes and each response's raw body."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests: list[bytes] = []
        self.responses: list[list[bytes]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(await request.aread())
        chunks: list[bytes] = []
        self.responses.append(chunks)
        response = await self.inner.handle_async_request(request)
        inner = response.stream

        class Stream(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in inner:  # type: ignore[union-attr]
                    chunks.append(chunk)
                    yield chunk

            async def aclose(self) -> None:
                await inner.aclose()  # type: ignore[union-attr]

        return httpx.Response(response.status_code, headers=response.headers, stream=Stream(),
                              extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _demo_exchange(dialect: str, usage: bool = True) -> tuple[Any, _Tee, Any]:
    """The example conversation on the demo (speaking ``dialect``) through the real runtime: store,
    ledger, recorder, a real HTTP server on 127.0.0.1; returns the session, the wire, the exchange."""
    config = demo_config(dialect)
    config.providers["demo"].usage = usage
    runtime = open_runtime(config=config)
    session = runtime.session(approvals=Approvals.from_config(runtime.config, approve="all"))
    tee = _Tee()
    session._http = httpx.AsyncClient(transport=tee, follow_redirects=False)
    done: list[Any] = []

    async def go() -> None:
        try:
            done.append(await session.send(PROMPT))
        finally:
            await session.aclose()
            runtime.close()

    asyncio.run(go())
    return session, tee, done[0]


def _demo_numbers(dialect: str, tee: _Tee) -> list[Usage]:
    """What the demo said each request cost: input is its estimate from the request's size (a token per
    four bytes), output the count its reply carried on the wire."""
    out = []
    for request, chunks in zip(tee.requests, tee.responses, strict=True):
        wire = b"".join(chunks).decode()
        counts = re.findall(rf'"{OUTPUT_FIELD[dialect]}": ?(\d+)', wire)
        details = [re.findall(rf'"{name}": ?(\d+)', wire) for name in ("cached_tokens", "reasoning_tokens")]
        out.append(Usage(_tokens(len(request)), int(counts[-1]), *(int(d[-1]) if d else None for d in details)))
    return out


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_the_demo_in_each_format_end_to_end(dialect: str) -> None:
    session, tee, done = _demo_exchange(dialect)
    assert done.status == "done"
    expected = _demo_numbers(dialect, tee)
    assert len(expected) == len(session.turns) >= 3  # searches, the ticket, the answer: one request each
    assert [t.usage for t in session.turns] == expected
    assert all(t.model == "demo" for t in session.turns)
    assert done.usage == total(expected) and done.model == "demo"  # the exchange: its tool loop summed
    if dialect == "openai-chat":
        assert all(json.loads(r)["stream_options"] == {"include_usage": True} for r in tee.requests)
    # stored per turn, reopened the same, exported the same
    runtime = open_runtime(config=demo_config(dialect))
    try:
        stored = runtime.store.load(session.conversation)
        assert stored is not None
        assert [(i.usage, i.model) for i in stored.items if isinstance(i, StoredTurn)] == [
            (u, "demo") for u in expected]
        document = export_document(stored)
        assert [i["usage"] for i in document["items"] if i["kind"] == "turn"] == [u.to_dict() for u in expected]
        markdown = markdown_of(stored, runtime.registry.display_specs)
        assert f"*demo · {usage_words(expected[0])}*" in markdown
        assert f"*{usage_words(total(expected))} in all" in markdown
    finally:
        runtime.close()


def test_a_profile_with_usage_off_does_not_ask_and_shows_no_numbers() -> None:
    session, tee, done = _demo_exchange("openai-chat", usage=False)
    assert done.status == "done"
    assert all("stream_options" not in json.loads(r) for r in tee.requests)
    assert all(b'"usage"' not in b"".join(c) for c in tee.responses)  # the demo, like OpenAI, sends none unasked
    assert all(t.usage is None for t in session.turns) and done.usage is None
    assert all("usage" not in t.to_dict() for t in session.turns)


def test_a_retried_turn_counts_every_attempt(tmp_path: Path) -> None:
    """A cut-off attempt spent tokens too: the turn's usage is both attempts' together."""
    first = (b'data: {"type":"message_start","message":{"id":"m1","model":"claude-x","content":[],'
             b'"usage":{"input_tokens":30,"output_tokens":1}}}\n\n'
             b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
             b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n')
    second = streamgen.anthropic([("text", "Hello.")], stop_reason="end_turn")
    with FaultServer() as server:
        server.replies += [Reply(first, cut_at=len(first)), Reply(second)]
        runtime = open_runtime(config=Config(), endpoint=Endpoint("anthropic", server.url, "claude-x", "test"))
        session = runtime.session()
        session.backoff = 0.0

        async def go() -> Any:
            try:
                return await session.send("hi")
            finally:
                await session.aclose()
                runtime.close()

        done = asyncio.run(go())
    (turn,) = session.turns
    assert turn.attempts == 2 and done.status == "done"
    demo = Usage.from_dict(_demo_usage_of(second))
    assert demo is not None
    assert turn.usage == Usage(30, None) + demo


def _demo_usage_of(body: bytes) -> dict[str, int]:
    """The input and output a streamgen Messages body says (what the demo's encoder wrote)."""
    text = body.decode()
    return {"input": int(re.findall(r'"input_tokens": ?(\d+)', text)[0]),
            "output": int(re.findall(r'"output_tokens": ?(\d+)', text)[-1])}


def test_migrating_a_version_2_store_keeps_its_turns_without_usage(tmp_path: Path) -> None:
    """A store from before usage: the migration adds the columns; old turns have no usage (not zeros)."""
    path = tmp_path / "callstream.db"
    db = sqlite3.connect(path, isolation_level=None)
    for step in schema.STEPS[:2]:
        step(db)
    db.execute("PRAGMA user_version = 2")
    db.execute("INSERT INTO conversations (id, title, created, updated, provider, model, dialect, head) "
               "VALUES ('c1', 't', 0, 0, 'demo', 'demo', 'openai-chat', 1)")
    db.execute("INSERT INTO entries (conversation, seq, kind, text, state, started, parent, branch) "
               "VALUES ('c1', 0, 'user', 'hi', 'done', 0, NULL, '')")
    db.execute("INSERT INTO entries (conversation, seq, kind, turn, state, attempts, outcome, started, finished, "
               "parent, branch) VALUES ('c1', 1, 'turn', 0, 'done', 1, 'complete', 0, 1, 0, '')")
    db.close()
    store = Store(path)
    try:
        assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION >= 3
        stored = store.load("c1")
        assert stored is not None
        (turn,) = [i for i in stored.items if isinstance(i, StoredTurn)]
        assert (turn.usage, turn.model) == (None, None)
        assert "usage" not in export_document(stored)["items"][1]
        assert "tokens" not in markdown_of(stored, lambda name: ([], []))
    finally:
        store.close()


def test_a_damaged_usage_column_reopens_as_no_usage(tmp_path: Path) -> None:
    session, _, _ = _demo_exchange("anthropic")
    runtime = open_runtime(config=demo_config("anthropic"))
    try:
        storefaults.damage_usage(runtime.store.path, session.conversation)
        stored = runtime.store.load(session.conversation)
        assert stored is not None
        assert all(i.usage is None for i in stored.items if isinstance(i, StoredTurn))
    finally:
        runtime.close()


@pytest.mark.parametrize("usage", [{"input": "12"}, {"input": -5, "output": True}])
def test_an_import_keeps_only_real_counts(usage: dict[str, Any], tmp_path: Path) -> None:
    runtime = open_runtime(config=demo_config())
    try:
        document = {"format": "callstream-transcript", "version": 2,
                    "conversation": {"id": "imp1", "provider": "demo", "model": "demo", "dialect": "openai-chat"},
                    "items": [{"kind": "user", "entry": 0, "text": "hi"},
                              {"kind": "turn", "entry": 1, "parent": 0, "turn": 0, "outcome": "complete",
                               "blocks": [{"type": "text", "text": "hello"}], "usage": {**usage, "output": 9},
                               "model": "m"}]}
        import_document(runtime.store, document)
        stored = runtime.store.load("imp1")
        assert stored is not None
        turn = stored.items[-1]
        assert isinstance(turn, StoredTurn) and turn.usage == Usage(None, 9) and turn.model == "m"
    finally:
        runtime.close()


def test_an_import_whose_usage_is_not_an_object_is_refused(tmp_path: Path) -> None:
    runtime = open_runtime(config=demo_config())
    try:
        document = {"format": "callstream-transcript", "version": 2,
                    "conversation": {"id": "imp2", "provider": "demo", "model": "demo", "dialect": "openai-chat"},
                    "items": [{"kind": "turn", "entry": 0, "turn": 0, "blocks": [], "usage": [1, 2]}]}
        with pytest.raises(ImportError_, match="usage must be an object"):
            import_document(runtime.store, document)
        assert runtime.store.load("imp2") is None
    finally:
        runtime.close()


# -- ask ---------------------------------------------------------------------------------------------

def _config_file(home: Path, dialect: str, usage: bool = True) -> None:
    (home / "config.toml").write_text(
        f'default = "demo"\n[providers.demo]\nprovider = "demo"\ndialect = "{dialect}"\nspeed = 0\n'
        f"usage = {'true' if usage else 'false'}\n")


@pytest.mark.parametrize("dialect", ["openai-chat", "gemini"])
def test_ask_json_carries_usage_per_turn_and_in_all(home: Path, dialect: str) -> None:
    _config_file(home, dialect)
    out, err = io.StringIO(), io.StringIO()
    assert run_ask(PROMPT, as_json=True, out=out, err=err, approve="all") == 0
    document = json.loads(out.getvalue())
    turns = document["turns"]
    assert len(turns) >= 3 and all(t["model"] == "demo" and t["usage"]["input"] > 0 for t in turns)
    assert document["usage"] == {"input": sum(t["usage"]["input"] for t in turns),
                                 "output": sum(t["usage"]["output"] for t in turns)}
    assert err.getvalue() == ""  # not a terminal, no --verbose: no summary line


def test_ask_verbose_ends_with_one_line_of_cost_on_stderr(home: Path) -> None:
    _config_file(home, "anthropic")
    out, err = io.StringIO(), io.StringIO()
    assert run_ask("Show me order A-1042", out=out, err=err, verbose=True) == 0
    line = err.getvalue().strip().splitlines()[-1]
    assert re.fullmatch(r"· demo · 2 requests · tokens \d+ in · \d+ out · \d+\.\d s", line), line


def test_ask_without_usage_shows_no_numbers(home: Path) -> None:
    _config_file(home, "openai-chat", usage=False)
    out, err = io.StringIO(), io.StringIO()
    assert run_ask("Show me order A-1042", as_json=True, out=out, err=err, verbose=True) == 0
    document = json.loads(out.getvalue())
    assert "usage" not in document and all("usage" not in t for t in document["turns"])
    line = err.getvalue().strip().splitlines()[-1]
    assert line == f"· demo · 2 requests · no token counts from the provider · {line.rsplit('· ', 1)[1]}"
    assert not re.search(r"\b0 (in|out)\b", err.getvalue())


def test_a_config_usage_that_is_not_a_boolean_is_refused(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nusage = "no"\n')
    err = io.StringIO()
    assert run_ask("hi", out=io.StringIO(), err=err) == 2
    assert "usage must be true or false" in err.getvalue()


# -- a real OpenAI-compatible server ------------------------------------------------------------------

@real_peer
@pytest.mark.parametrize("usage", [True, False])
def test_llama_server_accepts_include_usage_and_reports_it(peer: str, home: Path, usage: bool) -> None:  # noqa: F811
    """llama-server takes ``stream_options`` and then sends its usage chunk (``choices: []``); with the
    profile's ``usage = false`` it is not asked and sends none: no numbers, not zeros."""
    (home / "config.toml").write_text(
        f'default = "peer"\n[providers.peer]\nprovider = "openai-chat"\nmodel = "smollm2-135m"\nbase_url = "{peer}"\n'
        f"max_rounds = 1\nread_timeout = 120\noptions = {{ temperature = 0, max_tokens = 8 }}\n"
        f"usage = {'true' if usage else 'false'}\n")
    out, err = io.StringIO(), io.StringIO()
    run_ask("Say hi", as_json=True, out=out, err=err, no_tools=True)
    document = json.loads(out.getvalue())
    (turn,) = document["turns"]
    assert turn["outcome"] in ("complete", "truncated"), turn
    if usage:
        assert turn["usage"]["input"] > 0 and 0 < turn["usage"]["output"] <= 8, turn
        assert document["usage"] == turn["usage"]
    else:
        assert "usage" not in turn and "usage" not in document


# -- the TUI -------------------------------------------------------------------------------------------

def _lines(app: Any) -> list[str]:
    return [str(w.render()) for w in app.screen.query(UsageLine)]


def _status_usage(app: Any) -> str:
    return app.screen.query_one(StatusLine).usage


async def test_the_tui_shows_each_exchange_and_the_conversation_and_a_reopen_shows_the_same() -> None:
    app = tui.demo_app()
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.send(app, pilot, PROMPT)
        first = total(t.usage for t in app.session.turns)  # the demo's numbers, one per request
        assert first is not None and len(app.session.turns) >= 3
        assert _lines(app) == [f"demo · {usage_words(first)}"]
        assert _status_usage(app) == f"conversation {usage_words(first, brief=True)}"
        seen = len(app.session.turns)
        await tui.send(app, pilot, "Show me order A-1042")
        second = total(t.usage for t in app.session.turns[seen:])
        assert second is not None
        assert _lines(app) == [f"demo · {usage_words(first)}", f"demo · {usage_words(second)}"]
        assert _status_usage(app) == f"conversation {usage_words(first + second, brief=True)}"
        live = tui.shown_svg(app)
        conversation = app.session.conversation
    reopened = tui.still(make_app(config=tui.demo_config(), conversation=conversation))
    async with reopened.run_test(size=tui.SIZE) as pilot:
        await quiet(pilot)
        assert _lines(reopened) == [f"demo · {usage_words(first)}", f"demo · {usage_words(second)}"]
        assert _status_usage(reopened) == f"conversation {usage_words(first + second, brief=True)}"
        assert screen_svg(reopened) == live


async def test_the_conversation_total_sums_across_a_model_switch() -> None:
    app = tui.demo_app()
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.send(app, pilot, "Show me order A-1042")
        seen = len(app.session.turns)
        await tui.send(app, pilot, "/model anthropic")
        assert app.session.endpoint.dialect == "anthropic"
        await tui.send(app, pilot, "Show me order A-1043")
        chat = total(t.usage for t in app.session.turns[:seen])
        messages = total(t.usage for t in app.session.turns[seen:])
        assert chat is not None and messages is not None
        assert _lines(app) == [f"demo · {usage_words(chat)}", f"demo · {usage_words(messages)}"]
        assert _status_usage(app) == f"conversation {usage_words(chat + messages, brief=True)}"


async def test_a_stream_without_usage_shows_no_numbers_in_the_tui() -> None:
    body = streamgen.anthropic([("text", "Hello there.")], stop_reason="end_turn")
    body = re.sub(rb'"usage": ?\{[^}]*\}', b'"usage": null', body)
    assert b"_tokens" not in body
    with FaultServer() as server:
        server.replies.append(Reply(body))
        app = tui.still(make_app(config=Config(), endpoint=Endpoint("anthropic", server.url, "claude-x", "test")))
        async with app.run_test(size=tui.SIZE) as pilot:
            await tui.send(app, pilot, "hi")
            assert app.session.turns[0].usage is None
            assert _lines(app) == ["m · no token counts from the provider"]  # the model the wire named
            assert _status_usage(app) == ""
            shown = "\n".join(screen_lines(app))
            assert "tokens" not in shown.replace("no token counts", "") and not re.search(r"\b0 (in|out)\b", shown)


async def test_a_cancelled_turn_re_issued_by_ctrl_r_counts_both_runs_live_and_stored() -> None:
    """Anthropic's input arrives at message_start: the cancelled run spent it; Ctrl+R re-issues the
    same turn index, and its stored usage is both runs' together, as the line under it says."""
    head = (b'data: {"type":"message_start","message":{"id":"m1","model":"claude-x","content":[],'
            b'"usage":{"input_tokens":30,"output_tokens":1}}}\n\n'
            b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
            b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n')
    hold = threading.Event()
    again = streamgen.anthropic([("text", "Hello.")], stop_reason="end_turn")
    with FaultServer() as server:
        # the first reply stops after its first words until the test is over: Esc finds it streaming
        server.replies += [Reply(head + b": more\n\n", pause_at=len(head), hold=hold), Reply(again)]
        app = tui.still(make_app(config=Config(), endpoint=Endpoint("anthropic", server.url, "claude-x", "test")))
        try:
            async with app.run_test(size=tui.SIZE) as pilot:
                app.screen.query_one(PromptInput).text = "hi"
                await pilot.press("enter")
                await tui.wait_for(pilot, lambda: app.screen.query(ProseBlock) and app.session.busy, "the reply")
                await pilot.press("escape")
                await tui.settle(app, pilot)
                assert app.session.turns[0].usage == Usage(30, None)  # the input only: no output count came
                await pilot.press("ctrl+r")
                await tui.settle(app, pilot)
                first, second = app.session.turns
                assert first.index == second.index
                both = Usage(30, None) + Usage.from_dict(_demo_usage_of(again))  # type: ignore[operator]
                assert second.usage is not None and both == first.usage + second.usage  # type: ignore[operator]
                assert _lines(app) == [f"m · {usage_words(both)}"]
                stored = app.runtime.store.load(app.session.conversation)
                assert stored is not None
                assert [i.usage for i in stored.items if isinstance(i, StoredTurn)] == [both]
        finally:
            hold.set()
