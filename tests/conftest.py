"""Shared test setup: where the real fixtures live, hypothesis profiles, and
the ``--run-slow`` switch for exhaustive variants."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "fixtures" / "real"

settings.register_profile("default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default"))

# every request built in the suite (and in the programs it starts) checks that the entries whose items
# it reuses were not changed in place unsaid (``app/stream/dialects/built.py``)
os.environ["CALLSTREAM_CHECK_BUILT"] = "1"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="run the exhaustive (slow) variants in full")
    parser.addoption("--snapshot-update", action="store_true", help="rewrite the SVG snapshots in tests/snapshots")


def pytest_configure(config: pytest.Config) -> None:
    config.run_slow = config.getoption("--run-slow")  # type: ignore[attr-defined]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="exhaustive variant: run with --run-slow (make test-all)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def real_fixtures() -> list[Path]:
    """Every real recorded stream, or [] where ../shared is absent."""
    if not REAL.is_dir():
        return []
    return sorted(REAL.glob("*/*.sse"))


def fixture_params() -> list[object]:
    files = real_fixtures()
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"real fixtures absent: {REAL} not found"))]
    return [pytest.param(path, id=f"{path.parent.name}/{path.stem}") for path in files]


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets a private data dir and an empty config, so no test reads or
    writes the real ~/.local/share/callstream (which outlives the run on a shared
    machine) whether or not it asks for ``home``; ``home`` narrows it further."""
    private = tmp_path_factory.mktemp("private")
    monkeypatch.setenv("CALLSTREAM_HOME", str(private / "home"))
    monkeypatch.setenv("CALLSTREAM_CONFIG", str(private / "config.toml"))
    (private / "config.toml").touch()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private CALLSTREAM_HOME and CALLSTREAM_CONFIG (an empty file: a
    CALLSTREAM_CONFIG naming a missing file is an error) for one test."""
    monkeypatch.setenv("CALLSTREAM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CALLSTREAM_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").touch()
    return tmp_path


@pytest.fixture(scope="session")
def pg_cluster():  # type: ignore[no-untyped-def]
    """A throwaway PostgreSQL server on 127.0.0.1 for the whole run (tests/pgserver.py);
    the tests that need it skip, saying why, where it cannot start."""
    from tests.pgserver import ClusterUnavailable, PgCluster

    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        pytest.skip(reason=f"psycopg is not installed: {exc}")
    try:
        cluster = PgCluster()
        cluster.start()
    except (ClusterUnavailable, OSError, subprocess.SubprocessError) as exc:
        pytest.skip(reason=f"no PostgreSQL server could be started: {exc}")
    yield cluster
    cluster.destroy()


@pytest.fixture
def pg_ledger_url(pg_cluster) -> str:  # type: ignore[no-untyped-def]
    """The cluster's ledger, migrated and emptied for one test."""
    import psycopg

    from app.ledger.postgres import migrate

    url: str = pg_cluster.url()
    migrate(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE callstream_ledger")
    return url


def file_bytes(path: Path) -> bytes:
    """What a file holds, a gzip file decompressed (Python's own gzip: an
    oracle apart from the recording reader), so a search for a secret sees
    inside compressed recordings."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data



def run_cli(*argv: str) -> tuple[int, str, str]:
    """``callstream ARGV`` in this process: its exit code, what it printed and what it said on stderr."""
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()
