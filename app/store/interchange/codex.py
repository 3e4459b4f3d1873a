"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl``).

Read as Codex 0.17x writes them (tests/data/imports/codex/, made by the real
program), and as documented before it (research/field.md §4.2): one envelope per
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
``turn_context`` are not imported: the protocol log is the conversation —
but for usage: ``token_usage_record`` (one per response), or in rollouts
without it ``event_msg`` ``token_count``'s ``last_token_usage``. A
``compacted`` line is a note holding the summary the model was given; the
assistant messages around it (Codex records the summarizing reply, then
goes on) come in as they are, consecutive ones joined. A line or item type
this does not know is left out and counted.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

from ...stream.usage import Usage, count
from ..native import ImportError_
from . import Imported, Step, conversation_of, imported_id, jsonl

__all__ = ["read"]

_HARNESS = ("<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "<turn_aborted>",
            "<skills_instructions>", "# AGENTS.md instructions")
#: Line types read (or known not to be the conversation: the TUI's display log, settings).
_RECORDS = ("session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state",
            "token_usage_record")
#: Response items that are not the conversation (a snapshot for undo, a web search's record).
_IGNORED_ITEMS = ("ghost_snapshot", "web_search_call", "local_shell_call", "compaction", "other")
#: How exec_command's output (Codex 0.17x) says a command's exit status.
_EXITED = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)$", re.MULTILINE)


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict)
                   and p.get("type") in ("input_text", "output_text", "text"))


def _output(value: Any) -> tuple[str, bool]:
    """A call output: a string (exec_command's says ``Process exited with code N``
    in its head; an older shell's is JSON with ``metadata.exit_code``), or an object
    with ``content`` (and maybe ``success``)."""
    if isinstance(value, str):
        try:
            inner = json.loads(value)
        except ValueError:
            exited = _EXITED.search(value.split("\nOutput:\n", 1)[0])
            return value, bool(exited and int(exited.group(1)) != 0)
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


def _usage(value: Any) -> Usage | None:
    """Codex's own usage record (``token_usage_record.usage``, a ``token_count``'s
    ``last_token_usage``): ``input_tokens`` with the cached ones in, ``output_tokens``
    with the reasoning ones in, as the Responses wire counts them."""
    if not isinstance(value, dict):
        return None
    found = Usage(count(value.get("input_tokens")), count(value.get("output_tokens")),
                  count(value.get("cached_input_tokens")), count(value.get("reasoning_output_tokens")))
    return found if found.known else None


def _item_steps(payload: dict[str, Any], steps: list[Step], skipped: dict[str, int]) -> None:
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
    elif kind not in _IGNORED_ITEMS:
        what = f"a response_item of type {str(kind)[:40]!r}"
        skipped[what] = skipped.get(what, 0) + 1


def read(path: Path) -> Imported:
    records = jsonl(path)
    session: dict[str, Any] = next((r["payload"] for r in records if r.get("type") == "session_meta"
                    and isinstance(r.get("payload"), dict)), {})
    steps: list[Step] = []
    skipped: dict[str, int] = {}
    model = ""
    # per response: token_usage_record (Codex 0.17x); before it, event_msg token_count's last_token_usage
    records_usage = any(r.get("type") == "token_usage_record" for r in records)
    for record in records:
        payload = record.get("payload")
        kind = record.get("type")
        if not isinstance(payload, dict):
            continue
        if kind == "turn_context":
            model = str(payload.get("model") or model)
        elif kind == "response_item":
            _item_steps(payload, steps, skipped)
        elif kind == "compacted":
            summary = payload.get("message")
            steps.append(Step("note", "Codex compacted the conversation here; the model was given this summary "
                                      f"instead of what came before:\n\n{summary if isinstance(summary, str) else ''}"))
        elif kind == "token_usage_record" and records_usage:
            steps.append(Step("usage", usage=_usage(payload.get("usage"))))
        elif kind == "event_msg" and payload.get("type") == "token_count" and not records_usage:
            info = payload.get("info")
            steps.append(Step("usage", usage=_usage(info.get("last_token_usage") if isinstance(info, dict) else None)))
        elif kind not in _RECORDS:
            what = f"a line of type {str(kind)[:40]!r}"
            skipped[what] = skipped.get(what, 0) + 1
    if not any(step.kind != "usage" for step in steps):
        raise ImportError_("no response_item lines (is this a Codex rollout?)")
    ident = str(session.get("id") or path.stem)
    meta: dict[str, Any] = {"id": imported_id("codex", ident), "provider": "codex", "model": model,
                            "dialect": "openai-responses", **_times(records)}
    out = conversation_of(steps, meta, "Codex")
    out.skipped = skipped
    return out


def _times(records: list[dict[str, Any]]) -> dict[str, float]:
    out: list[float] = []
    for record in records:
        try:
            out.append(datetime.datetime.fromisoformat(str(record.get("timestamp")).replace("Z", "+00:00"))
                       .timestamp())
        except ValueError:
            continue
    return {"created": min(out), "updated": max(out)} if out else {}
