"""Ctrl+E: a long prompt written in $VISUAL / $EDITOR, outside the screen.

The app is suspended while the editor runs (where the driver cannot suspend,
the editor runs without the terminal's input). Failures are said as a
notification and leave the prompt as it was.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from textual.app import App, SuspendNotSupported

__all__ = ["run_editor"]


def run_editor(app: App[Any], text: str) -> str | None:
    """``text`` edited in the user's editor; None when it could not run or
    exited with an error (said as a notification)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    fd, name = tempfile.mkstemp(prefix="callstream-prompt-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        try:
            with app.suspend():
                code = subprocess.call([*shlex.split(editor), str(path)])
        except SuspendNotSupported:
            code = subprocess.call([*shlex.split(editor), str(path)], stdin=subprocess.DEVNULL)
        if code != 0:
            app.notify(f"The editor exited with {code}; the prompt is unchanged.", markup=False, severity="warning")
            return None
        return path.read_text(encoding="utf-8").rstrip("\n")
    except OSError as exc:
        app.notify(f"Cannot run the editor {editor!r}: {exc}", markup=False, severity="error")
        return None
    finally:
        path.unlink(missing_ok=True)
