"""What the store remembers of its writes goes once a turn is whole (issue 31, item 4: a live sitting's
memory does not grow with the exchanges typed). The store keeps, per block being written, how much of
its prose is in ``prose_parts`` and which call buffer was last written, so a growing block costs what it
grew by; kept after the turn ended, those dicts grew by every block a sitting wrote. Real sqlite files."""

from __future__ import annotations

from pathlib import Path

from app.store import Store, StoredTurn
from app.stream import TextBlock, ToolCallBlock

CONV = "forgotten00conv"


def _call() -> ToolCallBlock:
    return ToolCallBlock("call_1", "search_orders", fragments=['{"customer": "Ada"}'], size=19, ended=True,
                         final=True, arguments={"customer": "Ada"}, state="ran", result='{"count": 1}')


def _exchange(store: Store, parent: int | None, n: int) -> tuple[int, list[TextBlock | ToolCallBlock]]:
    """One exchange written as a live session writes it: the prose while it grows, the call as it forms,
    then the turn's end (every block whole). Its turn's entry, and its blocks."""
    user = store.add_user(CONV, f"Question {n}", parent, "")
    turn, seq = store.allocate_turn(CONV, user, "")
    store.start_turn(CONV, turn, 1, user, "")
    prose = TextBlock(f"Looking up order {n}")
    store.put_block(CONV, seq, 0, prose, growing=True)
    prose.append(" and its customer.")
    store.put_block(CONV, seq, 0, prose, growing=True)
    call = _call()
    store.put_block(CONV, seq, 1, call)
    store.finish_turn(CONV, seq, StoredTurn(seq, turn, [], outcome="complete", stop_reason="stop"), 1, None,
                      [prose, call])
    return seq, [prose, call]


def test_a_finished_turns_writes_are_not_remembered(tmp_path: Path) -> None:
    """After many exchanges the store remembers nothing of the finished turns' writes."""
    store = Store(tmp_path / "transcripts.db")
    try:
        store.create(CONV, "demo", "demo-1", "openai-chat")
        parent: int | None = None
        for n in range(30):
            parent, _ = _exchange(store, parent, n)
        assert store._prose == {}
        assert store._written == {}
    finally:
        store.close()


def test_a_block_being_written_is_still_remembered(tmp_path: Path) -> None:
    """Only finished turns are forgotten: the turn still streaming keeps what it wrote (its prose grows by
    what it grew, not written whole again)."""
    store = Store(tmp_path / "transcripts.db")
    try:
        store.create(CONV, "demo", "demo-1", "openai-chat")
        last, _ = _exchange(store, None, 1)
        turn, seq = store.allocate_turn(CONV, last, "")
        store.start_turn(CONV, turn, 1, last, "")
        store.put_block(CONV, seq, 0, TextBlock("Still writing"), growing=True)
        store.put_block(CONV, seq, 1, _call())
        assert set(store._prose) == {(CONV, seq, 0)}
        assert set(store._written) == {(CONV, seq, 1)}
    finally:
        store.close()


def test_a_finished_turn_written_again_reads_back_whole(tmp_path: Path) -> None:
    """A block of a finished turn written again (nothing in a sitting does it, but nothing forbids it) is
    written whole once more: it reads back as it was, its prose not doubled."""
    store = Store(tmp_path / "transcripts.db")
    try:
        store.create(CONV, "demo", "demo-1", "openai-chat")
        seq, blocks = _exchange(store, None, 1)
        for index, block in enumerate(blocks):
            store.put_block(CONV, seq, index, block)
        (turn,) = store.page(CONV, [seq])
        assert isinstance(turn, StoredTurn)
        prose, call = turn.blocks
        assert isinstance(prose, TextBlock) and prose.text == "Looking up order 1 and its customer."
        assert isinstance(call, ToolCallBlock) and call.arguments == {"customer": "Ada"}
    finally:
        store.close()
