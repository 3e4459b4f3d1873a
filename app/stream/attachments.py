"""A file or image the person attaches (or a tool returns), as plain data.

The type is taken from the bytes, never from the name: a ``.png`` that is a
PDF is a PDF, and a file that is none of the kinds a provider takes is
refused. What each provider takes (types, size, pixels, count) is one table
here, read by the check before a request is built, so nothing that cannot be
sent costs an upload and a provider 400. Pure data, like the rest of the core:
decoding and downscaling images is ``app/files/attach.py``'s (Pillow).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .inert import inert
from .jsonwrite import LazyString

__all__ = ["TOOL_IMAGE_REF", "tool_image_line", "IMAGES_IN_TOOL_RESULTS", "tool_image_route",
           "Attachment", "Base64Text", "Limits", "LIMITS", "IMAGE_TYPES",
           "detect_media_type", "base64_size", "problems", "describe", "size_words", "first_line"]

#: How a tool result names an image it returned that is kept in the data dir (by digest): the
#: result stays text (the ledger, the card, the transcript keep it as they keep any result), and
#: the next request sends the image itself (``chat.attaching.with_tool_images``).
TOOL_IMAGE_REF = re.compile(r"\(sent to the model as an image; attachment ([0-9a-f]{64})\)")


def tool_image_line(media_type: str, size: str, digest: str) -> str:
    return f"[image: {media_type}, {size}] (sent to the model as an image; attachment {digest})"


#: The wires whose tool result takes an image itself (Anthropic's ``tool_result`` content
#: blocks); every other dialect sends a tool's image in the user-side message after the results.
IMAGES_IN_TOOL_RESULTS = frozenset({"anthropic"})


def tool_image_route(dialect: str) -> str:
    """How a tool's image reaches the model on this wire, as the card says it
    (the request builders of ``dialects/`` do what this says)."""
    if dialect in IMAGES_IN_TOOL_RESULTS:
        return "sent to the model inside the tool result"
    return (f"{dialect}'s tool results take text only: the text went as the result, the image goes to the "
            "model in the user-side message after it")


PNG, JPEG, GIF, WEBP, PDF, TEXT = "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain"
IMAGE_TYPES = frozenset({PNG, JPEG, GIF, WEBP})
_LABELS = {PNG: "PNG", JPEG: "JPEG", GIF: "GIF", WEBP: "WebP", PDF: "PDF", TEXT: "text"}


@dataclass(frozen=True, slots=True)
class Attachment:
    """What is sent: ``data`` are the bytes as the model gets them (after any
    downscale), ``digest`` their sha256 (the name they are stored under)."""

    name: str
    media_type: str
    size: int
    digest: str
    data: bytes = field(repr=False, compare=False)
    width: int | None = None
    height: int | None = None
    #: What was done to it before sending (a downscale), said to the person.
    note: str | None = None

    @property
    def kind(self) -> str:
        """``image``, ``pdf`` or ``text``: the part a dialect encodes it as."""
        if self.media_type in IMAGE_TYPES:
            return "image"
        return "pdf" if self.media_type == PDF else "text"

    def b64(self) -> Base64Text:
        """The bytes in base64, as a request body writes them: a piece at a time."""
        return Base64Text(self.data)

    def data_url(self) -> Base64Text:
        return Base64Text(self.data, f"data:{self.media_type};base64,")

    def as_text(self) -> str:
        """A text file as the model reads it: its name, then its text."""
        return f"[file {self.name}]\n{self.data.decode('utf-8', errors='replace')}"

    def ref(self) -> dict[str, object]:
        """What the transcript keeps of it (the bytes live in the data dir by digest)."""
        out: dict[str, object] = {"name": self.name, "media_type": self.media_type, "size": self.size,
                                  "digest": self.digest}
        if self.width is not None:
            out["width"], out["height"] = self.width, self.height
        if self.note:
            out["note"] = self.note
        return out


class Base64Text(LazyString):
    """An attachment's bytes as base64 (after a ``data:`` prefix), written into
    the request body a slice at a time (``jsonwrite``): a 20 MB image is never
    a 27 MB ``str`` beside its bytes, so ``ask -a`` holds little more than the
    files themselves (``make bench-attach``)."""

    __slots__ = ("data", "prefix")
    #: Raw bytes per piece: a multiple of 3, so the pieces' base64 joined is the whole's.
    SLICE = 3 * 16384

    def __init__(self, data: bytes, prefix: str = "") -> None:
        self.data = data
        self.prefix = prefix

    def pieces(self) -> Iterator[str]:
        if self.prefix:
            yield self.prefix
        view = memoryview(self.data)
        for start in range(0, len(view), self.SLICE):
            yield base64.b64encode(view[start:start + self.SLICE]).decode("ascii")

    def json_pieces(self) -> Iterator[str]:
        return self.pieces()  # base64 and a data: prefix need no escaping

    def __len__(self) -> int:
        return len(self.prefix) + 4 * ((len(self.data) + 2) // 3)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Base64Text):
            return (self.prefix, self.data) == (other.prefix, other.data)
        return isinstance(other, str) and str(self) == other

    def __hash__(self) -> int:
        return hash(str(self))

    def startswith(self, start: str) -> bool:
        return str(self).startswith(start)

    def __repr__(self) -> str:
        return f"Base64Text({len(self.data)} bytes, prefix={self.prefix!r})"


def detect_media_type(data: bytes) -> str | None:
    """The type the bytes are (their signature), or text for UTF-8 without
    NULs or escapes; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return GIF
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return WEBP
    if data.startswith(b"%PDF-"):
        return PDF
    if b"\x00" in data[:65536]:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return TEXT


