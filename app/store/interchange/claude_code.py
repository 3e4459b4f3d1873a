"""Claude Code session transcripts (``~/.claude/projects/<cwd>/<session>.jsonl``).

Written from the documented shape (research/field.md §4.3): one JSON object
per line; ``type`` ``user`` / ``assistant`` lines carry ``uuid``,
``parentUuid``, ``sessionId``, ``timestamp`` and an Anthropic-style
``message`` (``content`` a string, or blocks: ``text``, ``thinking``,
``tool_use`` {id, name, input}, ``tool_result`` {tool_use_id, content,
is_error}); ``summary`` lines name the leaf a resume shows (``leafUuid``);
``system`` and ``file-history-snapshot`` lines are not the conversation.
One assistant message streamed as several lines (one per content block)
shares its ``message.id``. The session is a tree by ``parentUuid``; the path
imported is the one to the summary's leaf, else to the last line written.
The format is declared internal to Claude Code; what this does not know it
skips, and says nothing it did not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..native import ImportError_
from . import Imported, Step, conversation_of, jsonl

__all__ = ["read"]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _path(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_uuid = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}
    leaf = next((r.get("leafUuid") for r in reversed(records) if r.get("type") == "summary"
                 and r.get("leafUuid") in by_uuid), None)
    if leaf is None:
        leaf = next((r["uuid"] for r in reversed(records) if r.get("type") in ("user", "assistant")
                     and isinstance(r.get("uuid"), str)), None)
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(leaf, str) and leaf in by_uuid and leaf not in seen:
        seen.add(leaf)
        path.append(by_uuid[leaf])
        leaf = by_uuid[leaf].get("parentUuid")
    return path[::-1]


def read(path: Path) -> Imported:
    records = jsonl(path)
    chain = [r for r in _path(records) if r.get("type") in ("user", "assistant") and not r.get("isMeta")]
    if not chain:
        raise ImportError_("no user or assistant lines (is this a Claude Code session file?)")
    steps: list[Step] = []
    model = ""
    for record in chain:
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if record["type"] == "user":
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        steps.append(Step("result", _text_of(block.get("content")), str(block.get("tool_use_id")),
                                          is_error=bool(block.get("is_error"))))
            text = _text_of(content)
            if text:
                steps.append(Step("user", text))
            continue
        model = str(message.get("model") or model)
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                steps.append(Step("text", str(block.get("text", ""))))
            elif block.get("type") == "thinking":
                steps.append(Step("reasoning", str(block.get("thinking", ""))))
            elif block.get("type") == "tool_use":
                steps.append(Step("call", call_id=str(block.get("id")), name=str(block.get("name", "")),
                                  arguments=block.get("input")))
    session = str(chain[0].get("sessionId") or path.stem)
    stamps = [r.get("timestamp") for r in chain if isinstance(r.get("timestamp"), str)]
    meta: dict[str, Any] = {"id": f"claude-code-{session}", "provider": "claude-code", "model": model,
                            "dialect": "anthropic", **_times(stamps)}
    return conversation_of(steps, meta, "Claude Code")


def _times(stamps: list[Any]) -> dict[str, float]:
    import datetime

    out: list[float] = []
    for stamp in stamps:
        try:
            out.append(datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp())
        except ValueError:
            continue
    return {"created": min(out), "updated": max(out)} if out else {}
