"""A user message's parts as every wire carries them, read back into
attachments, so the demo model can say what it received.

Each dialect's file parts (chat ``image_url`` / ``file``, Responses
``input_image`` / ``input_file``, Anthropic ``image`` / ``document``, Gemini
``inlineData``) and the text part a text file is sent as (``[file NAME]`` and
its text) become ``Attachment``s, checked as an attached file is
(``files.attach.from_bytes``: type from the bytes, an image's pixels). The
user-side message that carries a tool's images on a wire whose tool results
take none (``TOOL_IMAGES``) gives them back to the tool result before it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

from ...files.attach import AttachError, from_bytes
from ...stream.attachments import Attachment
from ...stream.history import Entry, ToolResult, User

__all__ = ["user_of", "attachment_of", "TOOL_IMAGES"]

#: How the words before a tool's images begin (``requests_common.tool_images_words``).
TOOL_IMAGES = "[The image"


def _decoded(data: Any, media_type: str, name: str) -> Attachment | None:
    if not isinstance(data, str):
        return None
    if data.startswith("data:") and "," in data:
        head, data = data.split(",", 1)
        media_type = head[5:].split(";", 1)[0] or media_type
    try:
        raw = base64.b64decode(data, validate=True)
        return from_bytes(raw, name)
    except (binascii.Error, ValueError) as exc:
        reason = str(exc) if isinstance(exc, AttachError) else "not base64"
        return Attachment(name, media_type, 0, hashlib.sha256(b"").hexdigest(), b"", note=reason)


def attachment_of(part: dict[str, Any], number: int) -> Attachment | None:
    """The attachment one part carries (None: the part is not a file)."""
    name = f"attachment {number + 1}"
    kind = part.get("type")
    if kind == "image_url":
        url = part.get("image_url")
        return _decoded(url.get("url") if isinstance(url, dict) else url, "image/png", name)
    if kind == "file" and isinstance(part.get("file"), dict):
        file = part["file"]
        return _decoded(file.get("file_data"), "application/pdf", str(file.get("filename") or name))
    if kind == "input_image":
        return _decoded(part.get("image_url"), "image/png", name)
    if kind == "input_file":
        return _decoded(part.get("file_data"), "application/pdf", str(part.get("filename") or name))
    if kind in ("image", "document") and isinstance(part.get("source"), dict):
        source = part["source"]
        title = str(part.get("title") or name)
        if source.get("type") == "text":
            text = str(source.get("data") or "").encode()
            return Attachment(title, "text/plain", len(text), hashlib.sha256(text).hexdigest(), text)
        return _decoded(source.get("data"), str(source.get("media_type") or ""), title)
    inline = part.get("inlineData") or part.get("inline_data")
    if isinstance(inline, dict):
        return _decoded(inline.get("data"), str(inline.get("mimeType") or inline.get("mime_type") or ""), name)
    return None


def _text_file(text: str) -> Attachment | None:
    """A text file as the request builders send it: ``[file NAME]`` and its text."""
    if not text.startswith("[file ") or "]\n" not in text:
        return None
    head, body = text.split("\n", 1)
    data = body.encode()
    return Attachment(head[6:-1], "text/plain", len(data), hashlib.sha256(data).hexdigest(), data)


def user_of(parts: list[Any], history: list[Entry]) -> User | None:
    """The user message these parts make, or None when they are the images
    of the tool results just before (given back to those results)."""
    texts: list[str] = []
    files: list[Attachment] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        found = attachment_of(part, len(files))
        if found is not None:
            files.append(found)
            continue
        text = part.get("text")
        if isinstance(text, str) and part.get("type") in ("text", "input_text", None):
            as_file = _text_file(text)
            if as_file is not None:
                files.append(as_file)
            else:
                texts.append(text)
    joined = "".join(texts)
    if joined.startswith(TOOL_IMAGES) and history and isinstance(history[-1], ToolResult):
        history[-1].images.extend(files)
        return None
    return User(joined, files)
