"""The sans-I/O core: bytes → SSE frames → neutral events → ordered blocks.

Nothing here does I/O, reads a clock, or imports httpx, textual or sqlite; a
test enforces it. Everything else in callstream is built and tested on top.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assembler import BlockAdded, BlockChanged, CallClosed, TurnClosed, Update
    from .blocks import (
        PENDING_APPROVAL,
        TERMINAL_STATES,
        Block,
        CallState,
        Outcome,
        ReasoningBlock,
        TextBlock,
        ToolCallBlock,
        Turn,
        block_from_record,
        block_record,
    )
    from .dialects import DIALECTS
    from .parser import StreamParser, assemble
    from .sse import SSEDecoder, SSEEvent
    from .strictjson import StrictJSONError, parse_arguments

#: Where each name lives: a command that needs one piece (``inert`` for a
#: printed line, ``blocks`` for a stored turn) does not import the dialects,
#: the assembler and the SSE decoder with it.
_WHERE = {
    **dict.fromkeys(("BlockAdded", "BlockChanged", "CallClosed", "TurnClosed", "Update"), ".assembler"),
    **dict.fromkeys(("TERMINAL_STATES", "PENDING_APPROVAL", "Block", "CallState", "Outcome", "ReasoningBlock",
                     "TextBlock",
                     "ToolCallBlock", "Turn", "block_from_record", "block_record"), ".blocks"),
    "DIALECTS": ".dialects",
    **dict.fromkeys(("StreamParser", "assemble"), ".parser"),
    **dict.fromkeys(("SSEDecoder", "SSEEvent"), ".sse"),
    **dict.fromkeys(("StrictJSONError", "parse_arguments"), ".strictjson"),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "block_from_record",
    "block_record",
    "TERMINAL_STATES",
    "PENDING_APPROVAL",
    "CallState",
    "DIALECTS",
    "Block",
    "BlockAdded",
    "BlockChanged",
    "CallClosed",
    "Outcome",
    "ReasoningBlock",
    "SSEDecoder",
    "SSEEvent",
    "StreamParser",
    "StrictJSONError",
    "TextBlock",
    "ToolCallBlock",
    "Turn",
    "TurnClosed",
    "Update",
    "assemble",
    "parse_arguments",
]
