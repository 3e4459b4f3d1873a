"""A fork and a resync read what they need, never every block of every branch
(issue 31, paged reads), and store and show what they did when they read the
whole tree: a fork through ``fork_at`` (the tree without text, the path read
a page at a time) writes the same rows as ``fork`` given the whole tree (the
way it was done before), attachments, branches, usage and the fork's origin
included; a resync hands the entries another process added whole, and the
same history and retry point as a whole read, read when first used; a path
read whole for a compaction or a reopened approval (``load_path``) is the
whole read's path, and no other branch's text is read. Real sqlite files, the
real runtime and the demo model."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.chat.transcribe import TranscriptWriter
from app.runtime.wiring import open_runtime
from app.store import ConversationNotFound, Store, StoredTurn, StoredUser, history_of, retry_point
from app.stream import TextBlock, ToolCallBlock
from app.stream.attachments import Attachment
from app.stream.usage import Usage
from tests.long_transcript import write_long
from tests.test_tree import _plain, config, run

#: Columns that tell when a row was written, or which conversation holds it: a fork made later differs there.
_WHEN = {"started", "finished", "created", "updated", "id", "conversation"}


def rows_of(path: Path, conversation: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the store holds for ``conversation``, table by table, without the columns that say when
    it was written or under which id (two forks of one path differ only there)."""
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        out: dict[str, list[tuple[Any, ...]]] = {}
        for table, key in (("conversations", "id"), ("entries", "conversation"), ("blocks", "conversation"),
                           ("call_arguments", "conversation"), ("prose_parts", "conversation"),
                           ("search_text", "conversation")):
            rows = db.execute(f"SELECT * FROM {table} WHERE {key} = ? ORDER BY 1, 2, 3", (conversation,)).fetchall()
            out[table] = sorted(tuple(r[k] for k in r.keys() if k not in _WHEN) for r in rows)
        return out
    finally:
        db.close()


def fork_both_ways(path: Path, conversation: str, at: int) -> tuple[str, str]:
    """The fork ``fork_at`` makes now, and the one ``fork`` makes from the whole tree (as ``fork_at`` did
    before it read pages): their ids."""
    store = Store(path)
    try:
        source, _, paged = store.fork_at(conversation, at)
        assert source.shallow  # read without its text: the path was read a page at a time
        whole = store.load(conversation)
        assert whole is not None and not whole.shallow
        return paged, store.fork(whole, at, "wholeread0000fork")
    finally:
        store.close()


def test_a_fork_at_the_first_exchange_of_a_thousand_writes_the_rows_a_whole_read_wrote(tmp_path: Path) -> None:
    path = tmp_path / "transcripts.db"
    conversation = write_long(path, 1000, branch_at=500)
    paged, whole = fork_both_ways(path, conversation, 2)
    mine, before = rows_of(path, paged), rows_of(path, whole)
    assert mine == before
    assert len(mine["entries"]) == 3 and len(mine["call_arguments"]) == 2 and mine["search_text"]


def test_a_fork_at_the_last_entry_of_a_thousand_copies_its_whole_path_page_by_page_as_before(tmp_path: Path) -> None:
    """3,000 entries: many pages of ``Pages.entries`` (256 an entry read), copied in order."""
    path = tmp_path / "transcripts.db"
    conversation = write_long(path, 1000, branch_at=500)
    paged, whole = fork_both_ways(path, conversation, 2999)
    mine = rows_of(path, paged)
    assert mine == rows_of(path, whole)
    assert len(mine["entries"]) == 3000
    db = sqlite3.connect(path)
    try:  # one line of conversation: every copy on the main branch, each after the one before
        rows = db.execute("SELECT seq, parent, branch FROM entries WHERE conversation = ? ORDER BY seq",
                          (paged,)).fetchall()
    finally:
        db.close()
    assert rows == [(seq, seq - 1 if seq else None, "") for seq in range(3000)]


