"""A fast local OpenAI-compatible server for the approval race (scripts/approval_race.sh):
every reply goes out whole in ONE write (headers and body together), as a
local model on a fast machine sends it. A request whose last message is a
tool result gets "Filed."; any other gets one side-effecting ``file_note``
call. Usage: python -m tests.approval_race_server PORTFILE (it writes its
port there once it listens, and serves until it is killed)."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from pathlib import Path

from tests import streamgen

_ids = itertools.count(1)


def reply_to(request: dict[str, object]) -> bytes:
    messages = request.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else {}
    if isinstance(last, dict) and last.get("role") == "tool":
        return streamgen.openai_chat([("text", "Filed.")], finish="stop")
    n = next(_ids)
    return streamgen.openai_chat(streamgen.call_script(0, f"call_{n}", "file_note", f'{{"text": "note {n}"}}'))


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        data = reply_to(json.loads(body or b"{}"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n%s" % (len(data), data))  # one write: one network chunk
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main(portfile: Path) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    portfile.write_text(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
