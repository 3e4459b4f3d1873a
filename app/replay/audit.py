"""``callstream audit``: what dispatching on partial arguments would have done.

For every call in a recording (or a raw ``.sse`` capture), find the moments
— fragment boundaries, the only moments a dispatcher could act — at which a
tolerant decode of the buffer (partial-json-parser, what an eager
dispatcher would use) already yields every required field; take the first,
and compare what would have run then with what the call finally said:

- ``never completed``: the call never ended; an eager dispatcher ran it anyway;
- ``key repeated``: a key the early dispatch used is given again later;
- ``escape resolved differently``: the buffer stopped inside an escape and the
  early value is not what the escape became;
- ``value extended``: a value the early dispatch used grew (``"la"`` → ``"late"``);
- ``optional field added``: the early arguments lacked a field the call has;
- ``identical``: the early arguments were the final ones.

The first class that applies wins, in that order. Required fields come from
the tool's schema in the recorded request; a raw capture has none, so there
every field of the final call counts as required. Which moments qualify is
found in one linear pass with the incremental scanner (a key whose value has
begun); partial-json-parser then decodes just those prefixes.
"""

from __future__ import annotations

import contextlib
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import partial_json_parser

from ..demo.dialects import PARSERS
from ..store.recording import Recording, read_recording
from ..stream import BlockChanged, CallClosed, StreamParser, ToolCallBlock
from ..stream.jsonscan import JSONScanner
from ..stream.limits import loads
from ..stream.preview import format_value

__all__ = ["CLASSES", "CallAudit", "audit_recording", "audit_files", "summarise"]

CLASSES = ["never completed", "key repeated", "escape resolved differently", "value extended",
           "optional field added", "identical"]

DisplayLookup = Callable[[str], list[tuple[str, str]]]


@dataclass(slots=True)
class CallAudit:
    file: str
    turn: int | None
    name: str
    required: list[str]
    #: Fragment boundaries (1-based counts of fragments) where the decode had every required field.
    moments: list[int] = field(default_factory=list)
    fragments: int = 0
    early: dict[str, Any] | None = None
    final: dict[str, Any] | None = None
    klass: str | None = None
    classes: list[str] = field(default_factory=list)
    #: Seconds from the first such moment to the call's end (None without real timing).
    gap: float | None = None
    examples: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {"file": self.file, "turn": self.turn, "tool": self.name, "required": self.required,
                "fragments": self.fragments, "moments": len(self.moments),
                "first_moment": self.moments[0] if self.moments else None, "class": self.klass,
                "classes": self.classes, "gap_seconds": self.gap, "example": self.examples[0] if self.examples
                else None}


def _required(spec_required: Any, final: dict[str, Any] | None) -> list[str]:
    if isinstance(spec_required, list):
        return [str(r) for r in spec_required]
    return sorted(final) if final else []


def _decode(prefix: str) -> dict[str, Any] | None:
    try:
        value = partial_json_parser.loads(prefix)
    except Exception:  # a tolerant parser that gives up is "not yet"
        return None
    return value if isinstance(value, dict) else None


def _pairs(text: str) -> list[tuple[str, Any]] | None:
    captured: list[list[tuple[str, Any]]] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        captured.append(pairs)
        return dict(pairs)

    try:
        loads(text, json.JSONDecoder(object_pairs_hook=hook))
    except (ValueError, RecursionError):
        return None
    return captured[-1] if captured else None


def _lenient_final(call: ToolCallBlock) -> dict[str, Any] | None:
    if call.final and call.arguments is not None:
        return call.arguments
    if not call.ended:
        return None
    with contextlib.suppress(ValueError, RecursionError):
        value = loads(call.arguments_raw or "{}")
        return value if isinstance(value, dict) else None
    return None


def _classify(audit: CallAudit, call: ToolCallBlock, escape_open: bool) -> None:
    early, final = audit.early or {}, audit.final
    classes: list[str] = []
    if final is None:
        classes.append("never completed")
    else:
        pairs = _pairs(call.arguments_raw) or []
        seen: dict[str, int] = {}
        for key, _ in pairs:
            seen[key] = seen.get(key, 0) + 1
        if any(seen.get(key, 0) > 1 for key in early):
            classes.append("key repeated")
        changed = [k for k in early if k in final and early[k] != final[k]]
        if escape_open and changed:
            classes.append("escape resolved differently")
        for key in changed:
            before, after = early[key], final[key]
            if isinstance(before, str) and isinstance(after, str) and after.startswith(before):
                classes.append("value extended")
                break
            if isinstance(before, int | float) and isinstance(after, int | float) and \
                    str(after).startswith(str(before)):
                classes.append("value extended")
                break
        if any(k not in early for k in final):
            classes.append("optional field added")
        if early == final:
            classes.append("identical")
        if not classes:
            classes.append("value extended" if changed else "identical")
    audit.classes = [c for c in CLASSES if c in classes]
    audit.klass = audit.classes[0]


def _example(audit: CallAudit, display: DisplayLookup | None) -> str:
    labels = dict(display(audit.name)) if display else {}
    early, final = audit.early or {}, audit.final or {}
    parts = []
    for key in list(dict.fromkeys([*early, *final])):
        if key in early and key in final and early[key] == final[key]:
            continue
        label = labels.get(key)
        if label is None:
            parts.append("an unlisted field")
            continue
        before = repr(format_value(early[key], 40)) if key in early else "(absent)"
        after = repr(format_value(final[key], 40)) if key in final else "(never arrived)"
        parts.append(f"{label}: {before} → {after}")
    body = "; ".join(dict.fromkeys(parts)) or "no difference"
    return f"{audit.name}: {body}"


