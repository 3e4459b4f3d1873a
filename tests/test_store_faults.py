"""The store under bad conditions (issue 13, Build 7): a damaged database,
one from a newer callstream, a data dir that is read-only, missing or cannot
be made, a full disk. Each is one line naming the file and what to do, exit
2, no traceback — and what was saved before is still there afterwards.

Read-only and full-disk need a filesystem that really is read-only or full:
a small tmpfs in a private mount namespace (``unshare``); those tests skip
where mount namespaces are not allowed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app.store.schema import SCHEMA_VERSION
from tests import storefaults
from tests.conftest import ROOT
from tests.test_hostile_input import Saved, run, saved, stated  # noqa: F401  (the fixture)


def test_a_damaged_database_is_named_and_left_alone(saved: Saved) -> None:  # noqa: F811
    database = saved.data / "callstream.db"
    for suffix in ("-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    good = database.read_bytes()
    database.write_bytes(b"this is not sqlite at all" * 100)
    err = stated(run("transcripts"), 2, f"{database} is damaged", "move it aside")
    assert "Traceback" not in err
    stated(run("ask", "hi"), 2, f"{database} is damaged")
    assert database.read_bytes() == b"this is not sqlite at all" * 100  # nothing rewritten
    database.write_bytes(good)
    saved.intact(alone=True)


def test_a_database_from_a_newer_callstream_is_refused_untouched(saved: Saved) -> None:  # noqa: F811
    database = saved.data / "callstream.db"
    with sqlite3.connect(database) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    stated(run("transcripts"), 2, f"{database} was written by a newer callstream",
           f"schema version {SCHEMA_VERSION + 1}", "upgrade callstream")
    stated(run("ask", "hi"), 2, "was written by a newer callstream")
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    saved.intact(alone=True)


def test_the_schema_version_is_written(saved: Saved) -> None:  # noqa: F811
    with sqlite3.connect(saved.data / "callstream.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_rows_are_inserted_by_column_name(home: Path) -> None:
    data = home / "home"
    data.mkdir()
    with sqlite3.connect(data / "callstream.db") as db:  # the same columns, in another order
        db.execute("CREATE TABLE conversations (dialect TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, "
                   "updated REAL NOT NULL, created REAL NOT NULL, title TEXT NOT NULL, id TEXT PRIMARY KEY)")
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    code, out, err = run("ask", "Look up order A-1042", "--json")
    assert code == 0, err
    code, listing, _ = run("transcripts", "--json")
    row = json.loads(listing)[0]
    assert row["id"] == json.loads(out)["conversation"] and row["title"] == "Look up order A-1042"
    assert row["dialect"] == "openai-chat" and row["provider"] == "demo"


def test_a_missing_data_dir_is_made_user_only(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    code, _, err = run("ask", "Look up order A-1042")
    assert code == 0, err
    assert (home / "home").stat().st_mode & 0o777 == 0o700


def test_an_existing_data_dir_keeps_the_permissions_its_owner_gave_it(home: Path) -> None:
    (home / "home").mkdir(mode=0o750)
    os.chmod(home / "home", 0o750)
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    code, _, err = run("ask", "Look up order A-1042")
    assert code == 0, err
    assert (home / "home").stat().st_mode & 0o777 == 0o750


def test_a_data_dir_that_cannot_be_made(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = home / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CALLSTREAM_HOME", str(blocker / "home"))
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    stated(run("ask", "hi"), 2, f"cannot create the data directory {blocker / 'home'}", "CALLSTREAM_HOME")
    stated(run("transcripts"), 2, "cannot create the data directory")


# -- a filesystem that really is read-only, or full ---------------------------------------

def _namespace(script: str, home: Path) -> subprocess.CompletedProcess[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip(reason="unshare is not installed: no private mount namespace for a read-only or full disk")
    command = [unshare, "-m"] if os.geteuid() == 0 else [unshare, "-rm"]
    probe = subprocess.run([*command, "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {home}"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        pytest.skip(reason=f"cannot mount a tmpfs in a private mount namespace here: {probe.stderr.strip()}")
    env = {**os.environ, "CALLSTREAM_HOME": str(home / "home"), "CALLSTREAM_CONFIG": str(home / "config.toml"),
           "PY": sys.executable}
    return subprocess.run([*command, "sh", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


_FIRST = '''set -e
mount -t tmpfs -o size=4m tmpfs "$CALLSTREAM_HOME"
"$PY" -m app ask "Look up order A-1042" --json > "$OUT/first.json"
ID=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["conversation"])' "$OUT/first.json")
"$PY" -m app export "$ID" > "$OUT/before.json"
set +e
'''
_AFTER = '''
"$PY" -m app ask "and once more" > "$OUT/second.out" 2> "$OUT/second.err"; echo $? > "$OUT/second.rc"
"$PY" -m app transcripts > "$OUT/list.out" 2> "$OUT/list.err"; echo $? > "$OUT/list.rc"
'''


def _check(out: Path, result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert (out / "first.json").exists(), result.stderr
    rc, err = int((out / "second.rc").read_text()), (out / "second.err").read_text()
    assert rc == 2, (rc, err, (out / "second.out").read_text())
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert any(word in err for word in words), err
    assert (out / "after.json").read_text() == (out / "before.json").read_text()


def test_a_read_only_data_dir(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    out = home / "out"
    out.mkdir()
    (home / "home").mkdir()
    result = _namespace(f'OUT={out}\n' + _FIRST + 'mount -o remount,ro "$CALLSTREAM_HOME"\n' + _AFTER
                        + 'mount -o remount,rw "$CALLSTREAM_HOME"\n"$PY" -m app export "$ID" > "$OUT/after.json"\n',
                        home)
    _check(out, result, "read-only", "Read-only", "cannot open")
    assert "Traceback" not in (out / "list.err").read_text()
    assert int((out / "list.rc").read_text()) in (0, 2)


def test_a_full_disk(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    out = home / "out"
    out.mkdir()
    (home / "home").mkdir()
    result = _namespace(f'OUT={out}\n' + _FIRST + 'dd if=/dev/zero of="$CALLSTREAM_HOME/filler" bs=4k 2>/dev/null\n'
                        + _AFTER + 'rm -f "$CALLSTREAM_HOME/filler"\n"$PY" -m app export "$ID" > "$OUT/after.json"\n',
                        home)
    _check(out, result, "disk is full", "No space left on device")


def test_a_full_ledger_refuses_the_claim_or_says_the_result_was_not_recorded(tmp_path: Path) -> None:
    from app.ledger import LedgerUnavailable, SqliteLedger
    from app.tools.dispatcher import ledger_unreachable, not_recorded

    ledger = SqliteLedger(tmp_path / "ledger.db")
    claim = ledger.claim("k1", "c", 0, "t", {"a": 1}, 0)
    assert claim.state == "claimed"
    pages = ledger._db.execute("PRAGMA page_count").fetchone()[0]
    ledger._db.execute(f"PRAGMA max_page_count = {pages}")  # sqlite's own "database or disk is full"
    with pytest.raises(LedgerUnavailable) as finished:
        ledger.finish("k1", "ran", "x" * 200_000, False, fence=claim.fence)
    assert "the disk is full" in str(finished.value) and str(tmp_path / "ledger.db") in str(finished.value)
    assert "its result is not recorded in the ledger" in not_recorded(str(finished.value))
    with pytest.raises(LedgerUnavailable) as claimed:
        ledger.claim("k2", "c", 0, "t", {"a": "y" * 200_000}, 0)
    assert "Error: not run" in ledger_unreachable(claimed.value)
    ledger.close()


# -- long prose: written as it grows, a piece at a time ----------------------------------------------------------

_PROSE = "The parcel left the hub on Tuesday and has not been scanned since; a courier will call. "


def _prose_reply(size: int) -> bytes:
    from tests import streamgen

    text = (_PROSE * (size // len(_PROSE) + 1))[:size]
    return streamgen.openai_chat([("text", piece) for piece in streamgen.fragments(text, 997)], finish="stop")


def test_prose_is_stored_in_pieces_that_reopen_as_the_whole(home: Path) -> None:
    """Each flush appends what the prose grew by (never the whole again); a
    secret echoed anywhere in it, across any piece boundary, is not stored."""
    from app.chat.transcribe import TranscriptWriter  # noqa: F401
    from app.store.transcripts import Store
    from app.stream import TextBlock
    from app.stream.redact import REDACTED, register_secret

    secret = "sk-prose-secret-0123456789abcdef"
    register_secret(secret)
    store = Store(home / "store.db")
    store.create("c", "p", "m", "openai-chat")
    block = TextBlock()
    text = (_PROSE * 40_000)  # 3.4 MB
    text = text[:1_000_000] + f" Incorrect API key provided: {secret}. Authorization: Bearer abcdefgh12345678 " \
        + text[1_000_000:]
    sizes = []
    for start in range(0, len(text), 150_001):
        block.append(text[start:start + 150_001])
        store.put_block("c", 0, 0, block, growing=True)
        sizes.append(storefaults.prose_bytes(store.path))
    assert sizes == sorted(sizes) and 0 < sizes[-1] < len(text)  # grows; the last characters wait
    store.put_block("c", 0, 0, block)
    store.put_block("c", 0, 0, block)  # the turn's end writes every block again: no second copy
    parts = storefaults.prose_parts(store.path)
    assert len(parts) > 4 and max(map(len, parts)) <= 1 << 20
    assert storefaults.first_block_record(store.path) == {"type": "text", "text": ""}  # the record holds no text
    storefaults.add_finished_turn(store.path, "c", 0)
    conv = store.load("c")
    assert conv is not None
    (turn,) = conv.items
    expected = text.replace(secret, REDACTED).replace("Bearer abcdefgh12345678", f"Bearer {REDACTED}")
    assert turn.blocks[0].text == expected
    store.close()
    for path in home.glob("store.db*"):
        assert secret.encode() not in path.read_bytes() and b"abcdefgh12345678" not in path.read_bytes()


def test_a_kill_mid_reply_reopens_with_the_prose_so_far_and_the_note(home: Path) -> None:
    """kill -9 while a long reply streams: the reopened turn holds the prose
    stored so far (a prefix of what was sent, as long as what the store held
    when it was killed) and the one-line note."""
    import signal

    from app.store.transcripts import Store
    from tests.faultserver import FaultServer, Reply
    from tests.waiting import wait_until_sync

    size = 4 << 20
    with FaultServer() as server:
        server.replies.append(Reply(_prose_reply(size), chunk=8192, delay=0.005))
        (home / "config.toml").write_text(f'[providers.slow]\nprovider = "openai-chat"\nmodel = "m"\n'
                                          f'base_url = "{server.url}/v1"\nretries = 0\n')
        worker = subprocess.Popen([sys.executable, "-m", "app", "ask", "tell me", "--provider", "slow", "--no-tools"],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy())
        database = home / "home" / "callstream.db"
        held = 0

        def stored_so_far() -> bool:
            nonlocal held
            if database.exists():
                try:
                    with sqlite3.connect(database, timeout=1) as db:
                        held = db.execute("SELECT COALESCE(SUM(LENGTH(text)), 0) FROM prose_parts").fetchone()[0]
                except sqlite3.OperationalError:
                    pass  # not made yet
            return held >= 300_000 or worker.poll() is not None

        try:
            wait_until_sync(stored_so_far, "300,000 characters of prose stored mid-reply", timeout=60)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
    assert held >= 300_000, "the store never held the prose so far"
    store = Store(database)
    (conversation,) = store.list()
    conv = store.load(conversation["id"])
    store.close()
    assert conv is not None
    turn = conv.items[-1]
    sent = (_PROSE * (size // len(_PROSE) + 1))[:size]
    assert turn.killed and turn.note == "Interrupted: callstream stopped during this turn."
    text = turn.blocks[0].text
    assert len(text) >= held and sent.startswith(text) and len(text) < size
    code, out, err = run("export", conv.id)
    assert code == 0, err
    assert json.loads(out)["items"][-1]["blocks"][0]["text"] == text
