"""``callstream transcripts``, ``export`` and ``import`` from the shell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.fixture
def conversation(home: Path) -> str:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    result = cli("ask", "Show me order A-1042", "--provider", "demo", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["conversation"]


def test_transcripts_lists_the_conversation(conversation: str) -> None:
    rows = json.loads(cli("transcripts", "--json").stdout)
    assert [r["id"] for r in rows] == [conversation] and rows[0]["turns"] == 2
    assert "Show me order A-1042" in cli("transcripts").stdout


def test_export_json_then_import_gives_the_same_conversation(conversation: str, home: Path) -> None:
    exported = cli("export", conversation[:8])
    assert exported.returncode == 0
    document = json.loads(exported.stdout)
    assert document["format"] == "callstream-transcript" and document["conversation"]["id"] == conversation
    path = home / "t.json"
    path.write_text(exported.stdout)
    again = cli("import", str(path))
    assert again.returncode == 2 and "already stored" in again.stderr
    document["conversation"]["id"] = "copy-1"
    path.write_text(json.dumps(document))
    assert cli("import", str(path)).returncode == 0
    copy = json.loads(cli("export", "copy-1").stdout)
    assert copy["items"] == document["items"]


def test_export_markdown_shows_allow_listed_fields(conversation: str) -> None:
    text = cli("export", conversation, "--format", "markdown").stdout
    assert "## You" in text and "- **get_order** — ran" in text and "  - Order: A-1042" in text


def test_export_unknown_id(home: Path) -> None:
    result = cli("export", "nope")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "no stored conversation" in result.stderr


@pytest.mark.parametrize("content,message", [
    ("not json", "is not JSON"),
    ('{"format": "something-else"}', "not a callstream transcript export"),
    ('{"format": "callstream-transcript", "version": 9}', "unsupported transcript version"),
    ('{"format": "callstream-transcript", "version": 1, "conversation": {"id": "x"}, "items": [{"kind": "??"}]}',
     "neither a user message nor a turn"),
    ('{"format": "callstream-transcript", "version": 1, "conversation": {"id": "y"}, '
     '"items": [{"kind": "turn", "blocks": [{"type": "tool_call"}]}]}', "damaged"),
])
def test_import_bad_files_fail_clearly_and_store_nothing(home: Path, content: str, message: str) -> None:
    path = home / "bad.json"
    path.write_text(content)
    result = cli("import", str(path))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert json.loads(cli("transcripts", "--json").stdout) == []


def test_import_missing_file(home: Path) -> None:
    result = cli("import", str(home / "missing.json"))
    assert result.returncode == 2 and "cannot read" in result.stderr


def test_ask_continues_a_stored_conversation(conversation: str) -> None:
    result = cli("ask", "Thanks", "--provider", "demo", "--conversation", conversation[:6], "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["conversation"] == conversation and document["turns"][0]["index"] == 2
    missing = cli("ask", "hi", "--conversation", "nonexistent")
    assert missing.returncode == 2 and "no stored conversation" in missing.stderr


# -- in-process: main() with its output captured, over a real sqlite file and real recordings --------------------

def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    import contextlib
    import io

    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        sys.stdin = old
    return code, out.getvalue(), err.getvalue()


def stated(result: tuple[int, str, str], code: int, *words: str, lines: int | None = 1) -> str:
    """The exit code, the words on stderr, no traceback, and (for a failure) one line unless said otherwise."""
    got, out, err = result
    assert "Traceback" not in out + err
    assert got == code, (got, out, err)
    for word in words:
        assert word in err, (word, err)
    if lines is not None:
        assert len([line for line in err.splitlines() if line.strip()]) == lines, err
    return err


def database(home: Path) -> Path:
    return home / "home" / "callstream.db"


def count(home: Path, sql: str, *params: object) -> int:
    import sqlite3

    db = sqlite3.connect(database(home))
    try:
        return int(db.execute(sql, params).fetchone()[0])
    finally:
        db.close()


def imported(home: Path, conversation: str, title: str = "", text: str = "hello") -> str:
    """A stored conversation with a chosen id (a real import, into the real store)."""
    document = {"format": "callstream-transcript", "version": 2,
                "conversation": {"id": conversation, "title": title, "provider": "demo", "model": "demo",
                                 "dialect": "openai-chat"},
                "items": [{"kind": "user", "text": text, "entry": 0, "parent": None, "branch": ""},
                          {"kind": "turn", "turn": 0, "outcome": "complete", "entry": 1, "parent": 0, "branch": "",
                           "blocks": [{"type": "text", "text": f"a reply about {text}"}]}]}
    path = home / f"{conversation}.json"
    path.write_text(json.dumps(document))
    code, out, err = run("import", str(path))
    assert code == 0, err
    return conversation


@pytest.fixture
def twins(home: Path) -> list[str]:
    """Two conversations whose ids share a start ('abc'), and one that does not."""
    return [imported(home, "abc-one", "first twin", "apples"), imported(home, "abc-two", "second twin", "apples"),
            imported(home, "xyz-solo", "alone", "apples")]


def test_transcripts_lists_a_title_column(twins: list[str]) -> None:
    code, out, _ = run("transcripts")
    assert code == 0
    header = out.splitlines()[0]
    assert header.split() == ["id", "updated", "model", "turns", "title"]
    assert "first twin" in out and "second twin" in out


def test_rename_sets_the_title_shown_by_transcripts_and_export(twins: list[str]) -> None:
    code, out, _ = run("transcripts", "rename", "xyz", "  Lunch   order\n  for Friday ")
    assert code == 0 and "Lunch order for Friday" in out
    assert "Lunch order for Friday" in run("transcripts")[1]
    assert json.loads(run("export", "xyz")[1])["conversation"]["title"] == "Lunch order for Friday"
    assert run("export", "xyz", "--format", "markdown")[1].startswith("# Lunch order for Friday\n")
    rows = json.loads(run("transcripts", "--json")[1])
    assert {r["id"]: r["title"] for r in rows}["xyz-solo"] == "Lunch order for Friday"


def test_a_renamed_conversation_keeps_its_title_when_it_goes_on(home: Path, conversation: str) -> None:
    assert run("transcripts", "rename", conversation[:8], "Order A-1042")[0] == 0
    result = cli("ask", "Thanks", "--provider", "demo", "--conversation", conversation[:8])
    assert result.returncode == 0, result.stderr
    assert {r["id"]: r["title"] for r in json.loads(run("transcripts", "--json")[1])}[conversation] == "Order A-1042"


def test_rename_to_an_empty_title_is_refused_and_keeps_the_old_one(twins: list[str]) -> None:
    stated(run("transcripts", "rename", "xyz", "   "), 2, "a title needs at least one character")
    assert {r["id"]: r["title"] for r in json.loads(run("transcripts", "--json")[1])}["xyz-solo"] == "alone"


def test_rename_to_a_title_too_long_is_refused(twins: list[str]) -> None:
    stated(run("transcripts", "rename", "xyz", "x" * 201), 2, "at most 200 characters")
    assert {r["id"]: r["title"] for r in json.loads(run("transcripts", "--json")[1])}["xyz-solo"] == "alone"


def help_text(*argv: str) -> str:
    """What ``callstream ARGV --help`` prints (argparse exits 0 after printing it)."""
    import contextlib
    import io

    from app.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return " ".join(out.getvalue().split())  # argparse wraps lines: compare words


def test_rename_help_states_the_rule() -> None:
    assert "at most 200 characters" in help_text("transcripts", "rename")


@pytest.fixture
def recorded(home: Path) -> str:
    """A conversation run by ask on the demo model: real turns, a real recording, real ledger rows; plus a branch."""
    from app.store.transcripts import Store

    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    result = cli("ask", "Show me order A-1042", "--provider", "demo", "--json")
    assert result.returncode == 0, result.stderr
    conversation = json.loads(result.stdout)["conversation"]
    store = Store(database(home))
    store.add_user(conversation, "an edited question", parent=None, branch="b1")  # a second branch
    store.close()
    return conversation


def test_delete_with_yes_removes_turns_branches_and_recordings_and_keeps_the_ledger(
        home: Path, recorded: str, twins: list[str]) -> None:
    recordings = home / "home" / "recordings"
    assert (recordings / f"{recorded}.ndjson.gz").exists()
    assert count(home, "SELECT COUNT(DISTINCT branch) FROM entries WHERE conversation = ?", recorded) == 2
    ledger_rows = count(home, "SELECT COUNT(*) FROM ledger WHERE conversation = ?", recorded)
    assert ledger_rows >= 1
    code, out, err = run("transcripts", "delete", recorded[:8], "--yes")
    assert code == 0 and f"deleted {recorded}" in out and "1 recording file" in out, err
    for table in ("entries", "blocks", "call_arguments", "search_text"):
        assert count(home, f"SELECT COUNT(*) FROM {table} WHERE conversation = ?", recorded) == 0, table
    assert count(home, "SELECT COUNT(*) FROM conversations WHERE id = ?", recorded) == 0
    assert not list(recordings.glob(f"{recorded}*"))
    # the proof of what ran stays, and is still listed by the id's start
    assert count(home, "SELECT COUNT(*) FROM ledger WHERE conversation = ?", recorded) == ledger_rows
    code, out, _ = run("ledger", "--conversation", recorded[:8])
    assert code == 0 and "get_order" in out
    # nothing else was touched
    assert sorted(r["id"] for r in json.loads(run("transcripts", "--json")[1])) == sorted(twins)
    assert {h["conversation"] for h in json.loads(run("search", "apples", "--json")[1])} == set(twins)


def test_delete_several_at_once(twins: list[str]) -> None:
    code, out, _ = run("transcripts", "delete", "abc-one", "xyz", "--yes")
    assert code == 0 and "deleted abc-one" in out and "deleted xyz-solo" in out
    assert [r["id"] for r in json.loads(run("transcripts", "--json")[1])] == ["abc-two"]


def test_delete_off_a_terminal_without_yes_deletes_nothing(twins: list[str]) -> None:
    stated(run("transcripts", "delete", "xyz"), 2, "not deleting without asking", "--yes")
    assert len(json.loads(run("transcripts", "--json")[1])) == 3


def test_delete_with_one_unknown_id_deletes_none_of_them(twins: list[str]) -> None:
    stated(run("transcripts", "delete", "xyz", "nope", "--yes"), 2, "no stored conversation 'nope'")
    assert len(json.loads(run("transcripts", "--json")[1])) == 3


def test_delete_with_an_ambiguous_prefix_deletes_nothing_and_lists_the_matches(twins: list[str]) -> None:
    err = stated(run("transcripts", "delete", "abc", "--yes"), 2, "'abc' is the start of 2 conversations", lines=3)
    assert "abc-one" in err and "abc-two" in err and "first twin" in err
    assert len(json.loads(run("transcripts", "--json")[1])) == 3


def test_delete_help_says_the_ledger_keeps_its_rows() -> None:
    text = help_text("transcripts", "delete")
    assert "The idempotency ledger keeps its rows: they are the proof of what ran" in text and "--yes" in text


def _terminal(args: list[str], answer: bytes) -> tuple[int, str]:
    """Run callstream with a pseudo-terminal as its stdin and stdout, type ``answer``; (exit code, what it showed)."""
    import os
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "app", *args], cwd=ROOT, stdin=follower, stdout=follower,
                               stderr=follower, close_fds=True)
    os.close(follower)

    def read(shown: bytes, until: bytes | None) -> bytes:
        """Until ``until`` is shown, or the process ends (EOF / EIO), or a generous deadline passes."""
        import select
        import time

        end = time.monotonic() + 60
        while until is None or until not in shown:
            ready, _, _ = select.select([leader], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        return shown

    try:
        shown = read(b"", b"[y/N]")
        os.write(leader, answer)
        code = process.wait(timeout=60)
        shown = read(shown, None)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
    return code, shown.decode("utf-8", "replace")


def test_delete_on_a_terminal_asks_and_no_keeps_it(twins: list[str]) -> None:
    code, shown = _terminal(["transcripts", "delete", "xyz"], b"n\n")
    assert "Delete 1 conversation" in shown and "ledger keeps its rows" in shown and "alone" in shown
    assert code == 1 and "nothing deleted" in shown and "Traceback" not in shown
    assert len(json.loads(run("transcripts", "--json")[1])) == 3


def test_delete_on_a_terminal_asks_and_yes_deletes(twins: list[str]) -> None:
    code, shown = _terminal(["transcripts", "delete", "xyz"], b"y\n")
    assert code == 0 and "deleted xyz-solo" in shown, shown
    assert sorted(r["id"] for r in json.loads(run("transcripts", "--json")[1])) == ["abc-one", "abc-two"]


def test_import_as_new_stores_a_second_copy_under_a_fresh_id(home: Path, conversation: str) -> None:
    path = home / "export.json"
    path.write_text(run("export", conversation)[1])
    code, out, _ = run("import", "--as-new", str(path))
    assert code == 0
    fresh = out.split()[-1]
    assert fresh != conversation and len(fresh) == 32
    ids = {r["id"] for r in json.loads(run("transcripts", "--json")[1])}
    assert ids == {conversation, fresh}
    original, copy = (json.loads(run("export", c)[1]) for c in (conversation, fresh))
    assert copy["items"] == original["items"] and copy["conversation"]["title"] == original["conversation"]["title"]


def test_import_of_a_stored_conversation_says_as_new_would_keep_both(home: Path, conversation: str) -> None:
    path = home / "export.json"
    path.write_text(run("export", conversation)[1])
    stated(run("import", str(path)), 2, "is already stored", "--as-new")
    assert len(json.loads(run("transcripts", "--json")[1])) == 1


def test_import_as_new_of_a_foreign_session(home: Path) -> None:
    source = ROOT / "tests" / "data" / "interchange" / "claude-code-session.jsonl"
    first = run("import", str(source))
    assert first[0] == 0, first[2]
    stated(run("import", str(source)), 2, "is already stored")
    again = run("import", "--as-new", str(source))
    assert again[0] == 0, again[2]
    assert len(json.loads(run("transcripts", "--json")[1])) == 2


# -- one rule for ids: the whole id, or the start of exactly one -------------------------------------------------

PREFIXED = {
    "export": ["export", "{id}"],
    "fork": ["fork", "{id}"],
    "ledger": ["ledger", "--conversation", "{id}"],
    "search": ["search", "apples", "--conversation", "{id}"],
    "rename": ["transcripts", "rename", "{id}", "a title"],
    "delete": ["transcripts", "delete", "{id}", "--yes"],
    "ask": ["ask", "hello again", "--conversation", "{id}"],
    "open": ["open", "{id}"],
    "replay": ["replay", "{id}", "--headless"],
    "audit": ["audit", "{id}"],
}


def _argv(name: str, conversation: str) -> list[str]:
    return [part.format(id=conversation) for part in PREFIXED[name]]


@pytest.mark.parametrize("name", sorted(PREFIXED))
def test_an_ambiguous_prefix_exits_2_listing_the_matches(twins: list[str], name: str) -> None:
    before = json.loads(run("export", "abc-one")[1])
    err = stated(run(*_argv(name, "abc")), 2, "'abc' is the start of 2 conversations", lines=3)
    assert "abc-one" in err and "abc-two" in err and "first twin" in err and "second twin" in err
    assert json.loads(run("export", "abc-one")[1]) == before  # nothing saved was touched
    assert len(json.loads(run("transcripts", "--json")[1])) == 3


@pytest.mark.parametrize("name", sorted(PREFIXED))
def test_an_unknown_id_exits_2_saying_so(twins: list[str], name: str) -> None:
    stated(run(*_argv(name, "nope")), 2, "nope")
    assert len(json.loads(run("transcripts", "--json")[1])) == 3


@pytest.mark.parametrize("name", sorted(PREFIXED))
def test_an_id_outside_the_alphabet_exits_2_before_anything_opens(twins: list[str], name: str) -> None:
    if name in ("replay", "audit"):  # these take a file too: text that cannot be an id is a path
        stated(run(*_argv(name, "../no-such-file")), 2, "cannot read ../no-such-file")
        return
    stated(run(*_argv(name, "../etc")), 2, "'../etc' is not valid", "ASCII letters, digits")


def test_the_matches_are_listed_inert(home: Path) -> None:
    imported(home, "evil-1", "\x1b]52;c;cHduZWQ=\x07 clipboard")
    imported(home, "evil-2", "\x1b[2J cleared")
    err = stated(run("export", "evil"), 2, lines=3)
    assert "\x1b" not in err and "\\x1b" in err


def test_a_unique_prefix_works_for_each_command(home: Path, recorded: str, twins: list[str]) -> None:
    start = recorded[:6]
    assert json.loads(run("export", start)[1])["conversation"]["id"] == recorded
    code, out, _ = run("fork", start, "--json")
    assert code == 0 and json.loads(out)["forked_from"] == recorded
    assert "get_order" in run("ledger", "--conversation", start)[1]
    hits = json.loads(run("search", "order", "--conversation", start, "--json")[1])
    assert hits and {h["conversation"] for h in hits} == {recorded}
    apples = json.loads(run("search", "apples", "--conversation", "abc-t", "--json")[1])
    assert {h["conversation"] for h in apples} == {"abc-two"}  # the filter: only that one of the three
    assert run("transcripts", "rename", start, "renamed")[0] == 0
    code, out, err = run("replay", start, "--headless", "--speed", "instant")
    assert code == 0 and "⚙ get_order · ran · Order: A-1042" in out, err
    code, out, err = run("audit", start)
    assert code == 0 and "1 call whose required fields parsed" in out, err
    asked = cli("ask", "Thanks", "--provider", "demo", "--conversation", start, "--json")
    assert asked.returncode == 0 and json.loads(asked.stdout)["conversation"] == recorded, asked.stderr


def test_open_resolves_a_unique_prefix(home: Path, twins: list[str]) -> None:
    from app.settings.config import Config
    from app.settings.profiles import ProviderProfile
    from app.tui.app import make_app

    config = Config(providers={"demo": ProviderProfile(name="demo", provider="demo", demo_speed=0.0)},
                    default="demo")
    app = make_app(config=config, conversation="xyz")
    try:
        assert app.session.conversation == "xyz-solo"
    finally:
        app.runtime.close()
