"""Attachments in the callstream transcript format (version 3): each user
item carries its files whole (``data``: base64), so an export is one file
that imports on another machine. An imported file is checked as an attached
one is (``files.attach.from_bytes``: its type from the bytes, an image's
pixels and wholeness); a file whose bytes are not the ones its digest names,
or that would not be attached, is refused with a sentence."""

from __future__ import annotations

import base64
import binascii
import dataclasses
from typing import Any

from ..files.attach import AttachError, from_bytes
from ..stream.attachments import Attachment

__all__ = ["attachments_document", "attachments_of"]


def attachments_document(attachments: list[Attachment]) -> list[dict[str, Any]]:
    return [{**item.ref(), "data": str(item.b64())} for item in attachments]


def attachments_of(value: Any, where: str, damaged: type[ValueError]) -> list[Attachment]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise damaged(f"the transcript is damaged: {where}.attachments must be a list")
    found = []
    for n, ref in enumerate(value):
        place = f"{where}.attachments[{n}]"
        if not isinstance(ref, dict) or not isinstance(ref.get("data"), str) or not isinstance(ref.get("name"), str):
            raise damaged(f"the transcript is damaged: {place} needs a name and its data (base64)")
        try:
            data = base64.b64decode(ref["data"], validate=True)
            item = from_bytes(data, ref["name"][:200])
        except (binascii.Error, ValueError) as exc:
            reason = str(exc) if isinstance(exc, AttachError) else "its data is not base64"
            raise damaged(f"the transcript is damaged: {place}: {reason}") from None
        if ref.get("digest") not in (None, item.digest):
            raise damaged(f"the transcript is damaged: {place}: its bytes are not the ones its digest names")
        note = ref.get("note")
        found.append(dataclasses.replace(item, note=note if isinstance(note, str) else None))
    return found
