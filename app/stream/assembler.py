"""Neutral events → an ordered list of blocks, and the turn's outcome.

One ``Assembler`` per stream (per attempt). Argument fragments are appended as
opaque strings keyed by the call's slot; nothing is parsed until the call ends
(brief chapters 1–2). Every known server quirk is normalised here and nowhere
else (DESIGN.md "Server quirks"), each rule small enough to state:

- repeated id or name on every chunk: an equal name or id is ignored;
- name split across chunks: a different name fragment is appended;
- id only on the first chunk, ``""`` later: empty ids are ignored;
- missing slot: a new id opens a new call, otherwise the fragment belongs to
  the most recent open call;
- slot always 0 while ids differ: a new id on an occupied slot is a new call;
- ``{}`` placeholder then the real object: the placeholder is dropped;
- the whole arguments re-sent in the final chunk: an exact restatement of a
  buffer that already parses is dropped;
- arguments as a JSON value instead of a string: taken as the whole arguments;
- no-argument tools with no delta at all: ``{}`` once the call ended cleanly;
- arguments only in the ``done`` event: taken from there.

Anything else that does not parse is left as it is and refused at the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from .blocks import Block, Outcome, ReasoningBlock, TextBlock, ToolCallBlock, Turn
from .events import (
    TRUNCATION_REASONS,
    ArgsDelta,
    CallEnded,
    CallStarted,
    Event,
    ModelReported,
    ProviderError,
    ReasoningDelta,
    ServerResult,
    StreamMalformed,
    TextDelta,
    TurnEnded,
    UsageReported,
)
from .jsonwrite import JSONText, pieces
from .limits import loads
from .restated import Restated
from .strictjson import StrictJSONError, call_arguments, parse_arguments
from .usage import Usage

__all__ = ["Assembler", "BlockAdded", "BlockChanged", "CallClosed", "TurnClosed", "Update"]


@dataclass(slots=True)
class BlockAdded:
    index: int


@dataclass(slots=True)
class BlockChanged:
    """Text appended to a prose block, or a fragment to a call's buffer."""

    index: int
    delta: str


@dataclass(slots=True)
class CallClosed:
    """A call ended: ``final`` (dispatchable) or not, with ``problem`` saying why."""

    index: int
    final: bool


@dataclass(slots=True)
class TurnClosed:
    turn: Turn


Update = BlockAdded | BlockChanged | CallClosed | TurnClosed


