"""Command tools run in their own process group: a timeout or a cancel ends
the whole group, children included; a background child that keeps stdout
open does not turn a tool that exited into a timeout. Real processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import pytest

from app.settings.tools import CommandToolConfig
from app.tools.base import ToolContext, ToolError
from app.tools.command import command_tool
from tests.waiting import wait_until, wait_until_sync


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"  # a zombie has ended
    return True


def _spawner(tmp_path: Path, then: str) -> tuple[Path, list[str]]:
    """A command that starts a long-lived child (its pid in a file; ``sleep 60``,
    so one a failed test leaves behind still ends), then ``then``
    (``signal.pause()``: a tool still running when it is killed)."""
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "spawn.py"
    script.write_text(
        "import pathlib, signal, subprocess, sys\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        f"pathlib.Path({str(pidfile)!r}).write_text(str(child.pid))\n" + then)
    return pidfile, [sys.executable, str(script)]


def _started(pidfile: Path) -> bool:
    return pidfile.exists() and bool(pidfile.read_text())


def _child(pidfile: Path) -> int:
    wait_until_sync(lambda: _started(pidfile), "the command to start its child")
    return int(pidfile.read_text())


def test_a_timeout_ends_the_whole_process_group(tmp_path: Path) -> None:
    pidfile, command = _spawner(tmp_path, "signal.pause()\n")
    tool = command_tool(CommandToolConfig("slow", command, timeout=1.5))
    with pytest.raises(ToolError, match="timed out after 1.5 s"):
        asyncio.run(tool.run({}, ToolContext("k")))
    child = _child(pidfile)
    wait_until_sync(lambda: not _alive(child), "the tool's child to end with the timeout")


def test_a_cancel_ends_the_whole_process_group(tmp_path: Path) -> None:
    pidfile, command = _spawner(tmp_path, "signal.pause()\n")
    tool = command_tool(CommandToolConfig("slow", command, timeout=60))

    async def go() -> int:
        task = asyncio.create_task(tool.run({}, ToolContext("k")))
        await wait_until(lambda: _started(pidfile), "the command to start its child")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return int(pidfile.read_text())

    child = asyncio.run(go())
    wait_until_sync(lambda: not _alive(child), "the tool's child to end with the cancel")


def test_a_background_child_holding_stdout_does_not_make_a_finished_tool_time_out(tmp_path: Path) -> None:
    # the child inherits stdout and keeps it open; the command itself prints and exits 0
    pidfile, command = _spawner(tmp_path, "print('ok', flush=True)\n")
    tool = command_tool(CommandToolConfig("quick", command, timeout=20))
    try:
        assert asyncio.run(tool.run({}, ToolContext("k"))) == "ok\n"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(_child(pidfile), signal.SIGKILL)
