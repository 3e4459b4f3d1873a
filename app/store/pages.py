"""Paged reads: what a view of a long conversation needs, and no more.

Showing one screen of a conversation of thousands of exchanges must not read
every block of every branch. ``Pages.outline`` reads the path shown (from the
first entry to a head) as small rows: each entry's number, kind, parent,
branch and place among its siblings, no text and no block. ``Pages.page``
reads whole entries (their blocks put back from their records, call buffers
and prose) for a page of entry numbers, in one bounded query per table;
``entries`` a long path page by page (the model's history is told from it). Both
build an entry the one way ``Reads.load`` does (``entries_of``), so a page
shows what a whole load shows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from ..stream.attachments import Attachment
from ..stream.blocks import Block, ReasoningBlock, TextBlock, block_from_record
from ..stream.limits import loads
from ..stream.usage import Usage
from .attachfiles import AttachmentFiles
from .tree import StoredEntry, StoredTurn, StoredUser, mark_killed

__all__ = ["Pages", "OutlineEntry", "outline_of", "entries_of", "stored_usage", "PAGE_LIMIT"]

#: The most entries one ``page`` call reads (a view asks for a few screens; a bigger ask is a bug).
PAGE_LIMIT = 2000


class OutlineEntry(NamedTuple):
    """One entry of the path shown, without its text or blocks (a tuple: an outline holds one for
    every entry of a path of thousands, made several times faster than a frozen dataclass)."""

    seq: int
    #: "user" or "turn"
    kind: str
    parent: int | None
    branch: str
    #: Its place among the entries that follow the same one (1-based, of how many).
    siblings: tuple[int, int]


def outline_of(items: Sequence[StoredEntry]) -> list[OutlineEntry]:
    """The outline of a path already read (``StoredTree.items``, shallow or whole): what ``outline``
    reads, without reading it again."""
    return [OutlineEntry(e.seq, e.kind if isinstance(e, StoredUser) else "turn", e.parent, e.branch, e.siblings)
            for e in items]


class Pages:
    """The paged half of ``Reads``."""

    _db: sqlite3.Connection
    attachments: AttachmentFiles

    def _attachments(self, refs: str | None) -> list[Attachment]:
        """A user entry's attachments, their bytes read back from the data dir."""
        if not refs:
            return []
        found = loads(refs)
        return [self.attachments.load(ref) for ref in found if isinstance(ref, dict)] if isinstance(found, list) else []

    def outline(self, conversation: str, head: int | None = None) -> list[OutlineEntry]:
        """The path from the first entry to ``head`` (default: where the
        conversation was last shown; an entry not stored: the last one), as
        outline entries; [] for a conversation not stored. Reads one small row
        an entry (the structure of every branch, to count versions), never a block."""
        if head is None:
            row = self._db.execute("SELECT head FROM conversations WHERE id = ?", (conversation,)).fetchone()
            if row is None:
                return []
            head = row[0]
        rows = self._db.execute("SELECT seq, kind, parent, branch FROM entries WHERE conversation = ? ORDER BY seq",
                                (conversation,)).fetchall()
        by_seq = {r[0]: r for r in rows}
        if head not in by_seq:
            head = rows[-1][0] if rows else None
        family: dict[int | None, list[int]] = {}
        for r in rows:
            family.setdefault(r[2], []).append(r[0])
        path: list[OutlineEntry] = []
        seq = head
        while seq is not None and seq in by_seq and len(path) <= len(rows):  # a damaged loop ends the walk
            seq_, kind, parent, branch = by_seq[seq]
            members = family[parent]
            path.append(OutlineEntry(seq_, kind, parent, branch, (members.index(seq_) + 1, len(members))))
            seq = parent
        return path[::-1]

    def outline_after(self, conversation: str, head: int | None, known: Sequence[OutlineEntry]) -> \
            list[OutlineEntry] | None:
        """``outline(conversation, head)`` when that path is ``known`` (an outline read earlier)
        followed by every entry stored since (a number above its last): ``known`` plus those, read from
        the rows after it alone, so a view that only wants what a session added does not read the
        structure of thousands of exchanges again. None otherwise (the path does not continue ``known``,
        an entry was added off it, which changes a count of versions, ``known`` is empty): the caller
        reads it whole."""
        if not known or head is None:
            return None
        last = known[-1].seq
        rows = self._db.execute("SELECT seq, kind, parent, branch FROM entries WHERE conversation = ? AND seq > ? "
                                "ORDER BY seq", (conversation, last)).fetchall()
        if not rows:
            return list(known) if head == last else None
        by_seq = {r[0]: r for r in rows}
        added: list[tuple[int, str, int | None, str]] = []
        seq: int | None = head
        while seq is not None and seq in by_seq and len(added) <= len(rows):  # a damaged loop ends the walk
            added.append(by_seq[seq])
            seq = by_seq[seq][2]
        if seq != last or len(added) != len(rows):  # another path, or entries added off it (their siblings count)
            return None
        added.reverse()
        parents = json.dumps(sorted({r[2] for r in added}))
        family: dict[int | None, list[int]] = {}
        # sorted here, not by the query: asked to ORDER BY seq, SQLite walks the conversation's every
        # entry in key order (0.3 ms at 450 exchanges, each exchange of a live sitting) instead of
        # finding these few through entries_parent
        for parent, child in sorted(self._db.execute("SELECT parent, seq FROM entries WHERE conversation = ? AND "
                                                     "parent IN (SELECT value FROM json_each(?))",
                                                     (conversation, parents)), key=lambda row: row[1]):
            family.setdefault(parent, []).append(child)
        return [*known, *(OutlineEntry(s, kind, parent, branch, (family[parent].index(s) + 1, len(family[parent])))
                          for s, kind, parent, branch in added)]

    def page(self, conversation: str, seqs: Sequence[int]) -> list[StoredEntry]:
        """The whole entries numbered ``seqs`` (at most ``PAGE_LIMIT``), in
        entry order; an entry not stored is left out. Siblings are not counted
        here (the outline has them)."""
        if len(seqs) > PAGE_LIMIT:
            raise ValueError(f"a page of {len(seqs)} entries (at most {PAGE_LIMIT})")
        wanted = json.dumps(sorted(set(seqs)))
        rows = self._db.execute("SELECT * FROM entries WHERE conversation = ? AND seq IN (SELECT value FROM "
                                "json_each(?)) ORDER BY seq", (conversation, wanted)).fetchall()
        return entries_of(self._db, conversation, rows, wanted, self._attachments)

    def entries(self, conversation: str, seqs: Sequence[int], chunk: int = 256) -> Iterator[StoredEntry]:
        """The whole entries numbered ``seqs``, in that order, read ``chunk`` at a time: a long path's
        history is told from them (``history_of``) without holding every block of it at once."""
        for start in range(0, len(seqs), chunk):
            wanted = seqs[start:start + chunk]
            found = {entry.seq: entry for entry in self.page(conversation, wanted)}
            yield from (found[seq] for seq in wanted if seq in found)


