"""``callstream inspect FILE``: assemble a recorded stream and show its blocks, running nothing."""

from __future__ import annotations

import argparse
import sys

from ..stream import DIALECT_NAMES
from ..stream.inert import inert, inert_json
from .common import fail

TYPE_CHECKING = False  # typing is not imported on the --help path
if TYPE_CHECKING:
    from ..stream import ToolCallBlock, Turn

__all__ = ["register", "run", "format_turn"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    inspect = sub.add_parser(
        "inspect",
        help="assemble a recorded stream (raw SSE) and show its blocks, running nothing",
        description="Assemble a recorded provider stream (raw SSE bytes) into its blocks and outcome. "
        "Nothing is dispatched.",
    )
    inspect.add_argument("file", help="a file holding the raw SSE body of one streamed response")
    inspect.add_argument(
        "--dialect",
        default="auto",
        help=f"wire format: {', '.join(DIALECT_NAMES)} or auto (default: detect from the first frames)",
    )
    inspect.add_argument("--json", action="store_true", help="print the turn as one JSON document")


def run(args: argparse.Namespace) -> int:
    return _inspect(args.file, args.dialect, args.json)


def _inspect(file: str, dialect: str, as_json: bool) -> int:
    from pathlib import Path

    from ..stream import assemble

    if dialect != "auto" and dialect not in DIALECT_NAMES:
        return fail(f"unknown dialect {dialect!r} (choose one of {', '.join(DIALECT_NAMES)}, auto)")
    try:
        data = Path(file).read_bytes()
    except OSError as exc:
        return fail(f"cannot read {file}: {exc.strerror or exc}")
    turn = assemble([data], dialect)
    if as_json:
        sys.stdout.write(inert_json(turn.to_dict()))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_turn(turn))
    return 0


def format_turn(turn: Turn) -> str:
    """The human form of ``inspect``: blocks in order, then the outcome."""
    from ..stream import ToolCallBlock

    lines: list[str] = []
    for block in turn.blocks:
        if isinstance(block, ToolCallBlock):
            lines.extend(_format_call(block))
        else:
            label = "text" if block.kind == "text" else "reasoning"
            lines.append(f"── {label} ──")
            lines.append(inert(block.text))
        lines.append("")
    summary = f"outcome: {turn.outcome}"
    if turn.stop_reason:
        summary += f"  (finish reason: {inert(turn.stop_reason)})"
    lines.append(f"dialect: {turn.dialect}")
    lines.append(summary)
    if turn.error:
        lines.append(f"error: {inert(turn.error)}")
    return "\n".join(lines) + "\n"


def _format_call(call: ToolCallBlock) -> list[str]:
    head = f"── tool call: {inert(call.name or '(no name)')}"
    if call.id:
        head += f"  [{inert(call.id)}]"
    if call.provider_executed:
        head += "  (run by the provider)"
    lines = [head + " ──"]
    if call.final and call.arguments is not None:
        import json

        pretty = json.dumps(call.arguments, ensure_ascii=False, indent=2)
        lines.extend("  " + inert(line) for line in pretty.splitlines())
        lines.append("  final: complete and strictly parsed")
    else:
        raw = call.arguments_raw
        shown = raw if len(raw) <= 2000 else raw[:2000] + f"… ({len(raw)} characters)"
        lines.append("  raw arguments: " + (inert(shown) if raw else "(none)"))
        if call.provider_executed and call.problem is None:
            lines.append("  not for local dispatch")
        else:
            lines.append(f"  not final: {inert(call.problem or 'not ended')}")
    return lines
