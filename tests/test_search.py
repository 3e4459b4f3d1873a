"""Search over every saved conversation: what may be shown is found, an
unlisted argument value never is (a real conversation over loopback HTTP,
a real command tool, a real sqlite file, the real command line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app.files.paths import data_dir
from app.net.endpoint import Endpoint
from app.settings.config import Config
from app.store.search import fts_query
from app.store.transcripts import Store
from tests import storefaults, streamgen
from tests.conftest import ROOT
from tests.conversations import converse
from tests.faultserver import FaultServer, Reply
from tests.test_tui import _lookup_tool

#: A value in a field no allow-list shows (not key-shaped, so the redaction leaves it as it is: only the
#: allow-list keeps it out of the index).
PLANTED = "zanzibar-quokka-4471"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def _secret_conversation(tmp_path: Path) -> str:
    calls = streamgen.call_script(0, "t1", "lookup_user", json.dumps({"query": "ada", "api_token": PLANTED}), 5)
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic([("text", "Looking her up. ")] + calls), chunk=23))
        server.replies.append(Reply(streamgen.anthropic([("text", "Found her: authorised.")],
                                                        stop_reason="end_turn")))
        session = converse(["who is ada?"], Config(tools={"lookup_user": _lookup_tool(tmp_path)}),
                           Endpoint("anthropic", server.url, "m", "test"))
    return session.conversation


def test_an_unlisted_argument_value_is_never_found_or_returned(home: Path, tmp_path: Path) -> None:
    conversation = _secret_conversation(tmp_path)
    store = Store(data_dir() / "callstream.db")
    try:
        raw = storefaults.call_buffers(store.path, conversation)
        assert any(PLANTED in r for r in raw)  # the raw buffer is kept, for the log…
        for words in (PLANTED, "zanzibar", "quokka", "4471", "zanz", "api_token", "api"):
            assert store.search(words) == [], words  # …but nothing of it is searchable
        indexed = " ".join(storefaults.search_index(store.path))
        assert "zanzibar" not in indexed and "quokka" not in indexed
        assert [h.conversation for h in store.search("lookup_user")] == [conversation]  # the tool's name
        assert store.search("Query ada")  # the allow-listed field
        assert store.search("authorised")  # the prose
        assert store.list("quokka") == []  # the transcripts filter searches the same index
    finally:
        store.close()
    printed = cli("search", "ada", "--json")
    assert printed.returncode == 0 and "quokka" not in printed.stdout and json.loads(printed.stdout)


def test_search_cli_finds_messages_and_says_where(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    asked = cli("ask", "Show me order A-1042", "--provider", "demo", "--json")
    conversation = json.loads(asked.stdout)["conversation"]
    hits = json.loads(cli("search", "A-1042", "--json").stdout)
    assert hits and {h["conversation"] for h in hits} == {conversation}
    assert {"entry", "block", "snippet", "title"} <= set(hits[0])
    human = cli("search", "carrier")  # a result field get_order's allow-list shows ("Carrier: UPS")
    assert human.returncode == 0 and conversation[:12] in human.stdout and "[Carrier]" in human.stdout
    nothing = cli("search", "zebra")
    assert nothing.returncode == 0 and "nothing saved matches" in nothing.stdout


def test_search_words_are_never_query_syntax(home: Path) -> None:
    assert fts_query('ada" OR body:*') == '"ada" "OR" "body"*'
    assert fts_query("   ") == ""
    store = Store(data_dir() / "callstream.db")
    try:
        for text in ('"', "NEAR(", "a AND", "*", "body:x", "'; DROP TABLE entries; --"):
            assert store.search(text) == []  # an answer, never an error
    finally:
        store.close()


def test_fork_cli_copies_and_refuses_clearly(home: Path) -> None:
    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n')
    conversation = json.loads(cli("ask", "Show me order A-1042", "--provider", "demo", "--json").stdout)[
        "conversation"]
    forked = cli("fork", conversation[:8], "--at", "0", "--json")
    assert forked.returncode == 0, forked.stderr
    document = json.loads(forked.stdout)
    assert document["forked_from"] == conversation and document["forked_at"] == 0
    exported = json.loads(cli("export", document["conversation"]).stdout)
    assert [i["kind"] for i in exported["items"]] == ["user"]
    assert exported["conversation"]["forked_from"] == conversation
    missing = cli("fork", conversation, "--at", "99")
    assert missing.returncode == 2 and "has no entry 99" in missing.stderr and "Traceback" not in missing.stderr
    unknown = cli("fork", "nope")
    assert unknown.returncode == 2 and "no stored conversation" in unknown.stderr


def _tool_config(tmp_path: Path, display: str) -> str:
    return (f"[tools.lookup_user]\ncommand = {json.dumps([sys.executable, str(tmp_path / 'lookup.py')])}\n"
            "read_only = true\nparameters = '{\"type\": \"object\", \"properties\": {\"query\": {\"type\": "
            "\"string\"}, \"api_token\": {\"type\": \"string\"}}}'\n"
            f"display = {display}\n")


def test_a_field_removed_from_display_is_no_longer_found_nor_shown(home: Path, tmp_path: Path) -> None:
    """The index was written while ``display`` listed api_token; the user then removed it to hide it."""
    tool = _lookup_tool(tmp_path)
    tool.display = [("query", "Query"), ("api_token", "Token")]
    calls = streamgen.call_script(0, "t1", "lookup_user", json.dumps({"query": "ada", "api_token": PLANTED}), 5)
    with FaultServer() as server:
        server.replies.append(Reply(streamgen.anthropic([("text", "Looking her up. ")] + calls), chunk=23))
        server.replies.append(Reply(streamgen.anthropic([("text", "Found her: authorised.")],
                                                        stop_reason="end_turn")))
        conversation = converse(["who is ada?"], Config(tools={"lookup_user": tool}),
                                Endpoint("anthropic", server.url, "m", "test")).conversation
    path = data_dir() / "callstream.db"
    assert any("zanzibar" in body for body in storefaults.search_index(path))  # written with the old list

    def old(name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        return ([("query", "Query"), ("api_token", "Token")], []) if name == "lookup_user" else ([], [])

    def now(name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        return ([("query", "Query")], []) if name == "lookup_user" else ([], [])

    store = Store(path, now)
    try:
        for words in ("zanzibar", "quokka", "4471", "Token zanz"):
            assert store.search(words) == [], words
        assert store.list("quokka") == []  # the transcripts filter obeys the same lists
        hits = store.search("ada")
        assert [h.conversation for h in hits] and all("quokka" not in h.snippet for h in hits)
        assert any("Query [ada]" in h.snippet for h in hits)  # the field still listed is still found
    finally:
        store.close()
    store = Store(path, old)  # listed again: found again (nothing was thrown away)
    try:
        assert [h.conversation for h in store.search("quokka")] == [conversation]
    finally:
        store.close()
    (home / "config.toml").write_text(_tool_config(tmp_path, '[["query", "Query"]]'))
    hidden = cli("search", "zanzibar", "quokka")
    assert hidden.returncode == 0 and "Traceback" not in hidden.stderr
    assert "nothing saved matches 'zanzibar quokka'" in hidden.stdout
    found = cli("search", "ada", "--json")
    assert found.returncode == 0 and "quokka" not in found.stdout and "zanzibar" not in found.stdout
    assert {h["conversation"] for h in json.loads(found.stdout)} == {conversation}
    assert storefaults.call_buffers(path, conversation)  # the stored call is as it was: only what is found changed
    (home / "config.toml").write_text(_tool_config(tmp_path, '[["query", "Query"], ["api_token", "Token"]]'))
    shown = cli("search", "quokka", "--json")
    assert shown.returncode == 0 and [h["conversation"] for h in json.loads(shown.stdout)] == [conversation]
