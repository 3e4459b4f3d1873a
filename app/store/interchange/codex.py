"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl``).

Written from the documented shape (research/field.md §4.2): one envelope per
line, ``{timestamp, type, payload}``. ``session_meta`` (the first line) has
the session ``id`` (and ``forked_from_id`` for a fork); ``response_item`` is
the protocol log the model sees — ``message`` (role ``user`` / ``assistant``
with ``input_text`` / ``output_text`` parts; ``developer`` and ``system``
are instructions, not the conversation, and a user message that is only
``<environment_context>`` or ``<user_instructions>`` is the harness's),
``reasoning`` (its ``summary`` texts), ``function_call`` {name, arguments
(a JSON string), call_id} and ``custom_tool_call`` {name, input, call_id},
paired with ``function_call_output`` / ``custom_tool_call_output`` {call_id,
output} by ``call_id``. ``event_msg`` (the TUI's display log) and
``turn_context`` are not imported: the protocol log is the conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..native import ImportError_
from . import Imported, Step, conversation_of, jsonl

__all__ = ["read"]

_HARNESS = ("<environment_context>", "<user_instructions>", "<INSTRUCTIONS>")


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict)
                   and p.get("type") in ("input_text", "output_text", "text"))


def _output(value: Any) -> tuple[str, bool]:
    """A call output: a string, or an object with ``content`` (and maybe ``success``)."""
    if isinstance(value, str):
        try:
            inner = json.loads(value)
        except ValueError:
            return value, False
        if isinstance(inner, dict) and "output" in inner and set(inner) <= {"output", "metadata"}:
            exit_code = (inner.get("metadata") or {}).get("exit_code") if isinstance(inner.get("metadata"),
                                                                                       dict) else None
            return str(inner["output"]), bool(exit_code)
        return value, False
    if isinstance(value, dict):
        text = value.get("content")
        return (text if isinstance(text, str) else json.dumps(value, ensure_ascii=False)), value.get(
            "success") is False
    return json.dumps(value, ensure_ascii=False), False


def read(path: Path) -> Imported:
    records = jsonl(path)
    session: dict[str, Any] = next((r["payload"] for r in records if r.get("type") == "session_meta"
                    and isinstance(r.get("payload"), dict)), {})
    steps: list[Step] = []
    model = ""
    for record in records:
        payload = record.get("payload")
        if record.get("type") == "turn_context" and isinstance(payload, dict):
            model = str(payload.get("model") or model)
        if record.get("type") != "response_item" or not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        if kind == "message":
            role, text = payload.get("role"), _texts(payload.get("content"))
            if role == "user" and not text.lstrip().startswith(_HARNESS):
                steps.append(Step("user", text))
            elif role == "assistant":
                steps.append(Step("text", text))
        elif kind == "reasoning":
            summary = payload.get("summary")
            if isinstance(summary, list):
                steps.append(Step("reasoning", "\n".join(str(s.get("text", "")) for s in summary
                                                         if isinstance(s, dict))))
        elif kind == "function_call":
            raw = payload.get("arguments")
            try:
                arguments = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                arguments = raw
            steps.append(Step("call", call_id=str(payload.get("call_id")), name=str(payload.get("name", "")),
                              arguments=arguments))
        elif kind == "custom_tool_call":
            steps.append(Step("call", call_id=str(payload.get("call_id")), name=str(payload.get("name", "")),
                              arguments={"input": payload.get("input", "")}))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            text, failed = _output(payload.get("output"))
            steps.append(Step("result", text, str(payload.get("call_id")), is_error=failed))
    if not steps:
        raise ImportError_("no response_item lines (is this a Codex rollout?)")
    ident = str(session.get("id") or path.stem)
    meta: dict[str, Any] = {"id": f"codex-{ident}", "provider": "codex", "model": model,
                            "dialect": "openai-responses"}
    return conversation_of(steps, meta, "Codex")
