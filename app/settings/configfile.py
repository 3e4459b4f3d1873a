"""Changing the user's config file without rewriting it: tomlkit keeps every
comment, key order and line the user wrote, and we add only our lines.

Two things write here: ``callstream mcp import`` (new ``[mcp.NAME]`` tables)
and an "always" approval (a pattern appended to ``[approval].allow`` with a
comment naming where it came from). Values are written as given — the config
keeps ``${VAR}`` as text, so an expanded secret never reaches the file.
"""

from __future__ import annotations

import datetime
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ConfigFileError", "edit_config", "allow_always"]


class ConfigFileError(ValueError):
    """The config file could not be changed; the message says why, naming it (the file is left as it was)."""


def edit_config(path: Path, change: Callable[[Any], None]) -> None:
    """Load ``path`` (or start an empty document), apply ``change`` to the
    tomlkit document, and write it back atomically, user-only (0600). A
    config that is a symlink is written through the link (the file it points
    to changes, the link stays); a file that is not valid TOML (mid-edit) is
    left as it is: ``ConfigFileError``."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    target = Path(os.path.realpath(path))
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        import tomllib

        try:  # tomllib words most faults better ("unclosed array" where tomlkit names a NUL at line 1)
            tomllib.loads(text)
            why = str(exc)
        except tomllib.TOMLDecodeError as decoded:
            why = str(decoded)
        raise ConfigFileError(f"{path} is not valid TOML ({why}), so it was left as it is") from None
    change(document)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".config-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(tomlkit.dumps(document))
        os.chmod(temp, 0o600)
        os.replace(temp, target)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def allow_always(path: Path, name: str, conversation: str) -> None:
    """An "always" answer kept: ``name`` appended to ``[approval].allow`` with
    a comment saying when and in which conversation it was given."""
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")

    def change(document: Any) -> None:
        import tomlkit

        table = document.get("approval")
        if table is None:
            table = tomlkit.table()
            document["approval"] = table
        allow = table.get("allow")
        if allow is None:
            allow = tomlkit.array()
            allow.multiline(True)
            table["allow"] = allow
        if name not in allow:
            allow.add_line(name, comment=f"\"always\" in the chat, {when}, conversation {conversation[:12]}")

    edit_config(path, change)
