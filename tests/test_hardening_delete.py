"""Issue 24, item 16: deleting a conversation another process is in the middle of a turn on.

Before: the delete went through, and the writer's next write brought the conversation back untitled,
with a turn whose parent was gone and turn numbers starting again at 0. Now (``app/store/holds.py``
says why): the delete is refused while another live callstream holds the conversation, naming that
process and what it is doing, and nothing is deleted; a writer whose conversation vanished all the
same (deleted by something that does not look at the holds) stops its turn with a stated failure and
re-creates nothing. Two real processes: ``ask`` in its own process against a provider on 127.0.0.1
that holds its stream open until the test lets it go, and ``callstream`` run again for the delete.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from app.store import Store, StoredTurn, StoredUser
from tests import storefaults, streamgen
from tests.conftest import ROOT
from tests.faultserver import FaultServer, Reply
from tests.test_hostile_input import Saved, run, saved, stated  # noqa: F401  (the fixture)
from tests.waiting import wait_for, wait_until_sync

LOOKING = "Let me look that order up again before I answer. " * 6
REPLY = "The order shipped on Monday and should arrive by Thursday."


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLSTREAM_SLOW_KEY", "slow-test-key-0123456789")


class MidTurn:
    """``ask --conversation ID`` in its own process, its first reply (prose, then a get_order call)
    held half streamed until ``finish``; the second answers. Two turns: a writer that went on after a
    delete would allocate the second one in a conversation that is gone."""

    def __init__(self, saved: Saved, server: FaultServer) -> None:  # noqa: F811
        with (saved.home / "config.toml").open("a") as f:
            f.write(f'\n[providers.slow]\nprovider = "openai-chat"\nmodel = "m"\nbase_url = "{server.url}/v1"\n'
                    'key_env = "CALLSTREAM_SLOW_KEY"\nretries = 0\n')
        self.release = threading.Event()
        first = streamgen.openai_chat([("text", LOOKING),
                                       *streamgen.call_script(0, "c1", "get_order", '{"order_id": "A-1042"}')])
        server.replies.append(Reply(first, chunk=40, pause_at=200, hold=self.release))
        server.replies.append(Reply(streamgen.openai_chat([("text", REPLY)], finish="stop")))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "app", "ask", "and when will it arrive?", "--conversation", saved.id,
             "--provider", "slow", "--json"], cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=os.environ.copy())
        # its request is out: its message and its turn are stored, and it holds the conversation
        wait_until_sync(lambda: server.requests or self.process.poll() is not None, "the ask's request")
        assert self.process.poll() is None, self.process.communicate()

    def finish(self) -> tuple[int, str, str]:
        self.release.set()
        out, err = self.process.communicate(timeout=60)
        return self.process.returncode, out, err


@pytest.fixture
def mid_turn(saved: Saved, server: FaultServer) -> Iterator[MidTurn]:  # noqa: F811
    other = MidTurn(saved, server)
    yield other
    if other.process.poll() is None:
        other.release.set()
        other.process.kill()
        other.process.wait()


def _tree(saved: Saved) -> object:  # noqa: F811
    store = Store(saved.data / "callstream.db")
    try:
        return store.load(saved.id)
    finally:
        store.close()


def _whole_line(saved: Saved, title: str) -> None:  # noqa: F811
    """The conversation as one sound line: its title, every parent an entry of it, turn numbers 0, 1, 2…"""
    tree = _tree(saved)
    assert tree is not None and tree.title == title  # type: ignore[attr-defined]
    seqs = {item.seq for item in tree.tree}  # type: ignore[attr-defined]
    assert all(item.parent is None or item.parent in seqs for item in tree.tree)  # type: ignore[attr-defined]
    assert [i.parent for i in tree.tree][1:] == [i.seq for i in tree.tree][:-1]  # type: ignore[attr-defined]
    turns = [item.turn for item in tree.tree if isinstance(item, StoredTurn)]  # type: ignore[attr-defined]
    assert turns == list(range(len(turns)))


def test_delete_while_another_process_is_mid_turn_is_refused_naming_it(saved: Saved, mid_turn: MidTurn) -> None:  # noqa: F811
    title = _tree(saved).title  # type: ignore[attr-defined]
    pid, host = mid_turn.process.pid, socket.gethostname()
    stated(run("transcripts", "delete", saved.id, "--yes"), 2,
           f"conversation {saved.id} is in use by another callstream",
           f"process {pid} on {host} is streaming turn 2 (since ", "it was not deleted",
           "delete it again once that turn has ended")
    code, out, err = mid_turn.finish()
    assert code == 0 and "Traceback" not in err, err
    turns = json.loads(out)["turns"]
    assert [t["index"] for t in turns] == [2, 3] and REPLY in turns[1]["blocks"][0]["text"]
    assert [b["name"] for b in turns[0]["blocks"] if b["type"] == "tool_call"] == ["get_order"]
    _whole_line(saved, title)  # the ask's turn stored whole, after what was there
    tree = _tree(saved)
    texts = [item.text for item in tree.tree if isinstance(item, StoredUser)]  # type: ignore[attr-defined]
    assert texts == ["Look up order A-1042", "and when will it arrive?"]
    # once the turn is over the same delete goes through, and the conversation stays deleted
    code, out, err = run("transcripts", "delete", saved.id, "--yes")
    assert code == 0 and f"deleted {saved.id}" in out and "Traceback" not in err
    code, out, _ = run("transcripts", "--json")
    assert code == 0 and json.loads(out) == []
    assert storefaults.rows_of(saved.data / "callstream.db", saved.id) == {}


def test_delete_of_several_ids_one_of_them_held_deletes_none(saved: Saved, server: FaultServer) -> None:  # noqa: F811
    code, out, _ = run("ask", "Show me order A-1043", "--json")
    assert code == 0
    other = json.loads(out)["conversation"]
    before = run("export", other)[1]
    mid = MidTurn(saved, server)
    try:
        stated(run("transcripts", "delete", other, saved.id, "--yes"), 2,
               f"conversation {saved.id} is in use by another callstream", f"process {mid.process.pid}",
               "(nothing was deleted)")
        assert run("export", other)[1] == before  # the free one was not deleted either
    finally:
        code, _, err = mid.finish()
    assert code == 0 and "Traceback" not in err


def test_a_hold_left_by_a_dead_process_does_not_stop_a_delete(saved: Saved) -> None:  # noqa: F811
    storefaults.leave_hold(saved.data / "callstream.db", saved.id, storefaults.dead_owner(), "streaming turn 1")
    code, out, err = run("transcripts", "delete", saved.id, "--yes")
    assert code == 0 and f"deleted {saved.id}" in out and "Traceback" not in err
    assert storefaults.rows_of(saved.data / "callstream.db", saved.id) == {}


def test_a_writer_whose_conversation_was_deleted_anyway_stops_and_recreates_nothing(
        saved: Saved, mid_turn: MidTurn) -> None:  # noqa: F811
    code, out, _ = run("ask", "Show me order A-1043", "--json")
    assert code == 0
    other = json.loads(out)["conversation"]
    before = run("export", other)[1]
    # deleted by something that does not look at the holds (an older callstream, by hand)
    storefaults.delete_behind_its_back(saved.data / "callstream.db", saved.id)
    code, out, err = mid_turn.finish()
    assert "Traceback" not in out + err
    assert code == 2, (code, out, err)
    assert f"conversation {saved.id} was deleted by another process while this one was using it" in err
    assert "this turn was stopped and nothing more of it was saved (the conversation was not re-created)" in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
    # nothing came back: no untitled conversation, no entry with a parent that is gone, no turn 0 again
    assert storefaults.rows_of(saved.data / "callstream.db", saved.id) == {}
    code, out, _ = run("transcripts", "--json")
    assert code == 0 and [row["id"] for row in json.loads(out)] == [other]
    assert run("export", other)[1] == before  # nothing else lost
    stated(run("ask", "again", "--conversation", saved.id), 2, f"no stored conversation {saved.id!r}")


async def test_the_tui_list_refuses_to_delete_a_conversation_another_process_is_mid_turn_on(
        saved: Saved, mid_turn: MidTurn) -> None:  # noqa: F811
    import asyncio

    from app.tui.transcripts_screen import ConfirmDelete, TranscriptsScreen
    from tests.test_transcripts_screen import labels, open_list
    from tests.test_tui import SIZE, demo_app

    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_list(app, pilot)  # the only row: the conversation the ask is streaming into
        await pilot.press("delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDelete))
        await pilot.press("y")
        await wait_for(pilot, lambda: any("in use by another callstream" in str(n.message)
                                          for n in app._notifications), "the refusal")
        message = next(str(n.message) for n in app._notifications if "in use" in str(n.message))
        assert f"process {mid_turn.process.pid} on {socket.gethostname()} is streaming turn 2" in message
        assert "it was not deleted" in message
        assert isinstance(app.screen, TranscriptsScreen) and len(labels(app)) == 1  # still listed
        assert app.is_running
    code, _, err = await asyncio.to_thread(mid_turn.finish)
    assert code == 0 and "Traceback" not in err
    assert _tree(saved) is not None
