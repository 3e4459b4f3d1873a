"""``mypy --strict`` over app/ and widgets/ (the config is in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("mypy", path=str(ROOT / ".venv" / "bin")) is None and not _has_mypy():
        pytest.skip(reason="mypy is not installed in this environment (make test installs it)")
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True)


def test_app_and_widgets_are_mypy_strict_clean() -> None:
    result = _mypy()
    assert result.returncode == 0, result.stdout + result.stderr


def _has_mypy() -> bool:
    try:
        import mypy  # noqa: F401
    except ImportError:
        return False
    return True
