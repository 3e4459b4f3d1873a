"""A PNG whose ancillary chunk has a bad checksum, mended as libpng mends it.

Why: libpng (behind browsers and most image stacks) discards an ancillary
chunk (a colour profile, text, EXIF: any chunk whose name starts lowercase)
whose CRC does not match and draws the image; Pillow refuses the whole file.
Real tools send such files: server-everything's ``get-tiny-image`` MCP logo
has an ``iCCP`` chunk with a bad CRC. Dropping just those chunks keeps the
check strict where it matters: a critical chunk (``IHDR``, ``IDAT``, ``IEND``,
…) with a bad CRC, or a file cut short, is still refused. Hand-written because
it is a walk over length-type-data-CRC records (PNG spec §5.3) that no
maintained library offers on its own.
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["SIGNATURE", "without_broken_ancillary"]

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def without_broken_ancillary(data: bytes) -> tuple[bytes, list[str]]:
    """The PNG without its ancillary chunks whose CRC is wrong, and their names
    (none dropped: the bytes as they came). Anything malformed is left as it
    is, for the decoder to refuse."""
    if not data.startswith(SIGNATURE):
        return data, []
    kept = [SIGNATURE]
    dropped: list[str] = []
    at = len(SIGNATURE)
    while at + 12 <= len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        end = at + 12 + length
        if end > len(data):
            return data, []  # cut short: not ours to mend
        kind = data[at + 4:at + 8]
        (crc,) = struct.unpack(">I", data[end - 4:end])
        ancillary = bool(kind[0] & 0x20)
        if ancillary and zlib.crc32(data[at + 4:end - 4]) != crc:
            dropped.append(kind.decode("latin-1"))
        else:
            kept.append(data[at:end])
        at = end
        if kind == b"IEND":
            break
    if not dropped:
        return data, []
    return b"".join(kept) + data[at:], dropped
