"""A turn's request, recorded as what it adds to the turn's before it.

Each request carries the whole history, so a recording that held every
request whole grew with the square of the conversation: at 500 exchanges a
request is ~430 KB, and writing it (its JSON a piece at a time, then
redacted) took ~30 ms of each round of an exchange, on the event loop
(``make bench-long``'s live session). So a ``turn`` marker's ``request``
holds, for each list the request before it in the same file also held
(``messages``, ``input``, ``contents``, ``tools``), only what follows the
items the two share at their start; ``same_start`` says how many (``{"messages":
998, "tools": 3}``). ``read_recording`` puts each request back whole
(``restore``), so a replay or an audit reads what was sent. A writer's first
request (a new file, or a process appending to an older one) is whole.
"""

from __future__ import annotations

from typing import Any

from ..stream.identical import same_start

__all__ = ["shorten", "restore", "SAME_START"]

#: The marker's field naming, for each list of its request, how many items come first from the request before.
SAME_START = "same_start"


def shorten(request: dict[str, Any], before: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, int]]:
    """``request`` without the items each of its lists shares at its start with ``before``'s, and how
    many each (none shared: ``request`` itself and an empty dict)."""
    if before is None:
        return request, {}
    same: dict[str, int] = {}
    short = dict(request)
    for key, value in request.items():
        earlier = before.get(key)
        if isinstance(value, list) and isinstance(earlier, list):
            count = _common_start(earlier, value)
            if count:
                same[key] = count
                short[key] = value[count:]
    return (short, same) if same else (request, {})


def _common_start(earlier: list[Any], later: list[Any]) -> int:
    # the very objects first, in C (a builder gives the last request's items again, ``dialects/built.py``)
    count = same_start(earlier, later)
    for old, new in zip(earlier[count:], later[count:], strict=False):
        if old != new:
            break
        count += 1
    return count


def restore(request: Any, same: Any, before: dict[str, Any] | None) -> Any:
    """``request`` whole again: each list named in ``same`` led by that many items of ``before``'s.
    What cannot be put back (no request before it in the file, a count that is not one, a list
    that is not one) is left as written: a damaged or hostile file reads, it does not raise."""
    if not isinstance(request, dict) or not isinstance(same, dict) or before is None:
        return request
    whole = dict(request)
    for key, count in same.items():
        earlier, rest = before.get(key), request.get(key)
        if isinstance(earlier, list) and isinstance(rest, list) and isinstance(count, int) \
                and not isinstance(count, bool) and count >= 0:
            whole[key] = earlier[:count] + rest
    return whole
