"""Attachments kept once, by content hash, beside the transcript file.

``<data dir>/attachments/ab/abcdef…``: the same bytes attached twice (in one
conversation or many) are one file. The transcript keeps a reference (name,
type, size, pixels, digest: ``Attachment.ref``); the bytes are read back when
a conversation is continued, since the next request sends them again. A file
is written under a temporary name and renamed, so a reader never sees half of
one. Deleting a conversation removes the files no other conversation names
(``unshared``).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ..stream.attachments import Attachment

__all__ = ["AttachmentFiles"]

_DIGEST = re.compile(r"[0-9a-f]{64}")


class AttachmentFiles:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        if not _DIGEST.fullmatch(digest):
            raise ValueError(f"not an attachment digest: {digest[:80]!r}")
        return self.root / digest[:2] / digest

    def put(self, item: Attachment) -> Path:
        """Keep the bytes (once: a digest already here is not written again)."""
        target = self.path(item.digest)
        if target.exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(item.data)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return target

    def load(self, ref: dict[str, Any]) -> Attachment:
        """The attachment a transcript reference names; a missing file loads
        as empty bytes under its name (the reference is kept, the model is
        told by the text part that nothing came)."""
        digest = str(ref.get("digest") or "")
        try:
            data = self.path(digest).read_bytes()
        except (OSError, ValueError):
            data = b""
        width, height = ref.get("width"), ref.get("height")
        return Attachment(str(ref.get("name") or "attachment"), str(ref.get("media_type") or "text/plain"),
                          int(ref.get("size") or len(data)), digest, data,
                          width if isinstance(width, int) else None, height if isinstance(height, int) else None,
                          ref.get("note") if isinstance(ref.get("note"), str) else None)

    def remove(self, digests: set[str]) -> int:
        """Remove these files (those no conversation names any more); how many went."""
        gone = 0
        for digest in digests:
            try:
                self.path(digest).unlink()
                gone += 1
            except (OSError, ValueError):
                continue
        return gone
