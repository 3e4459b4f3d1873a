"""Big buffers go back to the system when they are freed (glibc's malloc).

A call with 10 MB of arguments passes through several buffers of its size in
turn (the joined fragments, the parsed value, a request body's string, a
tool's input), each freed before the next is made. glibc serves a block of
that size with its own ``mmap`` (given back on ``free``) only until the first
such block is freed: the mmap threshold then rises to that size, later blocks
come from the heap (the main one, or a worker thread's arena, which the next
thread cannot reuse), and a freed hole in it stays resident. Measured with
``make bench-memory``, that is about 2 bytes of peak RSS per argument byte.
Fixing the threshold keeps every block of ``THRESHOLD`` or more in its own
mapping, so what is freed is gone from the RSS at once; small objects are
untouched (Python's own allocator serves them). And every thread that
mallocs gets an arena of its own (up to eight per core): the ledger's and
the store's worker threads each keep the pages a call's work touched there,
another megabyte or two of RSS per thread that no other thread reuses.
``ARENAS`` bounds that (callstream's threads wait on sqlite, pipes and
sockets, not on malloc's lock).

Elsewhere than glibc (musl, macOS) this does nothing: ``mallopt`` is
glibc's.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

__all__ = ["ARENAS", "THRESHOLD", "return_big_blocks", "give_back"]

#: Blocks of at least this many bytes are mapped on their own (glibc's default
#: before it starts adjusting; 128 KiB).
THRESHOLD = 128 * 1024

#: How many malloc arenas the process's threads share (glibc's default: eight per core).
ARENAS = 1

#: ``M_MMAP_THRESHOLD`` and ``M_ARENA_MAX`` in glibc's malloc.h.
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


@functools.cache
def return_big_blocks() -> bool:
    """Fix glibc's mmap threshold at ``THRESHOLD`` and its arenas at
    ``ARENAS`` for this process (once; ``ctypes`` is imported only here,
    after start-up; a thread that already has an arena keeps it). True if
    it took."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, THRESHOLD)) & bool(mallopt(_M_ARENA_MAX, ARENAS))


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


def give_back() -> None:
    """The C allocator's free memory handed back to the system (glibc's ``malloc_trim``; elsewhere
    nothing): after many objects were freed at once (a long sitting's widgets, collected), the holes
    they leave in glibc's heap stay resident otherwise, so the process's RSS stays at the most it ever
    held."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
