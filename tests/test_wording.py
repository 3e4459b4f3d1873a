"""What messages say (issue 14, part 8): counts pluralised by one helper,
two calls of one tool counted, a refused connection never called the
provider's error, a timeout after the connection was made never called a
connect failure, a cancelled call never said to have been cut by the stream."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys

import httpx
import pytest

from app.net.endpoint import Endpoint
from app.net.stream import RequestFailed, Timeouts, stream_once
from app.rules.words import calls_phrase, interrupted_note, plural
from app.runtime.wiring import open_runtime
from app.settings.config import Config
from app.settings.profiles import ProviderProfile
from app.stream import StreamParser
from tests import streamgen
from tests.conversations import converse, demo_config


def test_plural() -> None:
    assert [plural(n, "round") for n in (0, 1, 2)] == ["0 rounds", "1 round", "2 rounds"]
    assert plural(3, "entry", "entries") == "3 entries"


def test_two_calls_of_one_tool_are_counted_in_the_note() -> None:
    assert calls_phrase(["get_weather", "get_weather", "get_time"]) == "2 get_weather calls, get_time"
    assert interrupted_note("the connection dropped", ["get_weather", "get_weather"]) == (
        "Interrupted: the connection dropped while 2 get_weather calls were being prepared; they were not run.")
    assert interrupted_note("the connection dropped", ["get_weather"]) == (
        "Interrupted: the connection dropped while get_weather was being prepared; it was not run.")


def test_the_round_limit_message_says_1_round(home: object) -> None:
    profile = ProviderProfile(name="demo", provider="demo", demo_speed=0.0, max_rounds=1)
    runtime = open_runtime(config=Config(providers={"demo": profile}, default="demo"))
    session = runtime.session(None)

    async def go() -> str | None:
        try:
            done = await session.send("Show me order A-1042")
            assert done.status == "round_limit"
            return done.message
        finally:
            await session.aclose()
            runtime.close()

    message = asyncio.run(go()) or ""
    assert message.startswith("Stopped after 1 round of tool calls") and "1 rounds" not in message


def test_the_transcripts_list_says_1_turn(home: object) -> None:
    converse(["hello"], demo_config())
    listing = subprocess.run([sys.executable, "-m", "app", "transcripts"], capture_output=True, text=True,
                             env=os.environ.copy(), timeout=60)
    assert listing.returncode == 0, listing.stderr
    assert " 1 turn " in listing.stdout and "1 turns" not in listing.stdout


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_connection_is_not_called_the_providers_error(home: object) -> None:
    port = _closed_port()
    profile = ProviderProfile(name="p", provider="openai-chat", model="m", base_url=f"http://127.0.0.1:{port}/v1",
                              retries=0)
    endpoint = Endpoint("openai-chat", profile.base_url or "", "m", "p")
    session = converse(["hello"], Config(providers={"p": profile}, default="p"), endpoint=endpoint)
    note = session.turns[0].note or ""
    assert note.startswith("Interrupted: could not connect") and "provider reported" not in note


def test_no_response_after_the_connection_was_made_is_not_a_connect_failure() -> None:
    with socket.socket() as listener:  # the kernel completes the handshake; nobody ever answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]

        async def go() -> None:
            async with httpx.AsyncClient() as client:
                await stream_once(client, f"http://127.0.0.1:{port}/x", {}, {}, StreamParser("openai-chat"),
                                  Timeouts(2.0, 0.5, 5.0), lambda updates: None)

        with pytest.raises(RequestFailed) as caught:
            asyncio.run(go())
    message = caught.value.message
    assert "could not connect" not in message and "ReadTimeout" not in message
    assert message == "the server took the request but sent no response within 0.5 s (the read timeout)"


@pytest.mark.parametrize("cause,words", [("cancelled", "the turn was cancelled while"),
                                         ("disconnect", "the connection dropped while"),
                                         ("timeout", "the stream timed out while"),
                                         ("eof", "the stream ended while")])
def test_an_unfinished_call_says_how_its_stream_was_cut(cause: str, words: str) -> None:
    body = streamgen.openai_chat(streamgen.call_script(0, "c", "get_order", '{"order_id": "A-1"}'), finish=None,
                                 done=False)
    parser = StreamParser()
    parser.feed(body[: len(body) - 40])
    turn = parser.close(cause)
    assert (turn.calls[0].problem or "").startswith(words)
