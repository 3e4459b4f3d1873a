"""Where callstream keeps its files.

``CALLSTREAM_CONFIG`` (the config file) and ``CALLSTREAM_HOME`` (the data
directory) override the platformdirs locations; every feature and every test
goes through these two functions so a test can point them at a temp dir.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = ["config_path", "data_dir", "recordings_dir"]

_APP = "callstream"


def config_path() -> Path:
    override = os.environ.get("CALLSTREAM_CONFIG")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_config_dir(_APP)) / "config.toml"


def data_dir(create: bool = True) -> Path:
    """The data dir: transcripts and the ledger live here. Created user-only
    (0700) when it does not exist; a directory the user made is left with the
    permissions they gave it. One that cannot be made is a ``DataFileError``."""
    override = os.environ.get("CALLSTREAM_HOME")
    path = Path(override).expanduser() if override else Path(platformdirs.user_data_dir(_APP))
    if create and not path.is_dir():
        try:
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(path, 0o700)  # mkdir's mode is masked by the umask
        except OSError as exc:
            from .dbfile import DataFileError

            raise DataFileError(f"cannot create the data directory {path} ({exc.strerror or exc}): create it, or "
                                "set CALLSTREAM_HOME to a writable directory") from None
    return path


def recordings_dir() -> Path:
    """Where each conversation's recording is written (``<data dir>/recordings``; made by the recorder)."""
    return data_dir() / "recordings"
