"""One streamed request against a real HTTP server on 127.0.0.1 with
programmable faults, in every dialect: each fault class ends as it should."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from app.net.stream import RequestFailed, Timeouts, stream_once
from app.stream import StreamParser, Turn, assemble
from tests import streamgen
from tests.faultserver import FaultServer, Reply

SCRIPT = [("text", "Looking it up. ")] + streamgen.call_script(0, "c1", "get_order", '{"order_id": "A-1042"}', 4)
BODIES = {name: encode(SCRIPT) for name, encode in streamgen.ENCODERS.items() if name != "gemini-partial-args"}
DIALECTS = list(BODIES)


def shape(turn: Turn) -> dict[str, object]:
    """The turn as inspect shows it, without the arrival times a live read adds."""
    document = turn.to_dict()
    for block in document["blocks"]:  # type: ignore[attr-defined]
        block.pop("timings", None)
    return document


def run(server: FaultServer, dialect: str, timeouts: Timeouts | None = None) -> Turn:
    async def go() -> Turn:
        async with httpx.AsyncClient() as client:
            parser = StreamParser(dialect)
            return await stream_once(client, server.url + "/x", {}, {"q": 1}, parser,
                                     timeouts or Timeouts(2.0, 2.0, 10.0), lambda updates: None)

    return asyncio.run(go())


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with FaultServer() as srv:
        yield srv


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("chunk", [1, 7, 64, 4096])
def test_any_network_chunking_gives_the_same_turn(server: FaultServer, dialect: str, chunk: int) -> None:
    server.replies.append(Reply(BODIES[dialect], chunk=chunk))
    turn = run(server, dialect)
    assert shape(turn) == shape(assemble([BODIES[dialect]]))
    assert turn.outcome == "complete"
    assert server.requests[0]["body"] == {"q": 1}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_delays_between_chunks_within_the_read_timeout(server: FaultServer, dialect: str) -> None:
    server.replies.append(Reply(BODIES[dialect], chunk=200, delay=0.02))
    assert run(server, dialect).outcome == "complete"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_mid_stream_cut_is_a_disconnect(server: FaultServer, dialect: str) -> None:
    body = BODIES[dialect]
    server.replies.append(Reply(body, chunk=32, cut_at=len(body) * 2 // 3))
    turn = run(server, dialect)
    assert turn.outcome == "cut_off" and turn.cause == "disconnect" and "dropped" in (turn.error or "")
    assert turn.text == "Looking it up. "


@pytest.mark.parametrize("dialect", DIALECTS)
def test_connection_reset_is_a_disconnect(server: FaultServer, dialect: str) -> None:
    body = BODIES[dialect]
    server.replies.append(Reply(body, chunk=32, cut_at=len(body) // 2, reset=True))
    turn = run(server, dialect)
    assert turn.outcome == "cut_off" and turn.cause == "disconnect"
    assert not any(c.final for c in turn.calls)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_silence_longer_than_the_read_timeout(server: FaultServer, dialect: str) -> None:
    server.replies.append(Reply(BODIES[dialect], stall=1.0))
    turn = run(server, dialect, Timeouts(2.0, 0.3, 10.0))
    assert turn.outcome == "cut_off" and turn.cause == "timeout" and "read timeout" in (turn.error or "")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_trickle_hits_the_overall_deadline(server: FaultServer, dialect: str) -> None:
    server.replies.append(Reply(BODIES[dialect], chunk=8, delay=0.05))
    turn = run(server, dialect, Timeouts(2.0, 1.0, 0.5))
    assert turn.outcome == "cut_off" and turn.cause == "timeout" and "deadline" in (turn.error or "")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_error_event_mid_stream(server: FaultServer, dialect: str) -> None:
    encoder = {"openai-chat": streamgen.ChatEncoder, "anthropic": streamgen.MessagesEncoder,
               "openai-responses": streamgen.ResponsesEncoder, "gemini": streamgen.GeminiEncoder}[dialect]()
    frames = streamgen.render(encoder, SCRIPT[:3]) + encoder.error("Overloaded")
    server.replies.append(Reply(b"".join(frames)))
    turn = run(server, dialect)
    assert turn.outcome == "provider_error" and turn.error == "Overloaded"


@pytest.mark.parametrize("status,retryable", [(429, True), (503, True), (529, True), (408, True), (409, True),
                                              (400, False), (401, False), (404, False)])
def test_http_status_before_the_stream(server: FaultServer, status: int, retryable: bool) -> None:
    body = json.dumps({"error": {"message": f"status {status} says no", "type": "x"}}).encode()
    server.replies.append(Reply(body, status=status, headers={"Retry-After": "2"}))
    with pytest.raises(RequestFailed) as caught:
        run(server, "openai-chat")
    assert caught.value.status == status and caught.value.retryable is retryable
    assert caught.value.message == f"HTTP {status}: status {status} says no"
    assert caught.value.retry_after == 2.0


def test_retry_after_ms_and_http_date(server: FaultServer) -> None:
    server.replies.append(Reply(b"{}", status=429, headers={"retry-after-ms": "1500"}))
    with pytest.raises(RequestFailed) as caught:
        run(server, "anthropic")
    assert caught.value.retry_after == 1.5


def test_html_error_page_with_status(server: FaultServer) -> None:
    server.replies.append(Reply(b"<html><body>502 Bad Gateway</body></html>", status=502))
    with pytest.raises(RequestFailed) as caught:
        run(server, "gemini")
    assert caught.value.retryable and "502" in caught.value.message


def test_nothing_listening_is_a_retryable_connect_failure() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def go() -> None:
        async with httpx.AsyncClient() as client:
            await stream_once(client, f"http://127.0.0.1:{port}/x", {}, {}, StreamParser("openai-chat"),
                              Timeouts(1.0, 1.0, 5.0), lambda updates: None)

    with pytest.raises(RequestFailed) as caught:
        asyncio.run(go())
    assert caught.value.retryable and "could not connect" in caught.value.message


def test_recorder_sees_every_chunk_before_parsing(server: FaultServer) -> None:
    body = BODIES["anthropic"]
    server.replies.append(Reply(body, chunk=50))
    seen: list[bytes] = []

    class Tap:
        def chunk(self, at: float, data: bytes) -> None:
            seen.append(data)

        def marker(self, kind: str, info: dict[str, object]) -> None:
            pass

    async def go() -> Turn:
        async with httpx.AsyncClient() as client:
            return await stream_once(client, server.url, {}, {}, StreamParser(), Timeouts(), lambda u: None, Tap())

    turn = asyncio.run(go())
    assert b"".join(seen) == body and turn.outcome == "complete"


@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_real_fixture_over_real_http(server: FaultServer, dialect: str) -> None:
    from tests.conftest import REAL

    files = sorted((REAL / dialect).glob("*.sse")) if REAL.is_dir() else []
    if not files:
        pytest.skip(reason=f"real fixtures absent: {REAL} not found")
    for path in files:
        server.replies.append(Reply(path.read_bytes(), chunk=37, delay=0.0))
        assert shape(run(server, dialect)) == shape(assemble([path.read_bytes()])), path.name
