"""Text kept as appended pieces, adjacent small pieces joined as they pile up.

A stream's argument buffer, a growing prose block and a forming string
value all grow by deltas of a few characters. Kept one ``str`` per delta, a
megabyte in 4-character fragments is a quarter of a million objects (about
15 bytes of memory per byte of text, and an allocator left fragmented by the
event dicts in between). Kept as a list where every ``JOIN_EVERY`` trailing
pieces are joined into one, each character is copied once more than a plain
list would copy it, the list stays short, and the order never changes.

The joined pieces are joined again once they reach ``BIG`` characters in
all: a buffer of a megabyte is then a few pieces of ``BIG`` or more, each a
block glibc maps on its own (``files.heap`` fixes that threshold) and gives
back when it is freed, not a thousand one-kilobyte blocks in the heap, whose
hole, once the buffer is joined or replaced, stays resident beside it and its
parse (a 1 MB call's argument buffer left 1 MB of holes in the heap at the
peak of ``make bench-memory``).

Joining adjacent pieces is all this does: nothing is parsed, decoded or
stripped (the assembler's rule: fragments are opaque strings in arrival
order).
"""

from __future__ import annotations

__all__ = ["BIG", "JOIN_EVERY", "append_piece"]

#: Trailing pieces joined into one once this many have piled up.
JOIN_EVERY = 64

#: Joined pieces since the last piece this long are joined into one once they reach it
#: (``files.heap.THRESHOLD``: 128 KiB, the size from which a block is mapped on its own).
BIG = 128 * 1024


def append_piece(parts: list[str], piece: str, loose: int) -> int:
    """Append ``piece`` to ``parts``; ``loose`` is how many trailing pieces
    are not yet joined (the return value is the new count). A count that is
    wrong (the list was cleared or replaced meanwhile) costs a join of fewer
    or more adjacent pieces, never a change of the text."""
    parts.append(piece)
    loose += 1
    if loose >= JOIN_EVERY:
        parts[-loose:] = ["".join(parts[-loose:])]
        count = size = 0
        for joined in reversed(parts):  # the joined pieces since the last big one
            if len(joined) >= BIG:
                break
            count += 1
            size += len(joined)
        if size >= BIG and count > 1:
            parts[-count:] = ["".join(parts[-count:])]
        return 0
    return loose