class Assembler:
    def __init__(self, dialect: str = "unknown") -> None:
        self.dialect = dialect
        self.blocks: list[Block] = []
        self.updates: list[Update] = []
        self._slots: dict[object, ToolCallBlock] = {}
        self._index_of: dict[int, int] = {}  # id(call) → block index
        self._open: list[ToolCallBlock] = []
        self._anon = 0
        self.terminal = False
        self.stop_reason: str | None = None
        self.provider_error: str | None = None
        self.malformed: str | None = None
        self.truncated = False
        #: True once nothing more may change the turn (terminal, error, malformed).
        self.finished = False
        self.now: float | None = None
        self._turn: Turn | None = None
        #: What the provider said the reply cost, and which model answered.
        self.usage: Usage | None = None
        self.model: str | None = None

    @property
    def open_calls(self) -> bool:
        """Whether a call is still open (an event naming an ended call's slot changes nothing)."""
        return bool(self._open)

    @property
    def open_calls_begun(self) -> bool:
        """Whether some call is open and every open one has a buffer begun (a ``.done`` that restates
        one's arguments is then a check, never their only copy)."""
        return bool(self._open) and all(call.size for call in self._open)

    # -- events ---------------------------------------------------------------

    def apply(self, event: Event) -> None:
        if self.finished:
            return
        kind = type(event)
        if kind is ArgsDelta:
            self._args(event)  # type: ignore[arg-type]
        elif kind is TextDelta:
            self._prose(TextBlock, event.text)  # type: ignore[union-attr]
        elif kind is ReasoningDelta:
            self._prose(ReasoningBlock, event.text)  # type: ignore[union-attr]
        elif kind is CallStarted:
            self._started(event)  # type: ignore[arg-type]
        elif kind is CallEnded:
            self._ended(event)  # type: ignore[arg-type]
        elif kind is TurnEnded:
            self._turn_ended(event)  # type: ignore[arg-type]
        elif kind is ServerResult:
            self._server_result(event)  # type: ignore[arg-type]
        elif kind is ProviderError:
            self.provider_error = event.message  # type: ignore[union-attr]
            self.finished = True
        elif kind is StreamMalformed:
            self.malformed = event.message  # type: ignore[union-attr]
            self.finished = True
        elif kind is UsageReported:
            usage = event.usage  # type: ignore[union-attr]
            self.usage = usage if self.usage is None else self.usage.merged(usage)
        elif kind is ModelReported and self.model is None:
            self.model = event.name  # type: ignore[union-attr]

    def _add(self, block: Block) -> int:
        index = len(self.blocks)
        self.blocks.append(block)
        self.updates.append(BlockAdded(index))
        return index

    def _prose(self, cls: type[TextBlock] | type[ReasoningBlock], text: str) -> None:
        if not text:
            return
        blocks = self.blocks
        if blocks and type(blocks[-1]) is cls:
            index = len(blocks) - 1
            blocks[index].append(text)  # type: ignore[union-attr]
        else:
            index = self._add(cls(text))
        self.updates.append(BlockChanged(index, text))

    def _new_call(self, slot: object, call_id: str | None, name: str | None, provider: bool = False) -> ToolCallBlock:
        call = ToolCallBlock(id=call_id or None, name=name or "", slot=slot, provider_executed=provider)
        call.announced_at = self.now
        self._index_of[id(call)] = self._add(call)
        if slot is not None:
            self._slots[slot] = call
        self._open.append(call)
        return call

    def _started(self, ev: CallStarted) -> None:
        call_id = ev.id or None
        slot = ev.slot
        existing: ToolCallBlock | None = None
        if slot is None:
            if call_id is not None:
                existing = next((c for c in self._open if c.id == call_id), None)
                if existing is None:
                    self._anon += 1
                    self._new_call(("anon", self._anon), call_id, ev.name, ev.provider_executed)
                    return
            elif self._open:
                existing = self._open[-1]
        else:
            existing = self._slots.get(slot)
            if existing is not None and (
                existing.ended or (call_id is not None and existing.id is not None and call_id != existing.id)
            ):
                existing = None  # a new id on an occupied slot is a new call
        if existing is None:
            self._new_call(slot, call_id, ev.name, ev.provider_executed)
            return
        if call_id is not None and existing.id is None:
            existing.id = call_id
        name = ev.name
        if name and name != existing.name:
            # repeated names are ignored above; a different piece is a split name
            existing.name += name
            self.updates.append(BlockChanged(self._index_of[id(existing)], ""))

    def _call_for(self, slot: object) -> ToolCallBlock:
        if slot is None:
            if self._open:
                return self._open[-1]
            self._anon += 1
            return self._new_call(("anon", self._anon), None, None)
        call = self._slots.get(slot)
        if call is None:
            call = self._new_call(slot, None, None)
        return call

    def _args(self, ev: ArgsDelta) -> None:
        call = self._call_for(ev.slot)
        fragment = ev.fragment
        if call.ended:
            call.problem = "arguments arrived after the call ended"
            call.final = False
            return
        if not isinstance(fragment, str):
            self._whole_value(call, fragment)
            return
        if not fragment:
            return
        size = call.size
        if size == 2 and fragment.lstrip()[:1] == "{" and call.arguments_raw == "{}":
            call.fragments.clear()  # quirk: "{}" placeholder, then the real object
            call.size = size = 0
        elif size > 2 and len(fragment) == size and fragment == call.arguments_raw and _parses(fragment):
            return  # quirk: the whole arguments re-sent after the last fragment
        call.add(fragment)
        self.updates.append(BlockChanged(self._index_of[id(call)], fragment))

    def _whole_value(self, call: ToolCallBlock, value: object) -> None:
        try:
            text = _json_text(value)
        except (TypeError, ValueError):
            call.problem = "arguments were not JSON"
            return
        raw = call.arguments_raw
        if raw.strip() in ("", "{}"):
            call.fragments[:] = [text]
            call.size = len(text)
        elif _parses(raw) and loads(raw) == value:
            return  # restated whole: already have it
        else:
            call.fragments.append(text)
            call.size += len(text)
        self.updates.append(BlockChanged(self._index_of[id(call)], text))

    def _ended(self, ev: CallEnded) -> None:
        if ev.slot is None:
            call = self._open[-1] if self._open else None
        else:
            call = self._slots.get(ev.slot)
        if call is None or call.ended:
            return
        restatement = ev.arguments
        if isinstance(restatement, Restated):
            # the restatement kept as its length and digest (``restated``): compared with the buffer's
            if not call.same_digest(restatement):
                call.problem = "the arguments restated at the end differ from the streamed fragments"
        elif restatement is not None:
            if call.size == 0:
                if restatement:
                    call.fragments[:] = [restatement]
                    call.size = len(restatement)
                    call.restated = True
                    self.updates.append(BlockChanged(self._index_of[id(call)], restatement))
            elif call.same_text(restatement):
                call.take_text(restatement)  # the restatement is the buffer: kept instead of a join of its pieces
            else:
                call.problem = "the arguments restated at the end differ from the streamed fragments"
        self._close_call(call)

    def _close_call(self, call: ToolCallBlock) -> None:
        call.ended = True
        call.ended_at = self.now
        if call in self._open:
            self._open.remove(call)
        if call.problem is None:
            if not call.name:
                call.problem = "the call has no name"
            else:
                raw = call.arguments_raw
                try:
                    call.arguments = call_arguments(raw)
                    call.final = not call.provider_executed
                except StrictJSONError as exc:
                    call.problem = f"arguments do not parse: {exc}"
        self.updates.append(CallClosed(self._index_of[id(call)], call.final))

    def _turn_ended(self, ev: TurnEnded) -> None:
        self.terminal = True
        self.finished = True
        if ev.stop_reason is not None:
            self.stop_reason = ev.stop_reason
        self.truncated = ev.truncated or self.stop_reason in TRUNCATION_REASONS
        if ev.ends_open_calls and not self.truncated:
            for call in list(self._open):
                self._close_call(call)

    def _server_result(self, ev: ServerResult) -> None:
        for block in reversed(self.blocks):
            if isinstance(block, ToolCallBlock) and block.provider_executed and block.id == ev.call_id:
                block.provider_result = {"type": ev.kind, "content": ev.content}
                self.updates.append(BlockChanged(self._index_of[id(block)], ""))
                return

    # -- the end --------------------------------------------------------------

    def close(self, cause: str = "eof", detail: str | None = None) -> Turn:
        """Decide the outcome. ``cause`` names what ended a stream that had no
        terminal marker: ``eof``, ``disconnect``, ``timeout``, ``cancelled``."""
        if self._turn is not None:
            return self._turn
        outcome: Outcome
        error: str | None = None
        turn_cause: str | None = None
        calls = [b for b in self.blocks if isinstance(b, ToolCallBlock)]
        if self.malformed is not None:
            outcome, error = "malformed", self.malformed
        elif self.provider_error is not None:
            outcome, error = "provider_error", self.provider_error
        elif not self.terminal:
            outcome, turn_cause = "cut_off", cause
            error = detail or _CUT_OFF.get(cause, f"the stream ended ({cause}) before its terminal marker")
        elif self.truncated:
            outcome = "truncated"
            error = f"the output limit cut the turn off (finish reason {self.stop_reason})"
        else:
            broken = next((c for c in calls if c.problem and not c.provider_executed), None)
            if broken is None:
                broken = next((c for c in calls if not c.ended and not c.provider_executed), None)
                if broken is not None:
                    broken.problem = "the call never ended before the terminal marker"
                    if self.stop_reason:
                        broken.problem += f" (finish reason {self.stop_reason})"
            if broken is not None:
                outcome = "malformed"
                error = f"{broken.name or 'a call'}: {broken.problem}"
            else:
                outcome = "complete"
        for call in calls:
            if outcome == "truncated" and call.final:
                call.final = False
                call.problem = "the output limit cut the turn off"
            if not call.ended and call.problem is None:
                call.problem = (_UNENDED_BY_CAUSE.get(cause, _UNENDED["cut_off"]) if outcome == "cut_off"
                                else _UNENDED.get(outcome, "the call never ended"))
        turn = Turn(self.dialect, outcome, self.stop_reason, error, self.blocks, turn_cause, self.usage, self.model)
        self._turn = turn
        self.updates.append(TurnClosed(turn))
        return turn