#: OpenAI and Gemini state no largest side: they scale a big image themselves.
NO_SIDE_LIMIT = 1 << 30


@dataclass(frozen=True, slots=True)
class Limits:
    """One provider's documented limits for inline content in a request."""

    provider: str
    types: frozenset[str]
    image_bytes: int  # one image, its bytes before base64
    image_side: int  # the longer side, in pixels (NO_SIDE_LIMIT: the provider scales, it does not refuse)
    images: int  # images in one request
    request_bytes: int  # all inline content of one request
    source: str  # where the provider says so
    #: The request limit is on the HTTP body, so the base64 (4/3 of the bytes) is what counts.
    request_in_base64: bool = False
    #: Past this many images in one request, ``many_side`` is the longer side allowed (None: no such rule).
    many_images: int | None = None
    many_side: int = NO_SIDE_LIMIT

    def side_for(self, images: int) -> int:
        """The longest side allowed when the request carries ``images`` images."""
        if self.many_images is not None and images > self.many_images:
            return min(self.image_side, self.many_side)
        return self.image_side


_MB = 1024 * 1024
_ALL = frozenset({PNG, JPEG, GIF, WEBP, PDF, TEXT})

#: Per dialect, from each provider's documentation (checked against it for issue 28 item 2; the
#: pages are named in ``source``). Where two figures are documented the stricter is taken.
#: - OpenAI (platform.openai.com/docs/guides/images-vision, "Image input requirements"): PNG,
#:   JPEG, WebP, non-animated GIF; up to 20 MB per image, 500 images and 50 MB of image bytes a
#:   request (a later revision says "50 MB total payload"; its per-image 20 MB is the stricter);
#:   no pixel limit (low detail 512×512, high detail scaled to 768 × 2000 by the provider).
#:   PDFs: platform.openai.com/docs/guides/pdf-files.
#: - Anthropic (docs.anthropic.com/en/docs/build-with-claude/vision, "Basics and limits"): 100
#:   images a request (600 on models past 200k context), 8000×8000 px, 2000×2000 px when a
#:   request carries more than 20 images; a 32 MB request size limit (the HTTP body, so base64
#:   counts); 5 MB an image (the API's own error: "image exceeds 5 MB maximum").
#: - Gemini (ai.google.dev/gemini-api/docs/image-understanding; firebase.google.com/docs/ai-logic/
#:   input-file-requirements): PNG, JPEG, WebP, HEIC, HEIF (no GIF); inline data is limited by the
#:   request, 20 MB in total, and "the file is encoded to base64 in transit"; 3,000 images a prompt
#:   on Gemini 2.5, 900 on Gemini 3 Pro (the stricter here).
LIMITS: dict[str, Limits] = {
    "openai-chat": Limits("OpenAI", _ALL, 20 * _MB, NO_SIDE_LIMIT, 500, 50 * _MB,
                          "platform.openai.com/docs/guides/images-vision (20 MB an image, 500 images, 50 MB of "
                          "images a request; PNG, JPEG, WebP, non-animated GIF); /docs/guides/pdf-files"),
    "openai-responses": Limits("OpenAI", _ALL, 20 * _MB, NO_SIDE_LIMIT, 500, 50 * _MB,
                               "platform.openai.com/docs/guides/images-vision; /docs/guides/pdf-files"),
    "anthropic": Limits("Anthropic", _ALL, 5 * _MB, 8000, 100, 32 * _MB,
                        "docs.anthropic.com/en/docs/build-with-claude/vision (5 MB an image, 8000x8000 px, "
                        "2000x2000 px past 20 images, 100 images, 32 MB a request)",
                        request_in_base64=True, many_images=20, many_side=2000),
    "gemini": Limits("Gemini", frozenset({PNG, JPEG, WEBP, PDF, TEXT}), 20 * _MB, NO_SIDE_LIMIT, 900, 20 * _MB,
                     "ai.google.dev/gemini-api/docs/image-understanding (inline data: 20 MB a request, "
                     "base64 included; PNG, JPEG, WebP, HEIC, HEIF — no GIF; 900 images on Gemini 3 Pro)",
                     request_in_base64=True),
}


