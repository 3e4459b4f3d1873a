"""Claude Code session transcripts (``~/.claude/projects/<cwd>/<session>.jsonl``).

Read as Claude Code 2.1 writes them (tests/data/imports/claude-code/, made
by the real program): one JSON object per line. ``user`` / ``assistant``
lines carry ``uuid``, ``parentUuid``, ``sessionId`` and an Anthropic-style
``message``; each content block of one assistant message is a line of its
own (they share ``message.id`` and its ``usage``, counted once), and the
session is a tree by ``parentUuid``: parallel results hang each off its own
call's line, so the path to the last line holds one branch of them only —
the reader takes, for every message on the path, all its lines and every
result of its calls. A ``system`` ``compact_boundary`` line has
``parentUuid: null`` and ``logicalParentUuid`` naming what came before, which
is followed; the ``isCompactSummary`` user line after it is a note (the
summary the model was given), not something the user said. ``isMeta`` lines,
command echoes (``<command-name>``, ``<local-command-stdout>``) and the
harness's ``<task-notification>`` are not the user's words and are left
out. ``attachment``, ``queue-operation``, ``api-request*`` and the other
bookkeeping lines are not the conversation. A subagent's file
(``<session>/subagents/agent-<id>.jsonl``, every line ``isSidechain``) carries
its parent's ``sessionId``: it is told apart by its ``agentId``. A rewind
(``--resume-session-at``, an edit in the TUI) hangs a new line off an earlier
one: every other end of the tree is a branch beside the path to the leaf,
which stays the head. The format
is internal to Claude Code; a line type or block type this does not know is
left out and counted (``Imported.skipped``).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from ...stream.dialects.anthropic import usage_of
from ..native import ImportError_
from . import Imported, Step, add_branch, conversation_of, imported_id, jsonl

__all__ = ["read", "HARNESS_PREFIXES", "BOOKKEEPING"]

#: A user line that starts with one of these was written by Claude Code, not typed.
HARNESS_PREFIXES = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>",
                    "<local-command-caveat>", "<task-notification>", "<system-reminder>")
#: Line types that are Claude Code's bookkeeping, not the conversation (left out without a word).
BOOKKEEPING = frozenset({"attachment", "file-history-snapshot", "queue-operation", "last-prompt", "atis-latch",
                         "api-request-shape", "api-request-blob", "api-request", "tools-used", "cost-state", "mode",
                         "summary", "custom-title", "progress", "agent-name", "pr-link", "tag"})
_CONVERSATION = ("user", "assistant", "system")
_KNOWN_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image", "document")


def _count(skipped: dict[str, int], what: str) -> None:
    skipped[what] = skipped.get(what, 0) + 1


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _up(record: dict[str, Any]) -> Any:
    """The line before this one: its parent, else (a compaction's boundary) its logical parent."""
    parent = record.get("parentUuid")
    return parent if parent is not None else record.get("logicalParentUuid")


def _leaf(records: list[dict[str, Any]], by_uuid: dict[str, dict[str, Any]]) -> Any:
    leaf = next((r.get("leafUuid") for r in reversed(records) if r.get("type") == "summary"
                 and isinstance(r.get("leafUuid"), str) and r.get("leafUuid") in by_uuid), None)
    if leaf is None:
        leaf = next((r["uuid"] for r in reversed(records) if r.get("type") in ("user", "assistant")
                     and isinstance(r.get("uuid"), str)), None)
    return leaf


def _message_id(record: dict[str, Any]) -> str | None:
    message = record.get("message")
    ident = message.get("id") if isinstance(message, dict) else None
    return ident if isinstance(ident, str) else None


def _chain(records: list[dict[str, Any]], by_uuid: dict[str, dict[str, Any]], leaf: Any) -> list[dict[str, Any]]:
    """The lines of the conversation up to ``leaf``, in the order written: the
    path to it, widened to every line of each message on it and every result
    of its calls (parallel results are siblings, not a chain)."""
    taken: dict[int, dict[str, Any]] = {}
    seen: set[str] = set()
    while isinstance(leaf, str) and leaf in by_uuid and leaf not in seen:
        seen.add(leaf)
        taken[id(by_uuid[leaf])] = by_uuid[leaf]
        leaf = _up(by_uuid[leaf])
    messages = {_message_id(r) for r in taken.values() if r.get("type") == "assistant"} - {None}
    calls: set[str] = set()
    for record in records:
        if record.get("type") == "assistant" and _message_id(record) in messages:
            taken[id(record)] = record
            content = record["message"].get("content")  # _message_id found it a dict
            if isinstance(content, list):
                calls.update(str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
    for record in records:
        content = record.get("message", {}).get("content") if isinstance(record.get("message"), dict) else None
        if record.get("type") == "user" and isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" and str(b.get("tool_use_id")) in calls
                for b in content):
            taken[id(record)] = record
    order = {id(r): n for n, r in enumerate(records)}
    return sorted(taken.values(), key=lambda r: order[id(r)])


def _tips(records: list[dict[str, Any]], by_uuid: dict[str, dict[str, Any]]) -> list[str]:
    """The user and assistant lines no other one follows, in the order written:
    the ends of the session's branches (a rewind or an edit starts one)."""
    followed: set[str] = set()
    for record in records:
        if record.get("type") not in ("user", "assistant"):
            continue
        at, seen = _up(record), set()
        while isinstance(at, str) and at in by_uuid and at not in seen and at not in followed:
            seen.add(at)
            followed.add(at)
            at = _up(by_uuid[at])
    return [r["uuid"] for r in records if r.get("type") in ("user", "assistant") and isinstance(r.get("uuid"), str)
            and r["uuid"] not in followed]


def _user_steps(record: dict[str, Any], content: Any, steps: list[Step], skipped: dict[str, int]) -> None:
    if record.get("isCompactSummary"):
        steps.append(Step("note", f"Claude Code compacted the conversation here; the model was given this "
                                  f"summary instead of what came before:\n\n{_text_of(content)}"))
        return
    if record.get("isMeta"):
        return
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                steps.append(Step("result", _text_of(block.get("content")), str(block.get("tool_use_id")),
                                  is_error=bool(block.get("is_error"))))
            elif block.get("type") not in _KNOWN_BLOCKS:
                _count(skipped, f"a user block of type {str(block.get('type'))[:40]!r}")
    text = _text_of(content)
    if text and not text.lstrip().startswith(HARNESS_PREFIXES):
        steps.append(Step("user", text))


def _assistant_steps(content: Any, steps: list[Step], skipped: dict[str, int]) -> None:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            steps.append(Step("text", str(block.get("text", ""))))
        elif kind == "thinking":
            steps.append(Step("reasoning", str(block.get("thinking", ""))))
        elif kind == "tool_use":
            steps.append(Step("call", call_id=str(block.get("id")), name=str(block.get("name", "")),
                              arguments=block.get("input")))
        elif kind != "redacted_thinking":
            _count(skipped, f"an assistant block of type {str(kind)[:40]!r}")


def read(path: Path) -> Imported:
    records = jsonl(path)
    skipped: dict[str, int] = {}
    for record in records:
        kind = record.get("type")
        if not isinstance(kind, str) or (kind not in _CONVERSATION and kind not in BOOKKEEPING):
            _count(skipped, f"a line of type {str(kind)[:40]!r}")
    by_uuid = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}
    leaf = _leaf(records, by_uuid)
    chain = [r for r in _chain(records, by_uuid, leaf) if r.get("type") in ("user", "assistant")]
    if not chain:
        raise ImportError_("no user or assistant lines (is this a Claude Code session file?)")
    steps, model = _steps_of(chain, skipped)
    session = str(chain[0].get("sessionId") or path.stem)
    agent = chain[0].get("agentId") if chain[0].get("isSidechain") else None
    source = f"{session}-agent-{agent}" if isinstance(agent, str) else session
    stamps = [r.get("timestamp") for r in records if isinstance(r.get("timestamp"), str)]
    meta: dict[str, Any] = {"id": imported_id("cc", source), "provider": "claude-code", "model": model,
                            "dialect": "anthropic", **_times(stamps)}
    out = conversation_of(steps, meta, "Claude Code")
    covered = {str(r.get("uuid")) for r in chain}
    for tip in _tips(records, by_uuid):
        if tip in covered:
            continue
        side = [r for r in _chain(records, by_uuid, tip) if r.get("type") in ("user", "assistant")]
        covered.update(str(r.get("uuid")) for r in side)
        try:
            branch = conversation_of(_steps_of(side, skipped)[0], {}, "Claude Code")
        except ImportError_:
            continue  # a side line with no user message (a stray, not a branch)
        add_branch(out, branch)
    out.skipped = skipped
    return out


def _steps_of(chain: list[dict[str, Any]], skipped: dict[str, int]) -> tuple[list[Step], str]:
    steps: list[Step] = []
    model = ""
    counted: set[str] = set()
    for record in chain:
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if record["type"] == "user":
            _user_steps(record, content, steps, skipped)
            continue
        model = str(message.get("model") or model)
        _assistant_steps(content, steps, skipped)
        ident = _message_id(record) or str(record.get("uuid"))
        if ident not in counted:  # every line of one message repeats its usage
            counted.add(ident)
            steps.append(Step("usage", usage=usage_of(message.get("usage"))))
    return steps, model


def _times(stamps: list[Any]) -> dict[str, float]:
    out: list[float] = []
    for stamp in stamps:
        try:
            out.append(datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp())
        except ValueError:
            continue
    return {"created": min(out), "updated": max(out)} if out else {}
