"""A generator of synthetic provider streams, framed as each provider frames
them (by the demo model's encoders in app/demo/dialects), from one neutral
script. Used where real recordings do not reach: two
calls interleaved fragment by fragment, a megabyte of escaped arguments,
text between calls, every quirk on its own.

A script is a list of steps:
  ("text", s) | ("reasoning", s)
  ("start", slot, call_id, name)   announce a call
  ("args", slot, fragment)         one argument fragment
  ("end", slot)                    the call's own end (where the wire has one)
"""

from __future__ import annotations

import functools
from typing import Any

from app.demo.dialects.anthropic import MessagesEncoder
from app.demo.dialects.base import Encoder
from app.demo.dialects.gemini import GeminiEncoder
from app.demo.dialects.openai_chat import ChatEncoder
from app.demo.dialects.openai_responses import ResponsesEncoder

__all__ = ["ChatEncoder", "GeminiEncoder", "MessagesEncoder", "ResponsesEncoder", "render", "ENCODERS"]

Step = tuple[Any, ...]


def fragments(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def call_script(slot: int, call_id: str, name: str, args: str, size: int = 7) -> list[Step]:
    return [("start", slot, call_id, name)] + [("args", slot, f) for f in fragments(args, size)] + [("end", slot)]


def interleave(*scripts: list[Step]) -> list[Step]:
    """Starts first, then fragments round-robin, then ends."""
    starts = [s[0] for s in scripts]
    bodies = [[x for x in s if x[0] == "args"] for s in scripts]
    ends = [s[-1] for s in scripts]
    out: list[Step] = list(starts)
    longest = max(len(b) for b in bodies)
    for i in range(longest):
        for body in bodies:
            if i < len(body):
                out.append(body[i])
    return out + ends


def render(encoder: Encoder, script: list[Step]) -> list[bytes]:
    """The frames of ``script`` through one of the demo's encoders."""
    frames = encoder.begin()
    for step in script:
        kind = step[0]
        if kind == "text":
            frames += encoder.text(step[1])
        elif kind == "reasoning":
            frames += encoder.reasoning(step[1])
        elif kind == "start":
            frames += encoder.start(step[1], step[2], step[3])
        elif kind == "args":
            frames += encoder.args(step[1], step[2])
        elif kind == "end":
            frames += encoder.end(step[1])
    return frames


def openai_chat(script: list[Step], finish: str | None = "tool_calls", done: bool = True) -> bytes:
    encoder = ChatEncoder("m")
    frames = render(encoder, script)
    if finish is not None:
        frames += encoder.finish(finish)
    if done:
        frames += encoder.terminal()
    return b"".join(frames)


def anthropic(script: list[Step], stop_reason: str | None = "tool_use", stop: bool = True) -> bytes:
    encoder = MessagesEncoder("m")
    frames = render(encoder, script)
    if stop_reason is not None:
        frames += encoder.finish(stop_reason)
    if stop:
        frames += encoder.terminal()
    return b"".join(frames)


def openai_responses(script: list[Step], final: str | None = "response.completed") -> bytes:
    encoder = ResponsesEncoder("m")
    frames = render(encoder, script)
    if final is not None:
        frames += encoder.finish("max_output_tokens" if final == "response.incomplete" else "completed")
        frames += encoder.terminal()
    return b"".join(frames)


def gemini(script: list[Step], finish: str | None = "STOP", partial_args: bool = False) -> bytes:
    """Whole ``args`` per call by default (AI Studio); ``partial_args`` streams
    them as Vertex does."""
    encoder = GeminiEncoder("gemini-test", partial_args=partial_args)
    frames = render(encoder, script)
    if finish:
        frames += encoder.finish(finish)
        frames += encoder.terminal()
    return b"".join(frames)


ENCODERS = {
    "openai-chat": openai_chat,
    "anthropic": anthropic,
    "openai-responses": openai_responses,
    "gemini": gemini,
    "gemini-partial-args": functools.partial(gemini, partial_args=True),
}


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]
