"""Recordings pruned by the config's ``[recordings]`` age and size: oldest
first, never the recording being written nor one written to in the last ten
minutes; at start and after each exchange. Over real recordings in a real
data dir."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from app.files.paths import data_dir
from app.store.housekeeping import prune_recordings
from tests.conversations import converse, demo_config

DAY = 86400.0


def aged(path: Path, days: float) -> Path:
    stamp = time.time() - days * DAY
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def recordings(home: Path) -> list[Path]:
    """Five real recordings (copies of one demo conversation's), 1 MB each padded, aged 50, 40, 30, 20, 10 days."""
    session = converse(["Show me order A-1042"])
    directory = data_dir() / "recordings"
    source = directory / f"{session.conversation}.ndjson.gz"
    made = []
    for n, days in enumerate((50, 40, 30, 20, 10)):
        path = directory / f"old-{n}.ndjson.gz"
        shutil.copy(source, path)
        with path.open("ab") as f:
            f.write(b"\0" * (1024 * 1024 - path.stat().st_size))
        made.append(aged(path, days))
    source.unlink()
    return made


def test_nothing_is_pruned_without_limits(recordings: list[Path]) -> None:
    assert prune_recordings(recordings[0].parent, None, None).removed == []
    assert all(p.exists() for p in recordings)


def test_recordings_older_than_max_age_days_go(recordings: list[Path]) -> None:
    pruned = prune_recordings(recordings[0].parent, 25, None)
    assert pruned.removed == recordings[:3]
    assert [p.exists() for p in recordings] == [False, False, False, True, True]


def test_the_oldest_go_first_until_the_rest_fit_in_max_mb(recordings: list[Path]) -> None:
    pruned = prune_recordings(recordings[0].parent, None, 2.5)
    assert pruned.removed == recordings[:3] and pruned.freed == 3 * 1024 * 1024
    assert [p.exists() for p in recordings] == [False, False, False, True, True]


def test_the_recording_being_written_is_never_pruned(recordings: list[Path]) -> None:
    pruned = prune_recordings(recordings[0].parent, 1, 0.5, keep=[recordings[0]])
    assert recordings[0].exists() and pruned.removed == recordings[1:]


def test_a_recording_written_to_in_the_last_ten_minutes_stays(recordings: list[Path]) -> None:
    os.utime(recordings[0], None)  # just written: another callstream's current recording, perhaps
    prune_recordings(recordings[0].parent, None, 0.001)
    assert [p.exists() for p in recordings] == [True, False, False, False, False]


def test_other_files_are_left_alone(recordings: list[Path]) -> None:
    notes = recordings[0].parent / "notes.txt"
    notes.write_text("mine")
    aged(notes, 100)
    prune_recordings(recordings[0].parent, 1, 0.001)
    assert notes.read_text() == "mine"


def test_a_missing_recordings_directory_prunes_nothing(home: Path) -> None:
    assert prune_recordings(home / "nowhere", 1, 1).removed == []


def test_a_session_prunes_at_start_and_after_each_exchange(recordings: list[Path]) -> None:
    config = demo_config()
    config.recordings_max_age_days = 35
    session = converse(["Show me order A-1042"], config)
    current = data_dir() / "recordings" / f"{session.conversation}.ndjson.gz"
    assert [p.exists() for p in recordings] == [False, False, True, True, True] and current.exists()
    # a long session: what aged while it ran goes after its next exchange, never its own recording
    aged(recordings[2], 60)
    aged(current, 90)
    from app.runtime.wiring import open_runtime
    from app.tools.approvals import Approvals

    runtime = open_runtime(config=config)
    reopened = runtime.session(session.conversation, approvals=Approvals.from_config(config, approve="all"))
    aged(recordings[3], 60)  # after the session started

    async def go() -> None:
        try:
            await reopened.send("Thanks")
        finally:
            await reopened.aclose()
            runtime.close()

    asyncio.run(go())
    assert [p.exists() for p in recordings] == [False, False, False, False, True] and current.exists()


def test_ask_prunes_by_the_config(home: Path, recordings: list[Path]) -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    (home / "config.toml").write_text('[providers.demo]\nprovider = "demo"\nspeed = 0\n\n'
                                      '[recordings]\nmax_mb = 2.5\n')
    result = subprocess.run([sys.executable, "-m", "app", "ask", "Show me order A-1042"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    left = sorted(p.name for p in (data_dir() / "recordings").iterdir())
    assert [p.exists() for p in recordings] == [False, False, False, True, True] and len(left) == 3
