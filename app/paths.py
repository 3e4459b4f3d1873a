"""Where callstream keeps its files.

``CALLSTREAM_CONFIG`` (the config file) and ``CALLSTREAM_HOME`` (the data
directory) override the platformdirs locations; every feature and every test
goes through these two functions so a test can point them at a temp dir.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = ["config_path", "data_dir"]

_APP = "callstream"


def config_path() -> Path:
    override = os.environ.get("CALLSTREAM_CONFIG")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_config_dir(_APP)) / "config.toml"


def data_dir(create: bool = True) -> Path:
    """The data dir, created user-only (0700): transcripts and the ledger live here."""
    override = os.environ.get("CALLSTREAM_HOME")
    path = Path(override).expanduser() if override else Path(platformdirs.user_data_dir(_APP))
    if create:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o700)
    return path
