"""A scripted model on 127.0.0.1 for the real programs whose files callstream imports.

Claude Code, Codex CLI and llm each talk to it as they talk to their provider
(streamed Anthropic Messages, streamed OpenAI Responses, OpenAI chat
completions), and it answers from a per-run script: for the prompt a request
is about, a list of moves, one per round (move k is sent after the client has
sent k rounds of tool results back). A move is a list of items — ``say``,
``think``, ``call`` (a tool by one of several names, whichever the request
offers, so one script fits each client's own tool set) or ``custom`` (a
Responses freeform tool such as Codex's ``apply_patch``). Several calls in one
move are parallel calls. The clients then really run the tools and write their
transcripts as they always do; this server writes no transcript.

Which prompt a request is about: the latest user text holding one of the
script's keys (a prompt marked ``stateful`` counts its rounds itself: after a
compaction the history no longer shows them). A request holding none (a title, a compaction summary, a
client's own side request) gets the script's ``otherwise`` text. Every
request is logged as one JSON line to ``--log`` (for the corpus README).

Run: ``python scripts/scripted_model.py SCRIPT.json --port-file PATH`` — it
listens on an ephemeral port of 127.0.0.1 and writes the port to PATH.
It is stdlib only, so the corpus script can start it from any interpreter.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["ScriptedModel", "main"]

_COUNTER = itertools.count(1)


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(payload, separators=(",", ":")) + "\n\n").encode()


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict)
                         and p.get("type") in ("text", "input_text", "output_text"))
    return ""


class ScriptedModel:
    """The script and the choice of a move; one instance per server."""

    def __init__(self, script: dict[str, Any]) -> None:
        self.prompts: list[dict[str, Any]] = script["prompts"]
        self.otherwise: str = script.get("otherwise", "Summary: the user asked for small checks in a scratch "
                                                      "directory; they ran and the answers were given.")
        self.lock = threading.Lock()

    def move(self, turns: list[tuple[str, str]], offered: dict[str, str]) -> tuple[list[dict[str, Any]], int]:
        """``turns``: (role, text) in order, role ``user`` (a prompt's text),
        ``results`` (one round of tool results) or ``assistant``; ``offered``:
        tool name -> kind (``function`` or ``custom``). With the move, the
        tokens to add to the input count reported (a prompt's ``inflate``: a
        client that compacts past a limit does so at once)."""
        for index in range(len(turns) - 1, -1, -1):
            role, text = turns[index]
            if role != "user":
                continue
            prompt = next((p for p in self.prompts if p["key"] in text), None)
            if prompt is None:
                continue
            if any(r == "user" and not any(p["key"] in t for p in self.prompts) for r, t in turns[index + 1:]):
                return [{"say": self.otherwise}], 0  # a side request after the prompt (a summary asked for)
            rounds = sum(1 for r, _ in turns[index + 1:] if r == "results")
            if prompt.get("stateful"):  # counted by the server: a compaction drops the rounds from the history
                rounds = prompt["served"] = prompt.get("served", -1) + 1
            moves = prompt["moves"]
            inflate = int(prompt.get("inflate", 0)) if rounds else 0
            if rounds >= len(moves):
                return [{"say": prompt.get("done", "Done.")}], inflate
            return [self._resolve(item, offered) for item in moves[rounds]], inflate
        return [{"say": self.otherwise}], 0

    @staticmethod
    def _resolve(item: dict[str, Any], offered: dict[str, str]) -> dict[str, Any]:
        if "call" not in item and "custom" not in item:
            return item
        names = item.get("call") or item.get("custom")
        names = [names] if isinstance(names, str) else names
        name = next((n for n in names if n in offered), None)
        if name is None:
            return {"say": f"(no tool among {', '.join(names)} was offered)"}
        args = item.get("args", {})
        if isinstance(args, dict) and name in item.get("args_by_name", {}):
            args = item["args_by_name"][name]
        if offered[name] == "custom":
            return {"custom": name, "input": item.get("input", "")}
        return {"call": name, "args": args}


def _call_id(prefix: str) -> str:
    return f"{prefix}{next(_COUNTER):04d}{threading.get_ident() % 9973:04d}"


def _usage(body: bytes, move: list[dict[str, Any]]) -> tuple[int, int]:
    out = sum(len(json.dumps(item)) for item in move) // 4 + 3
    return len(body) // 4, out


class _Handler(BaseHTTPRequestHandler):
    server_version = "scripted-model/1"
    model: ScriptedModel
    log: Path | None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "type": "model",
                                                      "display_name": "scripted"}]})

    def do_HEAD(self) -> None:  # noqa: N802
        self._json(200, {})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "not JSON"}})
            return
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": len(raw) // 4})
            return
        if path.endswith("/messages"):
            turns, offered = self._anthropic_turns(body)
            kind = "anthropic"
        elif path.endswith("/responses"):
            turns, offered = self._responses_turns(body)
            kind = "responses"
        elif path.endswith("/chat/completions"):
            turns, offered = self._chat_turns(body)
            kind = "chat"
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})
            return
        with self.model.lock:
            move, inflate = self.model.move(turns, offered)
        if self.log is not None:
            with self.model.lock, self.log.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"path": path, "turns": len(turns), "tools": sorted(offered),
                                    "last": turns[-1][1][:120] if turns else "", "move": move}) + "\n")
        usage = _usage(raw, move)
        usage = (usage[0] + inflate, usage[1])
        if kind == "anthropic":
            self._anthropic(body, move, usage)
        elif kind == "responses":
            self._responses(body, move, usage)
        else:
            self._chat(body, move, usage)

    # -- reading requests ---------------------------------------------------

    @staticmethod
    def _anthropic_turns(body: dict[str, Any]) -> tuple[list[tuple[str, str]], dict[str, str]]:
        turns: list[tuple[str, str]] = []
        for message in body.get("messages") or []:
            content = message.get("content")
            if message.get("role") == "assistant":
                turns.append(("assistant", _texts(content)))
                continue
            blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
                turns.append(("results", ""))
            else:
                turns.append(("user", _texts(blocks)))
        offered = {str(t.get("name")): "function" for t in body.get("tools") or [] if isinstance(t, dict)}
        return turns, offered

    @staticmethod
    def _responses_turns(body: dict[str, Any]) -> tuple[list[tuple[str, str]], dict[str, str]]:
        items = body.get("input")
        items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items or []
        turns: list[tuple[str, str]] = []
        for item in items:
            kind = item.get("type", "message")
            if kind == "message" and item.get("role") == "user":
                turns.append(("user", _texts(item.get("content"))))
            elif kind == "message" and item.get("role") == "assistant":
                turns.append(("assistant", _texts(item.get("content"))))
            elif kind in ("function_call", "custom_tool_call"):
                turns.append(("call", ""))
            elif kind.endswith("_output"):
                if not turns or turns[-1][0] != "results":
                    turns.append(("results", ""))
        offered = {str(t.get("name")): ("custom" if t.get("type") == "custom" else "function")
                   for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")}
        return turns, offered

    @staticmethod
    def _chat_turns(body: dict[str, Any]) -> tuple[list[tuple[str, str]], dict[str, str]]:
        turns: list[tuple[str, str]] = []
        for message in body.get("messages") or []:
            role = message.get("role")
            if role == "user":
                turns.append(("user", _texts(message.get("content"))))
            elif role == "assistant":
                turns.append(("assistant", _texts(message.get("content"))))
            if role == "assistant" and message.get("tool_calls"):
                turns.append(("call", ""))
            elif role == "tool" and (not turns or turns[-1][0] != "results"):
                turns.append(("results", ""))
        offered = {str((t.get("function") or {}).get("name")): "function" for t in body.get("tools") or []
                   if isinstance(t, dict)}
        return turns, offered

    # -- writing replies ----------------------------------------------------

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _anthropic(self, body: dict[str, Any], move: list[dict[str, Any]], usage: tuple[int, int]) -> None:
        message_id = _call_id("msg_scripted")
        content: list[dict[str, Any]] = []
        for item in move:
            if "say" in item:
                content.append({"type": "text", "text": item["say"]})
            elif "think" in item:
                content.append({"type": "thinking", "thinking": item["think"], "signature": "scripted-signature"})
            elif "call" in item:
                content.append({"type": "tool_use", "id": _call_id("toolu_scripted"), "name": item["call"],
                                "input": item["args"]})
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        model = str(body.get("model") or "scripted")
        message_usage = {"input_tokens": usage[0], "output_tokens": usage[1], "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 0}
        if not body.get("stream"):
            self._json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                             "content": content, "stop_reason": stop, "stop_sequence": None, "usage": message_usage})
            return
        self._start_stream()
        frames = [_sse({"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**message_usage, "output_tokens": 1}}},
            "message_start")]
        for index, block in enumerate(content):
            if block["type"] == "text":
                frames.append(_sse({"type": "content_block_start", "index": index,
                                    "content_block": {"type": "text", "text": ""}}, "content_block_start"))
                frames.append(_sse({"type": "content_block_delta", "index": index,
                                    "delta": {"type": "text_delta", "text": block["text"]}}, "content_block_delta"))
            elif block["type"] == "thinking":
                frames.append(_sse({"type": "content_block_start", "index": index,
                                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                                   "content_block_start"))
                frames.append(_sse({"type": "content_block_delta", "index": index,
                                    "delta": {"type": "thinking_delta", "thinking": block["thinking"]}},
                                   "content_block_delta"))
                frames.append(_sse({"type": "content_block_delta", "index": index,
                                    "delta": {"type": "signature_delta", "signature": block["signature"]}},
                                   "content_block_delta"))
            else:
                frames.append(_sse({"type": "content_block_start", "index": index,
                                    "content_block": {**block, "input": {}}}, "content_block_start"))
                frames.append(_sse({"type": "content_block_delta", "index": index,
                                    "delta": {"type": "input_json_delta",
                                              "partial_json": json.dumps(block["input"])}}, "content_block_delta"))
            frames.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        frames.append(_sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": usage[1]}}, "message_delta"))
        frames.append(_sse({"type": "message_stop"}, "message_stop"))
        self.wfile.write(b"".join(frames))
        self.wfile.flush()

    def _responses(self, body: dict[str, Any], move: list[dict[str, Any]], usage: tuple[int, int]) -> None:
        response_id = _call_id("resp_scripted")
        model = str(body.get("model") or "scripted")
        seq = itertools.count()
        frames: list[bytes] = []

        def event(payload: dict[str, Any]) -> None:
            payload["sequence_number"] = next(seq)
            frames.append(_sse(payload, payload["type"]))

        base = {"id": response_id, "object": "response", "created_at": 0, "status": "in_progress", "model": model,
                "output": []}
        event({"type": "response.created", "response": base})
        output: list[dict[str, Any]] = []
        for index, item in enumerate(move):
            if "say" in item:
                made: dict[str, Any] = {"id": _call_id("msg_"), "type": "message", "role": "assistant",
                                        "status": "completed",
                                        "content": [{"type": "output_text", "text": item["say"], "annotations": []}]}
                event({"type": "response.output_item.added", "output_index": index,
                       "item": {**made, "content": [], "status": "in_progress"}})
                event({"type": "response.output_text.delta", "item_id": made["id"], "output_index": index,
                       "content_index": 0, "delta": item["say"]})
            elif "think" in item:
                made = {"id": _call_id("rs_"), "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": item["think"]}]}
                event({"type": "response.output_item.added", "output_index": index,
                       "item": {**made, "summary": []}})
                event({"type": "response.reasoning_summary_text.delta", "item_id": made["id"],
                       "output_index": index, "summary_index": 0, "delta": item["think"]})
            elif "custom" in item:
                made = {"id": _call_id("ctc_"), "type": "custom_tool_call", "status": "completed",
                        "call_id": _call_id("call_scripted"), "name": item["custom"], "input": item["input"]}
                event({"type": "response.output_item.added", "output_index": index, "item": {**made, "input": ""}})
            else:
                made = {"id": _call_id("fc_"), "type": "function_call", "status": "completed",
                        "call_id": _call_id("call_scripted"), "name": item["call"],
                        "arguments": json.dumps(item["args"])}
                event({"type": "response.output_item.added", "output_index": index,
                       "item": {**made, "arguments": ""}})
            event({"type": "response.output_item.done", "output_index": index, "item": made})
            output.append(made)
        total = {"input_tokens": usage[0], "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": usage[1], "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": usage[0] + usage[1]}
        event({"type": "response.completed", "response": {**base, "status": "completed", "output": output,
                                                            "usage": total}})
        self._start_stream()
        self.wfile.write(b"".join(frames))
        self.wfile.flush()

    def _chat(self, body: dict[str, Any], move: list[dict[str, Any]], usage: tuple[int, int]) -> None:
        chunk_id = _call_id("chatcmpl-scripted")
        model = str(body.get("model") or "scripted")
        text = "".join(item["say"] for item in move if "say" in item)
        calls = [{"id": _call_id("call_scripted"), "type": "function",
                  "function": {"name": item["call"], "arguments": json.dumps(item["args"])}}
                 for item in move if "call" in item]
        finish = "tool_calls" if calls else "stop"
        counts = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            self._json(200, {"id": chunk_id, "object": "chat.completion", "created": 0, "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                             "usage": counts})
            return

        def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
            return ("data: " + json.dumps({"id": chunk_id, "object": "chat.completion.chunk", "created": 0,
                                           "model": model, "choices": [{"index": 0, "delta": delta,
                                                                        "finish_reason": reason}]}) + "\n\n").encode()

        frames = [chunk({"role": "assistant", "content": ""})]
        if text:
            frames.append(chunk({"content": text}))
        for index, call in enumerate(calls):  # as OpenAI streams them: the head, then the arguments
            head = {"index": index, "id": call["id"], "type": "function",
                    "function": {"name": call["function"]["name"], "arguments": ""}}
            frames.append(chunk({"tool_calls": [head]}))
            frames.append(chunk({"tool_calls": [{"index": index,
                                                 "function": {"arguments": call["function"]["arguments"]}}]}))
        frames.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            frames.append(("data: " + json.dumps({"id": chunk_id, "object": "chat.completion.chunk", "created": 0,
                                                  "model": model, "choices": [], "usage": counts}) + "\n\n").encode())
        frames.append(b"data: [DONE]\n\n")
        self._start_stream()
        self.wfile.write(b"".join(frames))
        self.wfile.flush()


def serve(script: dict[str, Any], log: Path | None = None) -> ThreadingHTTPServer:
    """A server on an ephemeral port of 127.0.0.1 (not yet serving: call serve_forever)."""
    handler = type("Handler", (_Handler,), {"model": ScriptedModel(script), "log": log})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path)
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    server = serve(json.loads(args.script.read_text()), args.log)
    args.port_file.write_text(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
