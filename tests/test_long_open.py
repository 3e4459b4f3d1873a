"""Opening a long stored conversation reads its tree without text (issue 31 item 1): the session
continues from a path whose history is read page by page on first use, and what it then holds is
what a whole load tells; a short one's history is read at once (its context meter shows on
opening). Real sqlite files written through the real store, the real runtime and demo model."""

from __future__ import annotations

import asyncio
import sqlite3

from app.chat.place import history_read
from app.files.paths import data_dir
from app.runtime.wiring import HISTORY_AT_OPEN, open_runtime
from app.store.tree import history_of, retry_point
from app.tools.approvals import Approvals
from tests.conversations import demo_config
from tests.long_transcript import write_long

#: Three entries an exchange: past the history read at opening.
LONG = HISTORY_AT_OPEN // 3 + 20


def _written(exchanges: int, branch_at: int = 3) -> str:
    home = data_dir()
    home.mkdir(parents=True, exist_ok=True)
    return write_long(home / "callstream.db", exchanges, branch_at=branch_at)


def test_a_long_conversation_opens_shallow_and_reads_its_history_on_first_use() -> None:
    conversation = _written(LONG)
    runtime = open_runtime(config=demo_config())
    try:
        session = runtime.session(conversation)
        assert session.stored is not None and session.stored.shallow
        assert not history_read(session)
        assert session.branched  # the tree's other branch is known without its text
        whole = runtime.store.load(conversation)
        assert whole is not None
        assert session.path_turns == whole.path_turns and session.next_turn == whole.next_turn
        assert session.history == history_of(whole)
        assert history_read(session)
    finally:
        runtime.close()


def test_a_short_conversation_reads_its_history_on_opening() -> None:
    conversation = _written(5)
    runtime = open_runtime(config=demo_config())
    try:
        session = runtime.session(conversation)
        assert history_read(session)
        whole = runtime.store.load(conversation)
        assert whole is not None and session.history == history_of(whole)
    finally:
        runtime.close()


def test_a_failed_last_turn_of_a_long_path_is_retried_from_where_a_whole_load_says() -> None:
    conversation = _written(LONG)
    db = sqlite3.connect(data_dir() / "callstream.db")
    last = db.execute("SELECT MAX(seq) FROM entries WHERE conversation = ? AND branch = ''",
                      (conversation,)).fetchone()[0]
    db.execute("UPDATE entries SET outcome = 'failed', error = 'boom' WHERE conversation = ? AND seq = ?",
               (conversation, last))
    db.commit()
    db.close()
    runtime = open_runtime(config=demo_config())
    try:
        session = runtime.session(conversation)
        assert session.can_retry() and not history_read(session)
        whole = runtime.store.load(conversation)
        assert whole is not None
        failed = session._failed
        assert callable(failed) and failed(session.history) == retry_point(whole, history_of(whole))
    finally:
        runtime.close()


def test_a_message_sent_in_a_long_reopened_conversation_carries_the_whole_path() -> None:
    conversation = _written(LONG)
    runtime = open_runtime(config=demo_config())
    session = runtime.session(conversation, approvals=Approvals.from_config(runtime.config, approve="all"))
    before = None

    async def go() -> None:
        nonlocal before
        try:
            whole = runtime.store.load(conversation)
            assert whole is not None
            before = len(history_of(whole))
            done = await session.send("And one more question?")
            assert done.status == "done"
        finally:
            await session.aclose()

    try:
        asyncio.run(go())
        assert before is not None and len(session.history) > before + 1
        after = runtime.store.load(conversation)
        assert after is not None and after.items[-1].seq > session.stored.items[-1].seq  # type: ignore[union-attr]
        assert history_of(after)[:before] == session.history[:before]
    finally:
        runtime.close()


def test_a_branch_switch_in_a_long_conversation_reads_no_text_but_its_last_entry() -> None:
    conversation = _written(LONG, branch_at=LONG - 3)
    runtime = open_runtime(config=demo_config())
    try:
        session = runtime.session(conversation)
        assert session.stored is not None
        edited = next(e for e in session.stored.tree if e.branch == "b1" and not hasattr(e, "blocks"))
        shown = runtime.show(session, edited.seq)
        assert shown.shallow and not history_read(session)
        assert [e.branch for e in shown.items][-1] == "b1" and session.branch == "b1"
        whole = runtime.store.load(conversation, shown.head)
        assert whole is not None and shown.items[-1] == whole.items[-1]
        assert session.history == history_of(whole)
    finally:
        runtime.close()
