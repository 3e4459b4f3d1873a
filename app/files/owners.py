"""Which process owns a row another process may find: ``host:pid``, and
whether that process is still alive. One rule for the ledger's claims
(``app/ledger/sqlite.py``) and the store's holds on a conversation
(``app/store/holds.py``).

A process on this host is alive while its pid exists (signal 0; one we may
not signal is someone's, so alive). One on another host (a data file on a
shared disk) cannot be looked at from here: it is taken to be alive, so
nothing it holds is taken from it on a guess.
"""

from __future__ import annotations

import os
import socket

__all__ = ["this_owner", "alive"]

_OWNER: tuple[int, str] = (0, "")


def this_owner() -> str:
    """``host:pid`` of this process, made once per process (a claim is on the
    hot path of every call; asking the kernel for the host name costs more
    than the rest of the claim's Python)."""
    global _OWNER
    pid = os.getpid()
    if _OWNER[0] != pid:  # first use, or a forked child
        _OWNER = (pid, f"{socket.gethostname()}:{pid}")
    return _OWNER[1]


def alive(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True  # cannot tell: assume it is
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True
