"""The transcript store: every turn saved in the block shape it was shown in.

One sqlite file in the data dir (the ledger's), three tables: conversations;
entries (each a node of the conversation's tree: ``tree.py``); blocks (each
block's full record) with a call's buffer in ``call_arguments`` and prose in
``prose_parts`` — plus the search index (``search.py``), all versioned by
``schema.py``. ``Store`` is the writes (``writes.py``) and the paged reads
(``reads.py``) over one connection, and a fork, which needs both. The
transcript writer (``app/chat/transcribe.py``) writes a live conversation
through it as it happens, so a process killed mid-turn leaves every
completed turn whole and the turn in progress marked ``streaming``, which a
reopen shows as interrupted (``tree.mark_killed``).

Nothing here stores a key: requests are not stored at all, only what the
conversation says.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from ..files.dbfile import connect
from .attachfiles import AttachmentFiles
from .naming import ConversationNotFound
from .reads import Reads
from .schema import migrate
from .search import Display
from .tree import StoredTree
from .writes import Writes

__all__ = ["Store"]


class Store(Writes, Reads):
    def __init__(self, path: Path, display: Display | None = None) -> None:
        self.path = path
        self.display = display
        #: The attachments' bytes, by content hash, beside the transcript file.
        self.attachments = AttachmentFiles(path.parent / "attachments")
        self._db = connect(path)
        try:
            self._db.execute("PRAGMA foreign_keys=ON")
            migrate(self._db, str(path))
        except BaseException:
            self._db.close()
            raise
        self._written = {}
        self._prose = {}

    def close(self) -> None:
        self._db.close()

    def fork(self, source: StoredTree, at: int, new_id: str) -> str:
        """A new conversation holding the path of ``source`` up to entry
        ``at`` (copies; the source is untouched), remembered as forked from it.
        A tree read without its text (``load(whole=False)``) has its path read
        whole a page at a time (``Pages.entries``), each page copied before the
        next is read: a fork holds one page of blocks, never the conversation's,
        and reads no other branch."""
        path = source.path_to(at)
        if not path:
            raise ValueError(f"conversation {source.id} has no entry {at}")
        entries = self.entries(source.id, [item.seq for item in path]) if source.shallow else iter(path)
        with self.transaction():
            self.create(new_id, source.provider, source.model, source.dialect, source.title,
                        forked_from=source.id, forked_at=at)
            parent: int | None = None
            for seq, item in enumerate(entries):
                self.insert_entry(new_id, seq, item, parent, "")
                parent = seq
            if parent != len(path) - 1:  # deleted since it was read (another process): nothing is kept
                raise ConversationNotFound(f"conversation {source.id} was deleted while it was being forked")
            self._db.execute("UPDATE conversations SET head = ?, forked_len = ? WHERE id = ?",
                             (len(path) - 1, len(path), new_id))
        return new_id

    def fork_at(self, conversation: str, at: int | None = None) -> tuple[StoredTree, int, str]:
        """Fork ``conversation`` (an id or a unique prefix) at entry ``at``
        (default: where it was last shown): (the source, the entry, the new
        id). Raises LookupError with a sentence when either is not there."""
        # an unknown or ambiguous id: an UnresolvedConversation; the tree without its text (the path is
        # read whole a page at a time as it is copied: ``fork``)
        source = self.load(self.resolve(conversation), whole=False)
        if source is None:
            raise ConversationNotFound(f"no stored conversation {conversation!r} (callstream transcripts lists them)")
        at = source.head if at is None else at
        if at is None or source.entry(at) is None:
            last = max((e.seq for e in source.tree), default=None)
            raise LookupError(f"conversation {source.id} has no entry {at}"
                              + (f" (its entries are 0 to {last})" if last is not None else " (it is empty)"))
        return source, at, self.fork(source, at, uuid.uuid4().hex)

