"""Search over every stored conversation (sqlite FTS5), over what may be shown.

What is indexed, per entry: the user's message; each prose block; for each
call, the tool's name and the fields its display allow-lists show
(``visible_fields`` over the final arguments, and over the result where the
tool lists result fields) — the same one definition the cards and the
Markdown export use. Never an unlisted argument value, never a raw argument
buffer, never a result the tool does not list fields of. Reasoning is not
indexed (it is thinking, not the conversation); of a very long prose block,
the first ``PROSE_INDEXED`` characters are.

The index is an external-content FTS5 table over ``search_text`` (one row
per message or block, kept by triggers; ``schema.py`` creates both), so a
block rewritten as it streams replaces its row instead of piling up.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..stream import Block, ToolCallBlock, block_from_record
from ..stream.preview import DisplaySpec, visible_fields

__all__ = ["Display", "Hit", "block_text", "put", "drop", "query", "current", "fts_query", "index_existing"]

#: A tool's allow-lists (arguments, result) by its name; [] for an unknown tool.
Display = Callable[[str], tuple[DisplaySpec, DisplaySpec]]

#: The index entry of the user's message (blocks count from 0).
USER = -1

#: How much of one prose block is indexed: FTS5 holds a whole row's terms in
#: memory while it indexes it (about four bytes per byte of text), so a 32 MiB
#: reply would cost 130 MB to index; its first mebibyte is what search finds.
PROSE_INDEXED = 1 << 20


@dataclass(slots=True)
class Hit:
    conversation: str
    seq: int
    block: int
    snippet: str
    title: str
    updated: float
    model: str

    def to_dict(self) -> dict[str, Any]:
        return {"conversation": self.conversation, "entry": self.seq, "block": self.block,
                "snippet": self.snippet, "title": self.title, "updated": self.updated, "model": self.model}


def block_text(block: Block, display: Display | None) -> str:
    """What of ``block`` is searchable (see the module docstring)."""
    if block.type == "text":
        return _head(block.parts)
    if not isinstance(block, ToolCallBlock):
        return ""
    args_spec, result_spec = display(block.name) if display is not None else ([], [])
    parts = [block.name]
    if block.arguments is not None:
        parts += [f"{label} {value}" for label, value in visible_fields(block.arguments, args_spec)]
    if block.state == "ran" and block.result and result_spec:
        try:
            result = json.loads(block.result)
        except ValueError:
            result = None
        if result is not None:
            parts += [f"{label} {value}" for label, value in visible_fields(result, result_spec)]
    return "\n".join(parts)


def _head(parts: list[str]) -> str:
    """The first ``PROSE_INDEXED`` characters of the prose ``parts`` make, without joining the rest."""
    out: list[str] = []
    size = 0
    for part in parts:
        out.append(part[: PROSE_INDEXED - size])
        size += len(out[-1])
        if size >= PROSE_INDEXED:
            break
    return "".join(out)


def put(db: sqlite3.Connection, conversation: str, seq: int, idx: int, body: str) -> None:
    if not body.strip():
        db.execute("DELETE FROM search_text WHERE conversation = ? AND seq = ? AND idx = ?", (conversation, seq, idx))
        return
    db.execute("INSERT INTO search_text (conversation, seq, idx, body) VALUES (?, ?, ?, ?) "
               "ON CONFLICT (conversation, seq, idx) DO UPDATE SET body = excluded.body WHERE body != excluded.body",
               (conversation, seq, idx, body))


def drop(db: sqlite3.Connection, conversation: str, seq: int | None = None, blocks_only: bool = False) -> None:
    """Forget a conversation's rows (or one entry's, or one entry's blocks)."""
    sql = "DELETE FROM search_text WHERE conversation = ?"
    params: list[object] = [conversation]
    if seq is not None:
        sql += " AND seq = ?"
        params.append(seq)
    if blocks_only:
        sql += " AND idx >= 0"
    db.execute(sql, params)


def fts_query(text: str) -> str:
    """The user's words as an FTS5 query: every word must appear (each one
    quoted, so nothing they type is FTS syntax), the last as a prefix so a
    search box finds as you type."""
    words = re.findall(r"\w+", text)
    if not words:
        return ""
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


def query(db: sqlite3.Connection, text: str, limit: int = 50, conversation: str | None = None,
          display: Display | None = None) -> list[Hit]:
    """The best matches first (bm25), one per matching message or block
    (of ``conversation`` only, when given: ranked within it).

    FTS5 ranks from its index alone; the snippet is cut here from the best
    rows' text (FTS5's ``snippet()`` would be computed for every match of a
    common word before the limit applies, which is where the time went).

    ``display``: the allow-lists the tools have NOW. The index holds what the
    lists said when each call was written; a call found is checked again
    against the current lists (``current``), so a field since removed from a
    ``display`` is neither found nor shown in a snippet."""
    match = fts_query(text)
    if not match:
        return []
    within, params = "", [match]
    if conversation is not None:
        within = " AND rowid IN (SELECT id FROM search_text WHERE conversation = ?)"
        params.append(conversation)
    words = [w.lower() for w in re.findall(r"\w+", text)]
    hits: list[Hit] = []
    offset = 0
    while len(hits) < limit:
        page = max(limit, 50)
        rows = db.execute(
            "SELECT t.id, t.conversation, t.seq, t.idx, t.body, c.title, c.updated, c.model FROM "
            f"(SELECT rowid AS id, rank FROM search_fts WHERE search_fts MATCH ?{within} ORDER BY rank "
            "LIMIT ? OFFSET ?) AS best "
            "JOIN search_text t ON t.id = best.id JOIN conversations c ON c.id = t.conversation ORDER BY best.rank",
            (*params, page, offset)).fetchall()
        bodies = current(db, match, [(r[0], r[1], r[2], r[3], r[4]) for r in rows], display)
        hits += [Hit(r[1], r[2], r[3], snippet(bodies[r[0]], words), r[5], r[6], r[7]) for r in rows
                 if r[0] in bodies]
        if len(rows) < page:
            break
        offset += page
    return hits[:limit]


