"""The store's reads: the conversations listed or searched, which one an id
names, and one conversation loaded as its tree (``StoredTree``): whole, each
block put back together from its record, its call buffer and its prose (an
export, which writes every branch); without text (what a view needs: the
screen reads pages); or without text but for one path read whole
(``load_path``: what a compaction or answering a reopened approval needs)."""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from ..files.dbfile import DataFileError
from ..rules.ids import check_id
from ..stream.limits import loads
from . import search
from .attachfiles import AttachmentFiles
from .naming import UnresolvedConversation, pick
from .pages import Pages, entries_of, stored_usage
from .search import Display, Hit
from .tree import StoredEntry, StoredTree, StoredTurn, StoredUser

__all__ = ["Reads", "stored_usage", "LoopedTree"]


class LoopedTree(DataFileError):
    """A stored conversation whose entries lead back to themselves through their parents (a damaged
    file: callstream never writes one): it is not opened, and the message says so."""


class Reads(Pages):
    """The read half of ``Store`` (the paged reads a long conversation's view uses: ``Pages``)."""

    _db: sqlite3.Connection
    attachments: AttachmentFiles
    #: The tools' allow-lists now (None: the index is taken as written).
    display: Display | None

    def attachment_digests(self, conversation: str | None = None) -> builtins.set[str]:
        """The attachment files a conversation names (every conversation's, without one)."""
        sql = "SELECT attachments FROM entries WHERE kind = 'user' AND attachments IS NOT NULL"
        rows = self._db.execute(sql + " AND conversation = ?", (conversation,)) if conversation else \
            self._db.execute(sql)
        digests: builtins.set[str] = builtins.set()
        for (refs,) in rows:
            found = loads(refs)
            for ref in found if isinstance(found, builtins.list) else []:
                if isinstance(ref, dict) and isinstance(ref.get("digest"), str):
                    digests.add(ref["digest"])
        return digests

    def exists(self, conversation: str) -> bool:
        """Whether ``conversation`` (a whole id) is stored."""
        return self._db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation,)).fetchone() is not None

    def list(self, text: str | None = None) -> list[dict[str, Any]]:
        """Conversations, newest first: id, title, created, updated, model,
        turns; with ``text``, those whose title or searchable text has it."""
        sql = ("SELECT c.id, c.title, c.created, c.updated, c.provider, c.model, c.dialect, c.forked_from, "
               "(SELECT COUNT(*) FROM entries e WHERE e.conversation = c.id AND e.kind = 'turn') AS turns "
               "FROM conversations c")
        params: list[Any] = []
        if text:
            like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            sql += " WHERE c.title LIKE ? ESCAPE '\\'"
            params = [like]
            match = search.fts_query(text)
            if match and self.display is not None:  # found as the tools' allow-lists show it now
                rows = self._db.execute("SELECT t.id, t.conversation, t.seq, t.idx, t.body FROM search_fts JOIN "
                                        "search_text t ON t.id = search_fts.rowid WHERE search_fts MATCH ?",
                                        (match,)).fetchall()
                found = search.current(self._db, match, [tuple(r) for r in rows], self.display)
                sql += " OR c.id IN (SELECT value FROM json_each(?))"
                params.append(json.dumps(sorted({r[1] for r in rows if r[0] in found})))
            elif match:
                sql += (" OR c.id IN (SELECT t.conversation FROM search_fts JOIN search_text t "
                        "ON t.id = search_fts.rowid WHERE search_fts MATCH ?)")
                params.append(match)
        sql += " ORDER BY c.updated DESC"
        return [dict(row) for row in self._db.execute(sql, params)]

    def turn_branches(self) -> dict[tuple[str, int], str]:
        """(conversation, turn index) → the branch the turn is on."""
        rows = self._db.execute("SELECT conversation, turn, branch FROM entries WHERE kind = 'turn'").fetchall()
        return {(r[0], r[1]): r[2] for r in rows}

    def search(self, text: str, limit: int = 50, conversation: str | None = None) -> builtins.list[Hit]:
        """The best matches of ``text`` (in ``conversation`` only, a whole id, when given)."""
        return search.query(self._db, text, limit, conversation, self.display)

    def resolve(self, text: str, also: Iterable[str] = ()) -> str:
        """The whole id of the conversation ``text`` names: its id, or the
        start of exactly one stored id (or of one of ``also``: ids known
        elsewhere, such as the ledger's). The one rule every command that
        takes a conversation follows (``resolve_among`` without a store).
        ``InvalidId`` for text outside the id alphabet (checked first),
        ``ConversationNotFound`` when nothing starts so,
        ``AmbiguousConversation`` (listing them) when several do."""
        check_id(text)
        if self._db.execute("SELECT 1 FROM conversations WHERE id = ?", (text,)).fetchone():
            return text
        rows = self._db.execute("SELECT id, title, updated FROM conversations WHERE substr(id, 1, ?) = ? "
                                "ORDER BY updated DESC", (len(text), text)).fetchall()
        return pick(text, [(row["id"], row["title"], row["updated"]) for row in rows], also)

    def load(self, conversation: str, head: int | None = None, whole: bool = True) -> StoredTree | None:
        """A stored conversation (its id, or a unique prefix of it: ``resolve``),
        shown at ``head`` (default: where it was last shown); None when it does
        not name exactly one; ``InvalidId`` for an id outside the alphabet.

        ``whole=False``: its tree without the text (``StoredTree.shallow``): every entry of every
        branch with its place, turn, usage and model, but no text and no block, save the last entry of the
        path shown, read whole (how it ended, its calls awaiting approval). Opening a conversation of
        thousands of exchanges reads that much and no more; the screen reads pages
        (``Pages.page``), and the model's history is read entry by entry when first needed
        (``Pages.entries``)."""
        try:
            conversation = self.resolve(conversation)
        except UnresolvedConversation:
            return None
        row = self._db.execute("SELECT * FROM conversations WHERE id = ?", (conversation,)).fetchone()
        if row is None:
            return None
        result = StoredTree(row["id"], row["title"], row["created"], row["updated"], row["provider"],
                              row["model"], row["dialect"], forked_from=row["forked_from"],
                              forked_at=row["forked_at"], forked_len=row["forked_len"] or 0, shallow=not whole)
        if whole:
            items = entries_of(self._db, result.id, self._db.execute(
                "SELECT * FROM entries WHERE conversation = ? ORDER BY seq", (result.id,)).fetchall(), None,
                self._attachments)
        else:
            shared: dict[object, Any] = {}
            items = [_shallow(r, shared) for r in self._db.execute(
                "SELECT seq, kind, parent, branch, turn, usage, model FROM entries WHERE conversation = ? ORDER BY seq",
                (result.id,))]
        for item in items:
            if isinstance(item, StoredTurn):
                result.next_turn = max(result.next_turn, item.turn + 1)
            result.tree.append(item)
        _refuse_loop(result, getattr(self, "path", "the database"))
        family: dict[int | None, list[StoredEntry]] = {}
        for item in result.tree:
            family.setdefault(item.parent, []).append(item)
        for members in family.values():
            for position, item in enumerate(members, 1):
                place = (position, len(members))
                item.siblings = _ONLY if place == _ONLY else place
        seqs = {item.seq for item in result.tree}
        wanted = head if head is not None else row["head"]
        if wanted not in seqs:
            wanted = max(seqs) if seqs else None
        result.head = wanted
        result.items = result.path_to(wanted)
        if not whole and result.items:
            self.fill_last(result, result.items)
        return result

    def load_path(self, conversation: str, head: int | None = None) -> StoredTree | None:
        """A stored conversation as ``load(whole=False)`` reads it, its path shown (``items``) read whole,
        a page at a time (``Pages.entries``), each entry keeping its place among its siblings; every other
        branch without its text. What needs the blocks of one path (a compaction, answering a last turn's
        approvals) reads that path and no other branch. The tree stays ``shallow`` (the other branches
        have no text): its path's history is ``history_of(stored.items)``."""
        stored = self.load(conversation, head, whole=False)
        if stored is None or not stored.items:
            return stored
        shallow = stored.items
        places = {item.seq: item.siblings for item in shallow}
        whole = builtins.list(self.entries(stored.id, [item.seq for item in shallow]))
        if len(whole) != len(shallow):  # deleted meanwhile (another process)
            return None
        at = {item.seq: i for i, item in enumerate(stored.tree)}
        for item in whole:
            item.siblings = places[item.seq]
            stored.tree[at[item.seq]] = item
        stored.items = whole
        return stored

    def fill_last(self, stored: StoredTree, path: builtins.list[StoredEntry]) -> None:
        """The last entry of ``path`` (a path of the shallow ``stored``) read whole, in the path and the tree."""
        shallow = path[-1]
        (whole,) = self.page(stored.id, [shallow.seq])
        whole.siblings = shallow.siblings
        path[-1] = whole
        tree = stored.tree
        at = next(i for i in range(len(tree) - 1, -1, -1) if tree[i].seq == shallow.seq)
        tree[at] = whole


