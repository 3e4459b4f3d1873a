"""The sans-I/O core: bytes → SSE frames → neutral events → ordered blocks.

Nothing here does I/O, reads a clock, or imports httpx, textual or sqlite; a
test enforces it. Everything else in callstream is built and tested on top.
"""

from __future__ import annotations

from .assembler import BlockAdded, BlockChanged, CallClosed, TurnClosed, Update
from .blocks import (
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

__all__ = [
    "block_from_record",
    "block_record",
    "TERMINAL_STATES",
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