def test_a_fork_on_a_branch_copies_that_branch_s_path_not_the_main_one(tmp_path: Path) -> None:
    path = tmp_path / "transcripts.db"
    conversation = write_long(path, 10, branch_at=4)
    edited = 3 * 10  # the edited question's entry (``write_long``), and its reply's two turns after it
    paged, whole = fork_both_ways(path, conversation, edited + 2)
    assert rows_of(path, paged) == rows_of(path, whole)
    store = Store(path)
    try:
        fork = store.load(paged)
        assert fork is not None
        texts = [e.text for e in fork.items if isinstance(e, StoredUser)]
        assert texts[-1].startswith("Edited question 4") and len(texts) == 5
    finally:
        store.close()


def _attachment(data: bytes) -> Attachment:
    return Attachment("shot.png", "image/png", len(data), hashlib.sha256(data).hexdigest(), data, 4, 2)


def _turn_with_usage(store: Store, conversation: str, parent: int, branch: str, text: str) -> int:
    turn, seq = store.allocate_turn(conversation, parent, branch)
    call = ToolCallBlock("call_1", "search_orders", fragments=['{"customer": "Ada"}'], size=19, ended=True,
                         final=True, arguments={"customer": "Ada"}, state="ran", result='{"count": 1}')
    store.finish_turn(conversation, seq, StoredTurn(seq, turn, [], outcome="complete", stop_reason="stop"),
                      1, None, [TextBlock(text), call], Usage(input=120, output=30), "demo-1")
    return seq


def test_a_fork_keeps_attachments_branches_usage_and_its_origin(tmp_path: Path) -> None:
    path = tmp_path / "transcripts.db"
    store = Store(path)
    try:
        store.create("attached000conv", "demo", "demo-1", "openai-chat", "With a picture")
        first = store.add_user("attached000conv", "What is in this picture?", None, "",
                               [_attachment(b"\x89PNG one")])
        reply = _turn_with_usage(store, "attached000conv", first, "", "A cat.")
        store.add_user("attached000conv", "And this one?", reply, "", [_attachment(b"\x89PNG two")])
        edit = store.add_user("attached000conv", "And this other one?", reply, "b1", [_attachment(b"\x89PNG three")])
        last = _turn_with_usage(store, "attached000conv", edit, "b1", "A dog.")
    finally:
        store.close()
    paged, whole = fork_both_ways(path, "attached000conv", last)
    assert rows_of(path, paged) == rows_of(path, whole)
    store = Store(path)
    try:
        fork = store.load(paged)
        assert fork is not None and fork.forked_from == "attached000conv" and fork.forked_at == last
        assert fork.forked_len == 4 and [e.seq for e in fork.tree] == [0, 1, 2, 3] and fork.head == 3
        users = [e for e in fork.items if isinstance(e, StoredUser)]
        assert [(a.name, a.data) for u in users for a in u.attachments] == [("shot.png", b"\x89PNG one"),
                                                                            ("shot.png", b"\x89PNG three")]
        turns = [e for e in fork.items if isinstance(e, StoredTurn)]
        assert [t.usage for t in turns] == [Usage(input=120, output=30)] * 2 and {t.model for t in turns} == {"demo-1"}
        assert [[b.type for b in t.blocks] for t in turns] == [["text", "tool_call"]] * 2
    finally:
        store.close()


def test_a_turn_killed_mid_stream_is_forked_as_a_whole_read_forked_it(tmp_path: Path) -> None:
    """A turn still marked ``streaming`` (its process died) is read back as interrupted (``mark_killed``),
    and copied so, on either path."""
    path = tmp_path / "transcripts.db"
    store = Store(path)
    try:
        store.create("killed0000conv", "demo", "demo-1", "openai-chat")
        user = store.add_user("killed0000conv", "Look up Ada", None, "")
        _, seq = store.allocate_turn("killed0000conv", user, "")
        store.put_block("killed0000conv", seq, 0, TextBlock("Looking"), growing=True)
    finally:
        store.close()
    paged, whole = fork_both_ways(path, "killed0000conv", seq)
    assert rows_of(path, paged) == rows_of(path, whole)
    store = Store(path)
    try:
        fork = store.load(paged)
        assert fork is not None and isinstance(fork.items[-1], StoredTurn) and fork.items[-1].cause == "killed"
    finally:
        store.close()


