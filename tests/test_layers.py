"""The layer rules of DESIGN.md that a test can hold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_stream_core_imports_no_io_libraries() -> None:
    code = (
        "import sys, app.stream.dialects, app.stream.inert\n"
        "from app.stream import *  # every name the package exports, loaded\n"
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


def _modules_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    script = code + "\nimport sys\nprint(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, env=env)
    return set(result.stderr.split())


def test_quick_commands_import_neither_the_loop_nor_the_tui(tmp_path: Path) -> None:
    import os

    (tmp_path / "none.toml").touch()
    env = {**os.environ, "CALLSTREAM_HOME": str(tmp_path), "CALLSTREAM_CONFIG": str(tmp_path / "none.toml")}
    heavy = {"textual", "httpx", "jsonschema", "app.chat.session", "app.demo.server", "app.mcp.servers"}
    run = "from app.cli import main\ntry:\n    main({argv})\nexcept SystemExit:\n    pass"
    assert _modules_after(run.format(argv="['--help']"), env) & (heavy | {"asyncio"}) == set()
    # the registry reads each command's options: argparse-level code, not the stream core
    stream_core = {"app.stream.dialects", "app.stream.parser", "app.stream.assembler", "app.stream.sse", "dataclasses"}
    assert _modules_after(run.format(argv="['--help']"), env) & stream_core == set()
    assert _modules_after(run.format(argv="['transcripts']"), env) & heavy == set()


def test_the_tui_loads_jsonschema_and_mcp_servers_only_when_used() -> None:
    loaded = _modules_after("import app.tui.app")
    assert "textual.app" in loaded
    assert loaded & {"jsonschema", "app.mcp.servers", "app.mcp.tools"} == set()


def test_the_light_list_of_dialect_names_is_the_dialects_table() -> None:
    from app.stream import DIALECT_NAMES
    from app.stream.dialects import DIALECTS

    assert DIALECT_NAMES == tuple(DIALECTS)
