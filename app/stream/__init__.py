"""The sans-I/O core: bytes → SSE frames → neutral events → ordered blocks.

Nothing here does I/O, reads a clock, or imports httpx, textual or sqlite; a
test enforces it. Everything else in callstream is built and tested on top.
"""

from __future__ import annotations

from app.stream.lazy import lazy_exports

#: ``typing`` is not imported for this (mypy reads any name ``TYPE_CHECKING``
#: as the real one): ``callstream --help`` reaches this package and needs
#: nothing of it but ``DIALECT_NAMES``.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .assembler import BlockAdded, BlockChanged, CallClosed, TurnClosed, Update
    from .blocks import (
        ANSWERED,
        DISPATCHED,
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
        dispatched,
        not_run_words,
    )
    from .dialects import DIALECTS
    from .parser import StreamParser, assemble
    from .sse import SSEDecoder, SSEEvent
    from .strictjson import StrictJSONError, parse_arguments

#: The wire formats, by the names the config and ``--dialect`` use (the
#: dialects package maps each to its module; a test keeps the two equal).
DIALECT_NAMES = ("openai-chat", "openai-responses", "anthropic", "gemini")

#: Where each name lives: a command that needs one piece (``inert`` for a
#: printed line, ``blocks`` for a stored turn) does not import the dialects,
#: the assembler and the SSE decoder with it.
__getattr__ = lazy_exports(__name__, {
    ".assembler": ("BlockAdded", "BlockChanged", "CallClosed", "TurnClosed", "Update"),
    ".blocks": ("TERMINAL_STATES", "PENDING_APPROVAL", "ANSWERED", "DISPATCHED", "dispatched", "not_run_words",
                "Block", "CallState", "Outcome", "ReasoningBlock",
                "TextBlock", "ToolCallBlock", "Turn", "block_from_record", "block_record"),
    ".dialects": ("DIALECTS",),
    ".parser": ("StreamParser", "assemble"),
    ".sse": ("SSEDecoder", "SSEEvent"),
    ".strictjson": ("StrictJSONError", "parse_arguments"),
})

__all__ = [
    "DIALECT_NAMES",
    "block_from_record",
    "block_record",
    "TERMINAL_STATES",
    "PENDING_APPROVAL",
    "ANSWERED",
    "DISPATCHED",
    "dispatched",
    "not_run_words",
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
