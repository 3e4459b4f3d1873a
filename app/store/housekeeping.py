"""Removing what a user no longer wants kept: a conversation (``transcripts
delete``, the transcripts screen), and recordings past the config's age or
size (``[recordings] max_age_days`` / ``max_mb``).

The idempotency ledger is never touched: its rows are the proof of what ran
(a side effect deleted from the transcript still happened), and they keep a
call that already ran from running again should the conversation come back
(an import of an export, a shared ledger).

Pruning runs when a session starts and after each exchange: one directory
listing and a stat per file, oldest first by modification time. It never
removes the recording being written (``keep``), nor any file written to in
the last ``_BUSY_SECONDS`` — another callstream's current recording, which
this process cannot tell from an old one otherwise.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .transcripts import Store

__all__ = ["recording_files", "delete_conversation", "prune_recordings", "Pruned", "RECORDING_SUFFIXES"]

#: The names a conversation's recording may have (compressed now, plain before).
RECORDING_SUFFIXES = (".ndjson.gz", ".ndjson")

#: A recording written to this recently may be another process's current one: never pruned.
_BUSY_SECONDS = 600.0


def recording_files(directory: Path, conversation: str) -> list[Path]:
    """The recording files of ``conversation`` (a whole, checked id) that exist."""
    return [path for suffix in RECORDING_SUFFIXES if (path := directory / f"{conversation}{suffix}").exists()]


def delete_conversation(store: Store, conversation: str, recordings: Path) -> list[Path]:
    """Remove ``conversation`` (a whole id): its entries, blocks, branches
    and search rows in one transaction, then its recording files. Returns
    the files removed. Its attachment files go too, unless another
    conversation names them. The ledger keeps its rows (see the module docstring)."""
    named = store.attachment_digests(conversation)
    store.delete(conversation)
    store.attachments.remove(named - store.attachment_digests())  # the files no other conversation names
    removed = []
    for path in recording_files(recordings, conversation):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


@dataclass(slots=True)
class Pruned:
    removed: list[Path] = field(default_factory=list)
    freed: int = 0


def _recordings(directory: Path) -> list[tuple[float, int, Path]]:
    """(modified, size, path) of every recording in ``directory``, oldest first."""
    found = []
    try:
        entries = list(directory.iterdir())
    except OSError:  # no directory yet (nothing recorded), or unreadable: nothing to prune
        return []
    for path in entries:
        if not path.name.endswith(RECORDING_SUFFIXES):
            continue
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((stat.st_mtime, stat.st_size, path))
    found.sort()
    return found


def prune_recordings(directory: Path, max_age_days: float | None, max_mb: float | None,
                     keep: Iterable[Path] = (), now: float | None = None) -> Pruned:
    """Remove recordings older than ``max_age_days``, then the oldest until
    the rest fit in ``max_mb`` (either None: no such limit). ``keep`` and any
    file written to in the last ten minutes stay, whatever the limits say."""
    pruned = Pruned()
    if max_age_days is None and max_mb is None:
        return pruned
    now = time.time() if now is None else now
    kept = {path.resolve() for path in keep}
    files = _recordings(directory)
    total = sum(size for _, size, _ in files)
    cap = None if max_mb is None else max_mb * 1024 * 1024
    for modified, size, path in files:
        old = max_age_days is not None and now - modified > max_age_days * 86400
        over = cap is not None and total > cap
        if not (old or over):
            continue
        if now - modified < _BUSY_SECONDS or path.resolve() in kept:
            continue
        try:
            path.unlink()
        except OSError:
            continue
        total -= size
        pruned.removed.append(path)
        pruned.freed += size
    return pruned
