"""simonw/llm's ``logs.db`` (``llm logs path``).

Read as llm 0.26, 0.30, 0.32 and 0.36 write it (tests/data/imports/llm/,
made by the real program). Up to 0.31 (llm's docs/logging.md):
``conversations(id, name, model)``; ``responses(id, model,
prompt, system, response, conversation_id, datetime_utc, …)``, one per model
response in order; ``tool_calls(response_id, name, arguments, tool_call_id)``
— the calls a response made; ``tool_results(response_id, name, output,
tool_call_id, exception)`` — the results, stored with the *next* response
(the one whose prompt carried them back). A result pairs with its call by
``tool_call_id`` (llm's docs: call ids are not unique across turns, so the
pairing is within the conversation, in order); 0.26's ``tool_results`` has
no ``exception`` column. From 0.32 the conversations are ``threads`` over a
content-addressed tree of ``messages`` and their ``parts`` (text,
tool_call, tool_result with its ``exception``), with ``turns`` holding each
response's token counts, and ``conversations``/``responses`` stay empty.
Both are read; a part type this does not know is left out and counted.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ...stream.usage import Usage, count
from ..native import ImportError_
from . import Imported, Step, conversation_of, imported_id

__all__ = ["read"]


def _stamp(text: Any) -> float | None:
    import datetime

    try:
        value = datetime.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value.timestamp()


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in db.execute(f"PRAGMA table_info({table})")}  # noqa: S608 - a table name we chose


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _tokens(row: sqlite3.Row, keys: set[str]) -> Usage | None:
    """A response's (or turn's) ``input_tokens`` / ``output_tokens``: absent where llm recorded none."""
    found = Usage(count(row["input_tokens"]) if "input_tokens" in keys else None,
                  count(row["output_tokens"]) if "output_tokens" in keys else None)
    return found if found.known else None


def _old(db: sqlite3.Connection, tables: set[str], skip: set[str]) -> list[Imported]:
    """llm up to 0.31: ``conversations`` / ``responses`` / ``tool_calls`` / ``tool_results``."""
    has_tools = {"tool_calls", "tool_results"} <= tables
    result_columns = _columns(db, "tool_results") if has_tools else set()
    out: list[Imported] = []
    for conv in db.execute("SELECT * FROM conversations ORDER BY rowid").fetchall():
        if conv["id"] in skip:
            continue
        responses = db.execute("SELECT * FROM responses WHERE conversation_id = ? ORDER BY datetime_utc, rowid",
                               (conv["id"],)).fetchall()
        if not responses:
            continue
        keys = set(responses[0].keys())
        steps: list[Step] = []
        for response in responses:
            if has_tools:
                for result in db.execute("SELECT * FROM tool_results WHERE response_id = ? ORDER BY id",
                                         (response["id"],)):
                    failure = result["exception"] if "exception" in result_columns else None  # not before 0.27
                    steps.append(Step("result", str(result["output"] or failure or ""),
                                      str(result["tool_call_id"] or result["name"]), is_error=bool(failure)))
            if response["prompt"]:
                steps.append(Step("user", str(response["prompt"])))
            if response["response"]:
                steps.append(Step("text", str(response["response"])))
            if has_tools:
                for call in db.execute("SELECT * FROM tool_calls WHERE response_id = ? ORDER BY id",
                                       (response["id"],)):
                    arguments = _json(call["arguments"] or "{}")
                    steps.append(Step("call", call_id=str(call["tool_call_id"] or call["name"]),
                                      name=str(call["name"] or ""),
                                      arguments=arguments if arguments is not None else call["arguments"]))
            steps.append(Step("usage", usage=_tokens(response, keys)))
        stamps = [s for s in (_stamp(r["datetime_utc"]) for r in responses) if s is not None]
        meta: dict[str, Any] = {"id": imported_id("llm", str(conv["id"])), "provider": "llm",
                                "model": str(conv["model"] or responses[-1]["model"] or ""), "dialect": ""}
        out.append(_finish(steps, meta, conv["name"], stamps, {}))
    return out


def _finish(steps: list[Step], meta: dict[str, Any], name: Any, stamps: list[float],
            skipped: dict[str, int]) -> Imported:
    if name:
        meta["title"] = str(name)[:80]
    if stamps:
        meta.update(created=min(stamps), updated=max(stamps))
    imported = conversation_of(steps, meta, "llm")
    imported.skipped = skipped
    return imported


def _part_steps(role: str, part: sqlite3.Row, steps: list[Step], skipped: dict[str, int]) -> None:
    kind, payload = part["type"], _json(part["payload"])
    payload = payload if isinstance(payload, dict) else {}
    if kind == "text" and part["text"]:
        steps.append(Step("user" if role == "user" else "text", str(part["text"])))
    elif kind in ("reasoning", "thinking") and (part["text"] or payload.get("text")):
        steps.append(Step("reasoning", str(part["text"] or payload.get("text"))))
    elif kind == "tool_call":
        arguments = payload.get("arguments")
        steps.append(Step("call", call_id=str(payload.get("tool_call_id") or part["tool_name"]),
                          name=str(payload.get("name") or part["tool_name"] or ""),
                          arguments=arguments if arguments is not None else {}))
    elif kind == "tool_result":
        failure = payload.get("exception")
        output = payload.get("output")
        steps.append(Step("result", str(output if output is not None else failure or ""),
                          str(payload.get("tool_call_id") or part["tool_name"]), is_error=bool(failure)))
    elif kind != "text":
        what = f"a part of type {str(kind)[:40]!r}"
        skipped[what] = skipped.get(what, 0) + 1


def _threads(db: sqlite3.Connection) -> list[Imported]:
    """llm 0.32 and later: ``threads`` (``tip_message_hash``), ``messages`` (a
    tree by ``parent_hash``), their ``parts`` and the ``turns`` that made them
    (with ``input_tokens`` / ``output_tokens``, one per model response)."""
    turn_keys = _columns(db, "turns")
    out: list[Imported] = []
    for thread in db.execute("SELECT * FROM threads ORDER BY datetime_utc, rowid").fetchall():
        path: list[sqlite3.Row] = []
        seen: set[str] = set()
        at = thread["tip_message_hash"]
        while isinstance(at, str) and at not in seen:
            seen.add(at)
            message = db.execute("SELECT * FROM messages WHERE hash = ?", (at,)).fetchone()
            if message is None:
                break
            path.append(message)
            at = message["parent_hash"]
        path.reverse()
        if not any(m["role"] == "assistant" for m in path):
            continue
        turns = db.execute("SELECT * FROM turns WHERE thread_id = ? ORDER BY datetime_utc, rowid",
                           (thread["id"],)).fetchall()
        usage = {t["tip_message_hash"]: _tokens(t, turn_keys) for t in turns}
        steps: list[Step] = []
        skipped: dict[str, int] = {}
        for message in path:
            for part in db.execute("SELECT * FROM parts WHERE message_hash = ? ORDER BY position, id",
                                   (message["hash"],)):
                _part_steps(str(message["role"]), part, steps, skipped)
            if message["role"] == "assistant":
                steps.append(Step("usage", usage=usage.get(message["hash"])))
        stamps = [s for s in (_stamp(t["datetime_utc"]) for t in turns) if s is not None]
        model = next((str(t["model"]) for t in reversed(turns) if t["model"]), "")
        meta: dict[str, Any] = {"id": imported_id("llm", str(thread["id"])), "provider": "llm", "model": model,
                                "dialect": ""}
        out.append(_finish(steps, meta, thread["name"], stamps, skipped))
    return out


def read(path: Path) -> list[Imported]:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ImportError_(f"cannot open it as sqlite: {exc}") from None
    db.row_factory = sqlite3.Row
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        new = {"threads", "messages", "parts", "turns"} <= tables
        if not new and not {"conversations", "responses"} <= tables:
            raise ImportError_("no threads/messages or conversations/responses tables (is this llm's logs.db?)")
        out = _threads(db) if new else []
        if {"conversations", "responses"} <= tables:
            thread_ids = {str(r[0]) for r in db.execute("SELECT id FROM threads")} if new else set()
            out += _old(db, tables, thread_ids)
    except sqlite3.Error as exc:
        raise ImportError_(f"cannot read it: {exc}") from None
    finally:
        db.close()
    if not out:
        raise ImportError_("it holds no conversation with a response")
    return out
