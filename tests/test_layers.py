"""The layer rules of DESIGN.md that a test can hold."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_stream_core_imports_no_io_libraries() -> None:
    code = (
        "import sys, app.stream, app.stream.dialects, app.stream.inert\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'textual', 'httpx', 'httpx2', 'httpcore', 'sqlite3', '_sqlite3', 'rich', 'asyncio', 'socket'})\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"app.stream pulled in: {result.stdout.strip()}"


def test_stream_core_reads_no_clock() -> None:
    for path in (ROOT / "app" / "stream").rglob("*.py"):
        text = path.read_text()
        assert "import time" not in text and "datetime" not in text, path