_CUT_OFF = {
    "eof": "the stream ended before its terminal marker",
    "disconnect": "the connection dropped before the stream's terminal marker",
    "timeout": "the stream timed out before its terminal marker",
    "cancelled": "the turn was cancelled before the stream's terminal marker",
}

#: A cut-off call says how the stream was cut (a cancelled card never says "the stream ended").
_UNENDED_BY_CAUSE = {
    "disconnect": "the connection dropped while the call was being prepared",
    "timeout": "the stream timed out while the call was being prepared",
    "cancelled": "the turn was cancelled while the call was being prepared",
}

_UNENDED = {
    "cut_off": "the stream ended while the call was being prepared",
    "truncated": "the output limit cut the call off",
    "provider_error": "the provider reported an error while the call was being prepared",
    "malformed": "the stream broke while the call was being prepared",
    "complete": "the call never ended",
}


def _json_text(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False)``, grown a piece at a time
    (``jsonwrite.pieces``): CPython appends to a ``str`` nothing else holds in place (a big one's
    block is remapped, not copied), so a whole call of a megabyte (Gemini's ``args``) is the value
    and its text, not also the escaped string ``json.dumps`` joins the text from."""
    text = ""
    for piece in pieces(value, JSONText.SEPARATORS):
        text += piece
    return text


def _parses(text: str) -> bool:
    try:
        parse_arguments(text)
    except StrictJSONError:
        return False
    return True