def entries_of(db: sqlite3.Connection, conversation: str, rows: list[sqlite3.Row],
               wanted: str | None, attachments: Callable[[str | None], list[Attachment]]) -> list[StoredEntry]:
    """Stored entries from their ``entries`` rows, with their blocks: those of
    the entries in ``wanted`` (a JSON list of entry numbers), or of the whole
    conversation when it is None. The one way an entry is read back."""
    where = "conversation = ?" + ("" if wanted is None else " AND seq IN (SELECT value FROM json_each(?))")
    params: tuple[str, ...] = (conversation,) if wanted is None else (conversation, wanted)
    blocks: dict[int, list[tuple[int, str]]] = {}
    for b in db.execute(f"SELECT seq, idx, record FROM blocks WHERE {where}", params):
        blocks.setdefault(b["seq"], []).append((b["idx"], b["record"]))
    raws = {(a["seq"], a["idx"]): a["raw"] for a in
            db.execute(f"SELECT seq, idx, CAST(raw AS TEXT) AS raw FROM call_arguments WHERE {where}", params)}
    prose: dict[tuple[int, int], list[str]] = {}
    for p in db.execute(f"SELECT seq, idx, text FROM prose_parts WHERE {where} ORDER BY seq, idx, part", params):
        prose.setdefault((p["seq"], p["idx"]), []).append(p["text"])
    items: list[StoredEntry] = []
    for entry in rows:
        if entry["kind"] in ("user", "summary"):
            items.append(StoredUser(entry["seq"], entry["text"] or "", entry["exchange"], entry["exchange_message"],
                                    entry["parent"], entry["branch"], kind=entry["kind"],
                                    attachments=attachments(entry["attachments"])))
            continue
        records = [_stored_block(rec, raws.get((entry["seq"], idx)), prose.get((entry["seq"], idx)))
                   for idx, rec in sorted(blocks.get(entry["seq"], []))]
        item = StoredTurn(entry["seq"], entry["turn"], records, entry["attempts"], entry["outcome"],
                          entry["stop_reason"], entry["error"], entry["cause"], entry["note"],
                          loads(entry["failures"] or "[]"), parent=entry["parent"], branch=entry["branch"],
                          usage=stored_usage(entry["usage"]), model=entry["model"], detail=entry["detail"])
        if entry["state"] == "streaming":
            mark_killed(item)
        items.append(item)
    return items


def stored_usage(column: str | None) -> Usage | None:
    """A turn's stored usage; one that cannot be read is no usage (the turn still opens)."""
    if not column:
        return None
    try:
        return Usage.from_dict(loads(column))
    except ValueError:
        return None


def _stored_block(record: str, raw: str | None = None, prose: list[str] | None = None) -> Block:
    """A stored block, its call buffer put back from ``call_arguments`` and
    its prose from ``prose_parts`` (older records hold them inline); one that
    cannot be read shows as a line saying so (the rest of the turn still opens)."""
    try:
        data = loads(record)
        if raw is not None and isinstance(data, dict) and data.get("type") == "tool_call":
            data["arguments_raw"] = raw
        block = block_from_record(data)
        if prose and isinstance(block, TextBlock | ReasoningBlock):
            block.parts[:] = [block.text + "".join(prose)]
        return block
    except ValueError as exc:
        return TextBlock(f"[this block could not be read back: {exc}]")