def base64_size(size: int) -> int:
    """The length of ``size`` bytes in base64."""
    return 4 * ((size + 2) // 3)


def problems(dialect: str, attachments: list[Attachment]) -> list[str]:
    """Why these attachments cannot go in one request to this dialect, one
    sentence each (empty: they can). An image over the size or pixel limit is
    the downscaler's to fix first; what is left here is refused."""
    limits = LIMITS.get(dialect)
    if limits is None:
        return []
    found: list[str] = []
    total = 0
    images = sum(1 for item in attachments if item.kind == "image" and item.media_type in limits.types)
    side = limits.side_for(images)
    for item in attachments:
        total += base64_size(item.size) if limits.request_in_base64 else item.size
        label = _LABELS.get(item.media_type, item.media_type)
        if item.media_type not in limits.types:
            found.append(f"{item.name}: {limits.provider} does not take {label} files.")
            continue
        if item.kind == "image":
            if item.size > limits.image_bytes:
                found.append(f"{item.name}: {size_words(item.size)} is over {limits.provider}'s "
                             f"{size_words(limits.image_bytes)} for one image.")
            if max(item.width or 0, item.height or 0) > side:
                many = f" when a request carries more than {limits.many_images} images" if side < limits.image_side \
                    else ""
                found.append(f"{item.name}: {item.width}×{item.height} is over {limits.provider}'s "
                             f"{side} pixels a side{many}.")
    if images > limits.images:
        found.append(f"{images} images is over {limits.provider}'s {limits.images} in one request.")
    if total > limits.request_bytes:
        encoded = " in base64" if limits.request_in_base64 else ""
        found.append(f"The attachments come to {size_words(total)}{encoded}, over {limits.provider}'s "
                     f"{size_words(limits.request_bytes)} in one request.")
    return found


def size_words(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < _MB:
        return f"{size / 1024:.1f} KB"
    return f"{size / _MB:.1f} MB"


def describe(item: Attachment) -> str:
    """The chip's words: name, type, size, pixels."""
    parts = [inert(item.name), _LABELS.get(item.media_type, item.media_type), size_words(item.size)]
    if item.width is not None:
        parts.append(f"{item.width}×{item.height}")
    return " · ".join(parts)


def first_line(item: Attachment) -> str:
    """A text file's first line (at most 200 characters), for the demo's answer."""
    text = item.data[:4096].decode("utf-8", errors="replace")
    return text.split("\n", 1)[0][:200]