def _calls_of(recording: Recording) -> list[tuple[int | None, ToolCallBlock, list[tuple[float, str]], float | None]]:
    """Every call with its fragments (time, text) and its end time."""
    out = []
    turn: int | None = None
    parser: StreamParser | None = None
    fragments: dict[int, list[tuple[float, str]]] = {}
    ends: dict[int, float] = {}

    def close() -> None:
        nonlocal parser
        if parser is None:
            return
        result = parser.close()
        for index, block in enumerate(result.blocks):
            if isinstance(block, ToolCallBlock) and not block.provider_executed:
                out.append((turn, block, fragments.get(index, []), ends.get(index)))
        parser = None

    dialect = recording.dialect
    for at, kind, data in recording.events:
        if kind == "m":
            marker = data.get("kind")
            if marker == "attempt":
                close()
                turn = data.get("turn")
                parser = StreamParser(dialect)
                fragments, ends = {}, {}
            elif marker in ("end", "http", "user", "results"):
                close()
            elif marker == "switch":  # /model or /provider: the streams after it are in its dialect
                close()
                dialect = _switched(data, dialect)
            continue
        if parser is None:
            parser = StreamParser(dialect)
            fragments, ends = {}, {}
        for update in parser.feed(data, at):
            if isinstance(update, BlockChanged) and update.delta:
                block = parser.blocks[update.index]
                if isinstance(block, ToolCallBlock):
                    fragments.setdefault(update.index, []).append((at, update.delta))
            elif isinstance(update, CallClosed):
                ends[update.index] = at
    close()
    return out


def _switched(marker: dict[str, Any], dialect: str) -> str:
    named = marker.get("dialect")
    return named if isinstance(named, str) and named in PARSERS else dialect


def _schemas(recording: Recording) -> dict[str, dict[str, Any]]:
    schemas: dict[str, dict[str, Any]] = {}
    dialect = recording.dialect
    for _, kind, data in recording.events:
        if kind == "m" and data.get("kind") == "switch":
            dialect = _switched(data, dialect)
        elif kind == "m" and data.get("kind") == "turn" and isinstance(data.get("request"), dict):
            with contextlib.suppress(Exception):
                for spec in PARSERS[dialect](data["request"]).tools:
                    schemas[spec.name] = spec.parameters
    return schemas


def audit_recording(path: Path, display: DisplayLookup | None = None) -> list[CallAudit]:
    recording = read_recording(path)
    if recording.dialect == "auto":
        # a raw capture: let the parser detect, then re-read with the dialect it found
        probe = StreamParser()
        for _, kind, data in recording.events:
            if kind == "o":
                probe.feed(data)
        recording.header["dialect"] = probe.dialect if probe.dialect != "unknown" else "openai-chat"
    schemas = _schemas(recording)
    audits = []
    for turn, call, fragments, end in _calls_of(recording):
        final = _lenient_final(call)
        known = call.name in schemas
        spec_required = schemas[call.name].get("required", []) if known else None
        audit = CallAudit(str(path), turn, call.name, _required(spec_required, final), fragments=len(fragments),
                          final=final)
        scanner = JSONScanner()
        text: list[str] = []
        escape_open = False
        required = set(audit.required)
        for count, (at, fragment) in enumerate(fragments, start=1):
            text.append(fragment)
            scanner.feed(fragment)
            if not required <= scanner.top_keys:
                continue  # a required key has not even been named yet: no decode can have it
            if audit.early is None:
                early = _decode("".join(text))
                if early is None or not set(audit.required) <= set(early):
                    continue
                audit.early = early
                escape_open = scanner.in_escape
                if end is not None and not recording.raw:
                    audit.gap = max(0.0, end - at)
            audit.moments.append(count)
        if audit.early is None:
            continue  # the required fields never all arrived: nothing would have run early
        _classify(audit, call, escape_open)
        audit.examples.append(_example(audit, display))
        audits.append(audit)
    return audits


def audit_files(paths: list[Path], display: DisplayLookup | None = None) -> list[CallAudit]:
    audits: list[CallAudit] = []
    for path in paths:
        audits.extend(audit_recording(path, display))
    return audits


def summarise(audits: list[CallAudit], examples_per_class: int = 3) -> dict[str, Any]:
    counts = {klass: 0 for klass in CLASSES}
    examples: dict[str, list[str]] = {klass: [] for klass in CLASSES}
    for audit in audits:
        assert audit.klass is not None
        counts[audit.klass] += 1
        if len(examples[audit.klass]) < examples_per_class:
            examples[audit.klass].extend(audit.examples[:1])
    gaps = sorted(a.gap for a in audits if a.gap is not None)
    timing: dict[str, Any] = {"calls_timed": len(gaps)}
    if gaps:
        timing["median_seconds"] = statistics.median(gaps)
        timing["p90_seconds"] = gaps[min(len(gaps) - 1, int(round(0.9 * (len(gaps) - 1))))]
    return {"calls": len(audits), "counts": counts, "examples": {k: v for k, v in examples.items() if v},
            "gap": timing}
