"""simonw/llm's ``logs.db`` (``llm logs path``).

Written from the documented schema (research/field.md §4.1; llm's
docs/logging.md): ``conversations(id, name, model)``; ``responses(id, model,
prompt, system, response, conversation_id, datetime_utc, …)``, one per model
response in order; ``tool_calls(response_id, name, arguments, tool_call_id)``
— the calls a response made; ``tool_results(response_id, name, output,
tool_call_id, exception)`` — the results, stored with the *next* response
(the one whose prompt carried them back). A result pairs with its call by
``tool_call_id`` (llm's docs: call ids are not unique across turns, so the
pairing is within the conversation, in order). The content-addressed message
store of llm 0.32 (``messages``, ``parts``, ``threads``) holds the same
conversations; this reads the response tables every version has written.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..native import ImportError_
from . import Imported, Step, conversation_of

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


def read(path: Path) -> list[Imported]:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ImportError_(f"cannot open it as sqlite: {exc}") from None
    db.row_factory = sqlite3.Row
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"conversations", "responses"} <= tables:
            raise ImportError_("no conversations/responses tables (is this llm's logs.db?)")
        has_tools = {"tool_calls", "tool_results"} <= tables
        out: list[Imported] = []
        for conv in db.execute("SELECT * FROM conversations ORDER BY rowid").fetchall():
            responses = db.execute("SELECT * FROM responses WHERE conversation_id = ? ORDER BY datetime_utc, rowid",
                                   (conv["id"],)).fetchall()
            if not responses:
                continue
            steps: list[Step] = []
            for response in responses:
                if has_tools:
                    for result in db.execute("SELECT * FROM tool_results WHERE response_id = ? ORDER BY id",
                                             (response["id"],)):
                        steps.append(Step("result", str(result["output"] or result["exception"] or ""),
                                          str(result["tool_call_id"] or result["name"]),
                                          is_error=bool(result["exception"])))
                if response["prompt"]:
                    steps.append(Step("user", str(response["prompt"])))
                if response["response"]:
                    steps.append(Step("text", str(response["response"])))
                if has_tools:
                    for call in db.execute("SELECT * FROM tool_calls WHERE response_id = ? ORDER BY id",
                                           (response["id"],)):
                        try:
                            arguments = json.loads(call["arguments"] or "{}")
                        except ValueError:
                            arguments = call["arguments"]
                        steps.append(Step("call", call_id=str(call["tool_call_id"] or call["name"]),
                                          name=str(call["name"] or ""), arguments=arguments))
            stamps = [s for s in (_stamp(r["datetime_utc"]) for r in responses) if s is not None]
            meta: dict[str, Any] = {"id": f"llm-{conv['id']}", "provider": "llm",
                                    "model": str(conv["model"] or responses[-1]["model"] or ""), "dialect": "",
                                    "title": str(conv["name"] or "")[:80] or None}
            if meta["title"] is None:
                del meta["title"]
            if stamps:
                meta.update(created=min(stamps), updated=max(stamps))
            out.append(conversation_of(steps, meta, "llm"))
    except sqlite3.Error as exc:
        raise ImportError_(f"cannot read it: {exc}") from None
    finally:
        db.close()
    if not out:
        raise ImportError_("it holds no conversation with a response")
    return out