#: The place of an entry that has no sibling, the most common by far: one tuple for all of them.
_ONLY = (1, 1)


def _shallow(row: sqlite3.Row, shared: dict[object, Any]) -> StoredEntry:
    """An entry's place in the tree, its turn, usage and model (what the conversation cost); no text, no
    block (``load(whole=False)``). A tree of ten thousand exchanges holds thirty thousand of these, so
    equal values read are one object (``shared``, for one load: an entry's parent is the entry before
    it, a branch and a model repeat, a frozen ``Usage`` read from the same text is the same): a third
    less than the tree held (15.4 MB → 10.3 MB at ten thousand exchanges)."""
    seq = shared.setdefault(row["seq"], row["seq"])
    parent = row["parent"]
    parent = shared.setdefault(parent, parent)
    branch = shared.setdefault(row["branch"], row["branch"])
    if row["kind"] == "turn":
        text, model = row["usage"], row["model"]
        usage = shared.get(("usage", text)) if text is not None else None
        if usage is None and text is not None:
            usage = shared[("usage", text)] = stored_usage(text)
        return StoredTurn(seq, row["turn"], [], parent=parent, branch=branch, usage=usage,
                          model=shared.setdefault(model, model))
    return StoredUser(seq, "", parent=parent, branch=branch, kind=shared.setdefault(row["kind"], row["kind"]))


def _refuse_loop(tree: StoredTree, where: object) -> None:
    """A ``LoopedTree`` when following parents from some entry comes back to it (each entry is
    walked once: linear in the entries)."""
    parents = {item.seq: item.parent for item in tree.tree}
    settled: set[int] = set()  # entries known to reach the first entry (or a missing one)
    for start in parents:
        walked: list[int] = []
        on_walk: set[int] = set()
        seq: int | None = start
        while seq is not None and seq in parents and seq not in settled:
            if seq in on_walk:
                raise LoopedTree(f"{where}: conversation {tree.id} is damaged: entry {seq} follows itself through "
                                 "its parents (a loop callstream never writes): it was not opened; delete it "
                                 f"(callstream transcripts delete {tree.id[:12]}) or restore the file from a backup")
            walked.append(seq)
            on_walk.add(seq)
            seq = parents[seq]
        settled.update(walked)
