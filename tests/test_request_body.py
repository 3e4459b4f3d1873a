"""A request's JSON body (``app/net/stream.py``, ``_JSONBody``): its Content-Length is counted by writing
it a chunk at a time, and a body of at most ``KEEP_BELOW`` bytes keeps those chunks and sends them
(writing a long conversation's history again cost a second encoding of every request, 17 ms at 500
exchanges), while a larger one (a history carrying a 10 MB argument) keeps nothing and is written again
as it is sent. Either way what is sent is ``json.dumps``' UTF-8 text and its length is the Content-Length."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from app.net import stream
from app.stream import jsonreuse


def _sent(body: stream._JSONBody) -> bytes:
    async def read() -> bytes:
        return b"".join([chunk async for chunk in body])

    return asyncio.run(read())


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    writes: list[int] = []
    real = jsonreuse.batched

    def batched(written: Any) -> Any:
        writes.append(1)
        return real(written)

    monkeypatch.setattr(jsonreuse, "batched", batched)
    return writes


def _history(exchanges: int) -> dict[str, Any]:
    messages = []
    for i in range(exchanges):
        messages += [{"role": "user", "content": f"Show me order A-{1000 + i} ✓"},
                     {"role": "assistant", "content": "Looking.", "tool_calls": [
                         {"id": f"c{i}", "type": "function",
                          "function": {"name": "get_order", "arguments": json.dumps({"order_id": f"A-{i}"})}}]},
                     {"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"status": "shipped"})}]
    return {"model": "m", "stream": True, "messages": messages}


def test_a_conversations_body_is_written_once_and_sent_as_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    writes = _counting(monkeypatch)
    body = _history(500)
    content = stream._JSONBody(body)
    expected = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    assert content.kept is not None and content.size == len(expected) <= stream.KEEP_BELOW
    assert _sent(content) == expected and _sent(content) == expected  # sent again (a redirect) the same
    assert len(writes) == 1


def test_a_body_larger_than_it_keeps_is_written_again_as_it_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    writes = _counting(monkeypatch)
    body = {"model": "m", "messages": [{"role": "tool", "content": "x" * (stream.KEEP_BELOW + 10)}]}
    content = stream._JSONBody(body)
    assert content.kept is None
    expected = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    assert content.size == len(expected) and _sent(content) == expected
    assert len(writes) == 2
