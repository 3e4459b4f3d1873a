"""Choosing the ledger: the config's ``ledger`` and ``team``, CALLSTREAM_LEDGER_URL,
and the keys a shared namespace gives a conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.ledger import SqliteLedger, conversation_scope, idempotency_key, open_ledger
from app.settings.checks import ConfigError
from app.settings.config import load_config


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_no_setting_opens_the_embedded_sqlite_ledger(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CALLSTREAM_LEDGER_URL", raising=False)
    ledger = open_ledger(load_config())
    try:
        assert isinstance(ledger, SqliteLedger)
        assert ledger.where.endswith("callstream.db")
    finally:
        ledger.close()


def test_a_password_in_the_config_is_refused(tmp_path: Path) -> None:
    path = _config(tmp_path, 'ledger = "postgresql://cs:hunter2@127.0.0.1/cs"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "PGPASSWORD" in str(caught.value) and "hunter2" not in str(caught.value)


def test_a_ledger_that_is_not_postgresql_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="postgresql://"):
        load_config(_config(tmp_path, 'ledger = "mysql://127.0.0.1/cs"\n'))


def test_an_empty_team_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="team"):
        load_config(_config(tmp_path, 'team = "  "\n'))


@pytest.mark.parametrize("lease", ["0", "-3", '"long"', "true"])
def test_a_lease_that_is_not_a_number_of_seconds_is_refused(tmp_path: Path, lease: str) -> None:
    with pytest.raises(ConfigError, match="ledger_lease"):
        load_config(_config(tmp_path, f"ledger_lease = {lease}\n"))


def test_the_settings_are_read(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path, 'ledger = "postgresql://cs@127.0.0.1/cs"\nteam = "support"\n'
                                           "ledger_lease = 5\n"))
    assert (config.ledger, config.team, config.ledger_lease) == ("postgresql://cs@127.0.0.1/cs", "support", 5.0)


def test_an_environment_url_that_is_not_postgresql_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLSTREAM_LEDGER_URL", "/tmp/ledger.db")
    with pytest.raises(ConfigError, match="CALLSTREAM_LEDGER_URL"):
        open_ledger(None)


def test_a_team_scopes_keys_and_no_team_keeps_todays_keys() -> None:
    assert conversation_scope("abc", None) == "abc"
    support = idempotency_key(conversation_scope("abc", "support"), 1, "t", {}, 1)
    assert support == idempotency_key(conversation_scope("abc", "support"), 1, "t", {}, 1)  # every machine
    assert support != idempotency_key(conversation_scope("abc", "billing"), 1, "t", {}, 1)
    assert support != idempotency_key("abc", 1, "t", {}, 1)


def test_ledger_command_reports_a_bad_ledger_setting_in_one_line(home: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    (home / "config.toml").write_text('ledger = "postgresql://cs:hunter2@127.0.0.1/cs"\n')
    result = subprocess.run([sys.executable, "-m", "app", "ledger"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "PGPASSWORD" in result.stderr and "hunter2" not in result.stderr


def test_the_sqlite_default_never_imports_psycopg(home: Path) -> None:
    """With no PostgreSQL anywhere (psycopg made unimportable), the default works."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = ("import sys; sys.modules['psycopg'] = None\n"
            "from app.ledger import open_ledger, SqliteLedger\n"
            "from app.settings.config import load_config\n"
            "ledger = open_ledger(load_config())\n"
            "claim = ledger.claim('k', 'c', 0, 't', {}, 1)\n"
            "assert isinstance(ledger, SqliteLedger) and ledger.finish('k', 'ran', 'ok', False, fence=claim.fence)\n"
            "print(ledger.claim('k', 'c', 0, 't', {}, 1).state)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.strip() == "ran", done.stderr


def test_a_postgresql_ledger_without_psycopg_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)
    monkeypatch.delitem(sys.modules, "app.ledger.postgres", raising=False)
    monkeypatch.setenv("CALLSTREAM_LEDGER_URL", "postgresql://cs@127.0.0.1:1/cs")
    with pytest.raises(ConfigError, match="psycopg"):
        open_ledger(None)


def test_a_team_session_claims_under_the_team_scope_and_replays_by_it(home: Path) -> None:
    """The runtime scopes keys by the config's team; the recording says which team,
    so a replay finds every recorded outcome by the same keys."""
    import asyncio
    import math

    from app.files.paths import data_dir
    from app.replay.player import Replayer
    from app.store.recording import read_recording
    from app.tools.registry import Registry
    from tests.conversations import converse, demo_config

    config = demo_config()
    config.team = "support"
    session = converse(["Ada Lovelace says her order is late. Check her open and late orders and open a ticket."],
                       config)
    ledger = SqliteLedger(data_dir() / "callstream.db")
    entries = ledger.entries(f"team:support/{session.conversation}")
    ledger.close()
    calls = [b for t in session.turns for b in t.blocks if b.type == "tool_call"]
    assert entries and len(entries) == len(calls)
    assert {e["key"] for e in entries} == {b.key for b in calls}
    (path,) = (data_dir() / "recordings").glob(f"{session.conversation}.*")
    replayer = Replayer(read_recording(path), math.inf, None, Registry.default(data_dir()))
    asyncio.run(replayer.run())
    replayed = [b for t in replayer.session.turns for b in t.blocks if b.type == "tool_call"]
    assert [(b.key, b.state, b.result) for b in replayed] == [(b.key, b.state, b.result) for b in calls]
