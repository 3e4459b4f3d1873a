"""The store's paged reads (issue 31 item 1): the outline of the path shown
and the entries of a page, read from a real sqlite file, equal what a whole
load gives — without reading a block for the outline."""

from __future__ import annotations

import gc
import sqlite3
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.store.pages import PAGE_LIMIT, outline_of
from app.store.transcripts import Store
from app.store.tree import StoredUser, history_of
from app.tui.paging import EXCHANGES_PER_PAGE, SeqIndex, paginate
from tests.long_transcript import write_long


@pytest.fixture
def store(tmp_path: Path) -> Store:
    path = tmp_path / "callstream.db"
    write_long(path, 20, branch_at=7)
    return Store(path)


def test_the_outline_is_the_path_a_whole_load_shows_with_its_versions(store: Store) -> None:
    whole = store.load("long0000conversation")
    assert whole is not None
    outline = store.outline(whole.id)
    assert [e.seq for e in outline] == [e.seq for e in whole.items]
    assert [e.siblings for e in outline] == [e.siblings for e in whole.items]
    assert [e.kind for e in outline] == ["user" if not hasattr(e, "blocks") else "turn" for e in whole.items]
    edited = next(e for e in whole.tree if e.branch == "b1" and not hasattr(e, "blocks"))
    on_branch = store.outline(whole.id, whole.leaf_under(edited.seq))
    assert [e.seq for e in on_branch] == [e.seq for e in whole.path_to(whole.leaf_under(edited.seq))]
    assert on_branch[-3].siblings == (2, 2)


def test_a_page_holds_the_entries_a_whole_load_holds(store: Store) -> None:
    whole = store.load("long0000conversation")
    assert whole is not None
    seqs = [e.seq for e in whole.items[9:21]]
    page = store.page(whole.id, seqs)
    assert [e.seq for e in page] == seqs
    for read, loaded in zip(page, whole.items[9:21], strict=True):
        assert read.seq == loaded.seq and getattr(read, "blocks", None) == getattr(loaded, "blocks", None)
        assert getattr(read, "text", None) == getattr(loaded, "text", None)


def test_the_outline_reads_no_block(store: Store) -> None:
    tables: list[str] = []
    store._db.set_trace_callback(tables.append)  # type: ignore[attr-defined]
    store.outline("long0000conversation")
    store._db.set_trace_callback(None)  # type: ignore[attr-defined]
    assert tables and not any(word in sql for sql in tables for word in ("blocks", "prose_parts", "call_arguments"))


def test_a_page_bigger_than_the_limit_is_refused_with_a_sentence(store: Store) -> None:
    with pytest.raises(ValueError, match="at most"):
        store.page("long0000conversation", list(range(PAGE_LIMIT + 1)))


def test_an_unknown_conversation_has_an_empty_outline_and_pages(store: Store) -> None:
    assert store.outline("nothing-here") == []
    assert store.page("nothing-here", [0, 1, 2]) == []


def test_a_damaged_loop_ends_the_outline_instead_of_spinning(tmp_path: Path) -> None:
    path = tmp_path / "callstream.db"
    write_long(path, 3)
    db = sqlite3.connect(path)
    db.execute("UPDATE entries SET parent = 8 WHERE seq = 0")  # the first entry now follows the last
    db.commit()
    db.close()
    store = Store(path)
    outline = store.outline("long0000conversation")
    assert len(outline) <= 10


def test_pages_are_whole_exchanges(store: Store) -> None:
    outline = store.outline("long0000conversation")
    pages = paginate(outline)
    assert pages[0][0] == 0 and pages[-1][1] == len(outline)
    assert all(outline[start].kind == "user" for start, _ in pages)
    assert all(sum(e.kind == "user" for e in outline[s:e]) <= EXCHANGES_PER_PAGE for s, e in pages)


def test_a_shallow_load_has_the_tree_and_no_text_but_the_last_entry(store: Store) -> None:
    whole = store.load("long0000conversation")
    tables: list[str] = []
    store._db.set_trace_callback(tables.append)  # type: ignore[attr-defined]
    shallow = store.load("long0000conversation", whole=False)
    store._db.set_trace_callback(None)  # type: ignore[attr-defined]
    assert whole is not None and shallow is not None and shallow.shallow
    assert [(e.seq, e.parent, e.branch, e.siblings) for e in shallow.tree] == \
        [(e.seq, e.parent, e.branch, e.siblings) for e in whole.tree]
    assert [e.seq for e in shallow.items] == [e.seq for e in whole.items] and shallow.head == whole.head
    assert shallow.next_turn == whole.next_turn
    assert [(getattr(e, "usage", None), getattr(e, "model", None)) for e in shallow.tree] == \
        [(getattr(e, "usage", None), getattr(e, "model", None)) for e in whole.tree]
    assert shallow.items[-1] == whole.items[-1]  # read whole: how the path ends
    assert all(getattr(e, "blocks", []) == [] and getattr(e, "text", "") == "" for e in shallow.items[:-1])
    # the blocks read are the last entry's alone (one page of one entry)
    block_reads = [sql for sql in tables if "FROM blocks" in sql]
    assert len(block_reads) == 1 and "json_each" in block_reads[0]
    with pytest.raises(ValueError, match="without its text"):
        history_of(shallow)


def test_a_shallow_tree_holds_each_value_read_once(tmp_path: Path) -> None:
    """A shallow tree holds an entry of every branch (thirty thousand at ten thousand exchanges, for as
    long as the conversation is open): equal values read are one object (an entry's parent is the number
    of the entry before it; a branch, a model and a usage repeat). 490 bytes an entry when each held its
    own; the bound leaves room for another Python's object sizes."""
    path = tmp_path / "callstream.db"
    write_long(path, 300)
    store = Store(path)
    store.load("long0000conversation", whole=False)  # the statements compiled and cached
    gc.collect()
    tracemalloc.start()
    try:
        shallow = store.load("long0000conversation", whole=False)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert shallow is not None and len(shallow.tree) == 900
    assert held / len(shallow.tree) < 420, held / len(shallow.tree)