def current(db: sqlite3.Connection, match: str, rows: list[tuple[int, str, int, int, str]],
            display: Display | None) -> dict[int, str]:
    """Of the found ``rows`` (id, conversation, seq, idx, body), those that
    ``match`` still finds under the allow-lists ``display`` gives now, each
    with its text as those lists show it (id → text). A call's text is
    written again from its stored block and matched by the same FTS5
    tokenizer, in a table of this connection's own (``temp``); prose and
    messages are as indexed. Without ``display`` the index is taken as is."""
    if display is None:
        return {r[0]: r[4] for r in rows}
    out: dict[int, str] = {}
    again: dict[int, str] = {}
    for row_id, conversation, seq, idx, body in rows:
        block = _stored_call(db, conversation, seq, idx) if idx >= 0 else None
        if block is None:
            out[row_id] = body
        else:
            again[row_id] = block_text(block, display)
    if again:
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_now USING fts5(body, "
                   "tokenize='unicode61 remove_diacritics 2')")
        db.execute("DELETE FROM temp.search_now")
        db.executemany("INSERT INTO temp.search_now (rowid, body) VALUES (?, ?)", list(again.items()))
        for (row_id,) in db.execute("SELECT rowid FROM temp.search_now WHERE search_now MATCH ?", (match,)):
            out[row_id] = again[row_id]
        db.execute("DELETE FROM temp.search_now")
    return out


def _stored_call(db: sqlite3.Connection, conversation: str, seq: int, idx: int) -> ToolCallBlock | None:
    """The stored call at (conversation, seq, idx), its buffer put back; None for any other block."""
    row = db.execute("SELECT record FROM blocks WHERE conversation = ? AND seq = ? AND idx = ?",
                     (conversation, seq, idx)).fetchone()
    if row is None:
        return None
    try:
        record = json.loads(row[0])
        if not isinstance(record, dict) or record.get("type") != "tool_call":
            return None
        raw = db.execute("SELECT CAST(raw AS TEXT) FROM call_arguments WHERE conversation = ? AND seq = ? AND "
                         "idx = ?", (conversation, seq, idx)).fetchone()
        if raw is not None:
            record["arguments_raw"] = raw[0]
        block = block_from_record(record)
    except (ValueError, TypeError, RecursionError):
        return ToolCallBlock(None, "")  # a record that cannot be read shows nothing of its fields
    return block if isinstance(block, ToolCallBlock) else None


def snippet(body: str, words: list[str], width: int = 90) -> str:
    """One line around the first word of the query found in ``body``, the
    found words in [brackets] (the last word matches as a prefix, as it does
    in the query)."""
    flat = " ".join(body.split())
    lower = flat.lower()
    found = [(m.start(), m.end()) for m in re.finditer(r"\w+", lower)
             if m.group() in words[:-1] or (words and m.group().startswith(words[-1]))]
    if not found:
        return flat[:width] + ("…" if len(flat) > width else "")
    start = max(0, found[0][0] - width // 3)
    end = min(len(flat), start + width)
    out, at = [], start
    for first, last in found:
        if first < start or last > end:
            continue
        out += [flat[at:first], "[", flat[first:last], "]"]
        at = last
    out.append(flat[at:end])
    return ("…" if start else "") + "".join(out) + ("…" if end < len(flat) else "")


def index_existing(db: sqlite3.Connection, display: Display | None = None) -> None:
    """Index everything already stored (the migration from a store without
    search; with no allow-lists at hand, calls are found by name only)."""
    for row in db.execute("SELECT conversation, seq, text FROM entries WHERE kind IN ('user', 'summary')").fetchall():
        put(db, row[0], row[1], USER, row[2] or "")
    raws = {(r[0], r[1], r[2]): r[3]
            for r in db.execute("SELECT conversation, seq, idx, CAST(raw AS TEXT) FROM call_arguments")}
    for row in db.execute("SELECT conversation, seq, idx, record FROM blocks").fetchall():
        try:
            record = json.loads(row[3])
            raw = raws.get((row[0], row[1], row[2]))
            if raw is not None and isinstance(record, dict):
                record["arguments_raw"] = raw  # the buffer kept apart from the record
            block = block_from_record(record)
        except (ValueError, TypeError, RecursionError):
            continue
        put(db, row[0], row[1], row[2], block_text(block, display))
