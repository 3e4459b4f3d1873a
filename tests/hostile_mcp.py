"""A hostile MCP server: raw JSON-RPC, no SDK, so it can misbehave as the SDK
never would. Over stdio (``python -m tests.hostile_mcp stdio``) and over
Streamable HTTP on 127.0.0.1 (``python -m tests.hostile_mcp http PORT``,
started by ``tests.mcp_fixture.serving_http``).

What it does is scripted per test by a JSON file named by ``HOSTILE_SCRIPT``
(``write_script`` writes one), and what happened to it is written in the
directory beside the script (``acted.jsonl``: one line per call it acted on;
``starts``: how many times it started), so a test can tell "it may have
acted" from "it never saw the call".

Script keys:
- ``banner``: text printed on stdout before any JSON-RPC (a chatty stdio server).
- ``tools``: the tools ``tools/list`` answers (name, annotations, inputSchema).
- ``deep``: answer ``tools/list`` with a schema nested this many levels deep.
- ``fail_start_after``: the Nth start and later exit at once (a restart that fails).
- ``calls``: per tool name, a list of steps, one per call (the last repeats):
  ``{"answer": TEXT}``; ``{"list_changed": TOOLS, "answer": TEXT}`` (the
  list becomes TOOLS and ``notifications/tools/list_changed`` goes out
  before the answer); ``{"status": 502}`` (HTTP: that status, no JSON-RPC
  body, after acting); ``{"malformed": true}`` (a result no client can read,
  after acting); ``{"garbage": true}`` (HTTP: a JSON body that is not JSON,
  after acting); ``{"error": [CODE, MESSAGE]}`` (a JSON-RPC error answer, not
  acted); ``{"big": BYTES}`` (a text result that long, streamed, never held
  whole); ``{"exit_after": true}`` (answer, then exit).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CHUNK = 1 << 20


def write_script(directory: Path, **script: Any) -> Path:
    """A script file in ``directory`` (its state is written beside it)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "script.json"
    path.write_text(json.dumps(script))
    return path


def acted(directory: Path) -> list[dict[str, Any]]:
    """The calls the server acted on, in order."""
    file = directory / "acted.jsonl"
    return [json.loads(line) for line in file.read_text().splitlines()] if file.exists() else []