def test_a_path_read_entry_by_entry_tells_the_history_a_whole_load_tells(store: Store) -> None:
    whole = store.load("long0000conversation")
    assert whole is not None
    seqs = [e.seq for e in whole.items]
    read = list(store.entries(whole.id, seqs, chunk=7))
    for entry in read:  # (siblings are the outline's to count, not a page's)
        entry.siblings = whole.items[read.index(entry)].siblings
    assert read == whole.items
    assert history_of(store.entries(whole.id, seqs, chunk=5)) == history_of(whole)


def test_the_outline_of_a_loaded_path_is_the_outline_read(store: Store) -> None:
    for whole in (True, False):
        loaded = store.load("long0000conversation", whole=whole)
        assert loaded is not None
        assert outline_of(loaded.items) == store.outline(loaded.id)
        edited = next(e for e in loaded.tree if e.branch == "b1")
        other = store.load(loaded.id, loaded.leaf_under(edited.seq), whole=whole)
        assert other is not None and outline_of(other.items) == store.outline(other.id, other.head)


def test_the_outline_after_entries_added_on_the_path_is_the_outline_read_whole(tmp_path: Path) -> None:
    """``outline_after`` (End in a long sitting): the rows after the known outline continue it → the
    whole outline, read from those rows alone; nothing added → the same; an entry added off the path
    (a new version of an earlier message, which changes a count of versions) → None, read it whole."""
    path = tmp_path / "callstream.db"
    conversation = write_long(path, 6)
    store = Store(path)
    known = store.outline(conversation)
    assert store.outline_after(conversation, known[-1].seq, known) == known
    last = known[-1].seq
    with store.transaction():
        store.insert_entry(conversation, last + 1, StoredUser(last + 1, "one more", exchange="done"), last, "")
        store.insert_entry(conversation, last + 2, StoredUser(last + 2, "and another", exchange="done"), last + 1, "")
    assert store.outline_after(conversation, last + 2, known) == store.outline(conversation, last + 2)
    assert store.outline_after(conversation, last + 1, known) is None  # last + 2 is off that path
    grown = store.outline(conversation, last + 2)
    with store.transaction():  # a second version of the message just added
        store.insert_entry(conversation, last + 3, StoredUser(last + 3, "edited", exchange="done"), last + 1, "b9")
    assert store.outline_after(conversation, last + 2, grown) is None
    assert store.outline(conversation, last + 2)[-1].siblings == (1, 2) != grown[-1].siblings
    assert store.outline_after(conversation, last + 3, known) is None
    assert store.outline_after(conversation, last + 2, known) is None
    assert store.outline_after(conversation, None, known) is None and store.outline_after(conversation, 0, []) is None


@given(st.lists(st.integers(0, 60), unique=True), st.booleans())
def test_an_entrys_index_is_found_in_a_rising_path_and_in_a_damaged_one(seqs: list[int], rising: bool) -> None:
    """``SeqIndex`` (the window's entry number → outline index) searches a path whose numbers rise, and
    holds a dict for one that does not (a damaged file): both answer as the dict of every entry did."""
    from app.store.pages import OutlineEntry

    if rising:
        seqs = sorted(seqs)
    outline = [OutlineEntry(seq, "user", None, "", (1, 1)) for seq in seqs]
    index = SeqIndex(outline)
    expected = {seq: at for at, seq in enumerate(seqs)}
    assert all(index.get(seq) == expected.get(seq) for seq in range(-1, 62))


@given(st.lists(st.sampled_from(["user", "turn", "turn", "note"]), max_size=60), st.integers(0, 60))
def test_pages_cut_on_from_a_shorter_outline_are_the_pages_cut_whole(kinds: list[str], known: int) -> None:
    """``paginate_on`` (a live sitting's outline after each exchange, ``Window.adopt``) cuts only from
    the last page of the outline it continues; the pages are those ``paginate`` cuts from the whole."""
    from app.store.pages import OutlineEntry
    from app.tui.paging import paginate_on

    outline = [OutlineEntry(seq, kind, seq - 1 if seq else None, "", (1, 1)) for seq, kind in enumerate(kinds)]
    known = min(known, len(outline))
    assert paginate_on(outline, paginate(outline[:known])) == paginate(outline)


@given(st.lists(st.integers(0, 60), unique=True), st.integers(0, 60), st.booleans())
def test_an_index_built_on_from_a_shorter_outline_answers_as_the_dict(seqs: list[int], known: int,
                                                                    rising: bool) -> None:
    """``SeqIndex(outline, known)`` looks only at what ``outline`` adds to ``known``'s: a path whose numbers
    stop rising there (the smallest number just after ``known``'s rising ones) gets the dict, and both
    answer as the dict of every entry did."""
    from app.store.pages import OutlineEntry

    seqs = sorted(seqs)
    known = min(known, len(seqs))
    if not rising and 0 < known < len(seqs):
        seqs = [*seqs[1:known + 1], seqs[0], *seqs[known + 1:]]
    outline = [OutlineEntry(seq, "user", None, "", (1, 1)) for seq in seqs]
    index = SeqIndex(outline, SeqIndex(outline[:known]))
    expected = {seq: at for at, seq in enumerate(seqs)}
    assert all(index.get(seq) == expected.get(seq) for seq in range(-1, 62))