def test_a_conversation_deleted_before_its_path_is_copied_leaves_no_fork(tmp_path: Path) -> None:
    """Read without its text, then deleted (by another process) before the fork copies its path: the fork
    says so, and nothing of it is stored."""
    path = tmp_path / "transcripts.db"
    conversation = write_long(path, 10)
    store, other = Store(path), Store(path)
    try:
        source = store.load(conversation, whole=False)
        assert source is not None
        other.delete(conversation)
        with pytest.raises(ConversationNotFound, match="deleted while it was being forked"):
            store.fork(source, 29, "orphan00000fork")
        assert not store.exists("orphan00000fork")
    finally:
        store.close()
        other.close()


def test_a_resync_reads_the_added_entries_whole_and_the_history_when_first_used(home: Path) -> None:
    """Another process answers on in this session's conversation, then edits a question on a branch of its
    own: the resync hands the entries added on the path read whole (with their place among their
    siblings), and a history and retry point equal to a whole read's, read only when first used."""
    runtime, elsewhere = open_runtime(config=config()), open_runtime(config=config())
    session = runtime.session()
    run(session.send("Show me order A-1042"))
    other = elsewhere.session(session.conversation)
    run(other.send("And order A-1043?"))
    first_turn = next(e for e in elsewhere.store.load(session.conversation).items  # type: ignore[union-attr]
                      if isinstance(e, StoredTurn))
    elsewhere.store.add_user(session.conversation, "And order A-2000?", first_turn.seq, "b1")
    writer = next(listener for listener in session.listeners if isinstance(listener, TranscriptWriter))
    known = set(writer._known)
    moved = writer.resync()
    assert moved is not None and moved.stored.shallow and callable(moved.history)
    whole = runtime.store.load(session.conversation)
    assert whole is not None
    added = [e for e in whole.items if e.seq not in known]
    assert [_plain(e) for e in moved.added] == [_plain(e) for e in added]
    assert [e.siblings for e in moved.added] == [e.siblings for e in added] and added[-1].siblings == (2, 2)
    assert set(writer._known) == {e.seq for e in whole.tree}
    history = moved.history()
    assert history == history_of(whole)
    failed = moved.failed(history) if callable(moved.failed) else moved.failed
    assert failed == retry_point(whole, history)
    assert writer.resync() is None  # nothing added since
    run(session.aclose())
    run(other.aclose())
    runtime.close()
    elsewhere.close()


@pytest.mark.parametrize("head", [None, 32], ids=["main branch", "edited branch"])
def test_a_path_read_whole_is_a_whole_read_s_path_and_no_other_branch_is_read(tmp_path: Path,
                                                                             head: int | None) -> None:
    path = tmp_path / "transcripts.db"
    conversation = write_long(path, 10, branch_at=4)
    store = Store(path)
    try:
        mine, whole = store.load_path(conversation, head), store.load(conversation, head)
        assert mine is not None and whole is not None and mine.shallow
        assert [_plain(e) for e in mine.items] == [_plain(e) for e in whole.items]
        assert [e.siblings for e in mine.items] == [e.siblings for e in whole.items]
        assert [e.seq for e in mine.tree] == [e.seq for e in whole.tree]
        in_tree = {e.seq: e for e in mine.tree}
        assert all(in_tree[e.seq] is e for e in mine.items)  # the tree holds the path's whole entries too
        on_path = {e.seq for e in mine.items}
        elsewhere = [e for e in mine.tree if e.seq not in on_path]
        assert elsewhere and all(not getattr(e, "blocks", None) and not getattr(e, "text", "") for e in elsewhere)
        assert history_of(mine.items) == history_of(whole)
    finally:
        store.close()