class Hostile:
    def __init__(self, script_path: Path) -> None:
        self.path = script_path
        self.state = script_path.parent
        self.lock = threading.Lock()
        self._read = 0
        self.script: dict[str, Any] = {}
        self.tools: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self._reload()

    def _reload(self) -> None:
        """(Re)read the script when it changed: a test may script an HTTP server after it started."""
        stamp = self.path.stat().st_mtime_ns
        if stamp != self._read:
            self._read = stamp
            self.script = json.loads(self.path.read_text())
            self.tools = list(self.script.get("tools", []))
            self.counts = {}

    def started(self) -> int:
        file = self.state / "starts"
        with self.lock:
            starts = int(file.read_text()) + 1 if file.exists() else 1
            file.write_text(str(starts))
        return starts

    def _act(self, name: str, params: dict[str, Any]) -> None:
        with self.lock, open(self.state / "acted.jsonl", "a") as out:
            meta = params.get("_meta") or {}
            out.write(json.dumps({"tool": name, "arguments": params.get("arguments"),
                                  "key": meta.get("callstream/idempotency-key")}) + "\n")

    def _step(self, name: str) -> dict[str, Any]:
        steps = self.script.get("calls", {}).get(name) or [{"answer": f"{name} ok"}]
        with self.lock:
            index = self.counts[name] = self.counts.get(name, 0) + 1
        return dict(steps[min(index, len(steps)) - 1])

    # Each handler yields the byte pieces of its answers (whole messages, or a big one in pieces), and
    # may say what to do at the transport (``status``, ``exit``) through the step it returns.

    def answer(self, message: dict[str, Any]) -> tuple[list[bytes | Iterator[bytes]], dict[str, Any]]:
        self._reload()
        method, ident = message.get("method"), message.get("id")
        params = message.get("params") or {}

        def result(value: Any) -> list[bytes | Iterator[bytes]]:
            return [_message({"jsonrpc": "2.0", "id": ident, "result": value})]

        if ident is None:
            return [], {}  # a notification: nothing to answer
        if method == "initialize":
            version = params.get("protocolVersion") or "2025-06-18"
            return result({"protocolVersion": version, "capabilities": {"tools": {"listChanged": True}},
                           "serverInfo": {"name": "hostile", "version": "1"}}), {}
        if method == "ping":
            return result({}), {}
        if method == "tools/list":
            deep = self.script.get("deep")
            if deep:
                nested = "[" * deep + "]" * deep
                head = '{"jsonrpc":"2.0","id":' + json.dumps(ident)
                text = head + ',"result":{"tools":[{"name":"deep","inputSchema":{"type":"object","default":' + nested
                text += "}}]}}"
                return [text.encode() + b"\n"], {}
            return result({"tools": self.tools}), {}
        if method == "tools/call":
            name = str(params.get("name"))
            step = self._step(name)
            if "error" in step:
                code, text = step["error"]
                return [_message({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": text}})], step
            self._act(name, params)
            pieces: list[bytes | Iterator[bytes]] = []
            if "list_changed" in step:
                self.tools = list(step["list_changed"])
                pieces.append(_message({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
            if step.get("malformed"):
                pieces += result({"content": "this is not a list of content blocks", "isError": "maybe"})
            elif "big" in step:
                pieces.append(_big(ident, int(step["big"])))
            else:
                pieces += result({"content": [{"type": "text", "text": step.get("answer", f"{name} ok")}]})
            return pieces, step
        return [_message({"jsonrpc": "2.0", "id": ident,
                          "error": {"code": -32601, "message": f"Method not found: {method}"}})], {}


def _message(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode() + b"\n"


def _big(ident: Any, size: int) -> Iterator[bytes]:
    """One text result ``size`` bytes long, in pieces: never held whole."""
    yield b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % json.dumps(ident).encode()
    block = b"0123456789abcdef" * (CHUNK // 16)
    left = size
    while left > 0:
        yield block[:min(left, CHUNK)]
        left -= CHUNK
    yield b'"}],"isError":false}}\n'


def _pieces(parts: list[bytes | Iterator[bytes]]) -> Iterator[bytes]:
    for part in parts:
        if isinstance(part, bytes):
            yield part
        else:
            yield from part


def serve_stdio(server: Hostile) -> None:
    out = sys.stdout.buffer
    if server.script.get("banner"):
        out.write(server.script["banner"].encode() + b"\n")
        out.flush()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        parts, step = server.answer(json.loads(line))
        for piece in _pieces(parts):
            out.write(piece)
        out.flush()
        if step.get("exit_after"):
            os._exit(0)


def serve_http(server: Hostile, port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            pass

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_DELETE = do_GET  # noqa: N815

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            parts, step = server.answer(json.loads(body))
            if not parts:
                self._send(202, "application/json", [])
                return
            status = int(step.get("status", 200))
            if status != 200:
                self._send(status, "text/html", [b"<html><body>502 Bad Gateway</body></html>"])
                return
            if step.get("garbage"):
                self._send(200, "application/json", [b"<html>upstream said no</html>"])
                return
            if len(parts) == 1:  # one answer: a JSON body, streamed without a length
                self._send(200, "application/json", [parts[0]] if isinstance(parts[0], bytes) else parts[0])
                return
            events = (b"event: message\ndata: " + part.rstrip(b"\n") + b"\n\n" for part in _pieces(parts))
            self._send(200, "text/event-stream", events)

        def _send(self, status: int, kind: str, body: Any) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("mcp-session-id", "hostile")
            self.end_headers()
            write: Callable[[bytes], Any] = self.wfile.write
            for piece in body:
                if piece:
                    write(b"%x\r\n%s\r\n" % (len(piece), piece))
            write(b"0\r\n\r\n")
            self.wfile.flush()

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    httpd.serve_forever()


def main(argv: list[str]) -> None:
    server = Hostile(Path(os.environ["HOSTILE_SCRIPT"]))
    starts = server.started()
    limit = server.script.get("fail_start_after")
    if limit and starts > limit:
        sys.exit(f"hostile: start {starts} refused (fail_start_after {limit})")
    if argv and argv[0] == "http":
        serve_http(server, int(argv[1]))
    else:
        serve_stdio(server)


if __name__ == "__main__":
    main(sys.argv[1:])
