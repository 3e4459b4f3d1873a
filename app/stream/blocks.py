"""The turn as the user sees it: an ordered list of blocks (DESIGN.md, step 4).

These are plain data. The renderer, the store and ``inspect`` all read the
same shape, so what was shown is what is saved is what is replayed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from .elicitation import Elicitation
from .pieces import append_piece
from .restated import Restated, text_digest
from .sampling import SamplingRequest
from .strictjson import StrictJSONError, call_arguments
from .usage import Usage

__all__ = [
    "block_record",
    "block_from_record",
    "CallState",
    "TERMINAL_STATES",
    "PENDING_APPROVAL",
    "ANSWERED",
    "DISPATCHED",
    "dispatched",
    "not_run_words",
    "Outcome",
    "TextBlock",
    "ReasoningBlock",
    "ToolCallBlock",
    "Block",
    "Turn",
]

Outcome = Literal["complete", "cut_off", "malformed", "truncated", "provider_error"]

#: What a card may say (DESIGN.md "Call states"). ``preparing`` while the
#: arguments stream; ``waiting`` final and valid, queued; ``running`` only once
#: the dispatcher has started it; then ``ran`` or ``failed``. Side branches:
#: ``rejected`` (schema or unknown tool, answered in-band), ``not run`` (the
#: turn ended before the call completed, or it was malformed), ``unknown``
#: (claimed in the ledger, no result recorded). Approvals (the dispatcher's,
#: app/tools/approvals.py): ``awaiting approval`` (the user is asked),
#: ``denied`` (by the user or a rule; told to the model), ``needs approval``
#: (nobody could be asked: not run, and stored so that a reopen can answer it).
CallState = Literal["preparing", "waiting", "awaiting approval", "running", "ran", "failed", "rejected", "denied",
                    "needs approval", "not run", "unknown"]
TERMINAL_STATES: frozenset[str] = frozenset({"ran", "failed", "rejected", "denied", "needs approval", "not run",
                                             "unknown"})
#: A call the user may still allow: after a crash, or where nobody could be asked.
PENDING_APPROVAL: frozenset[str] = frozenset({"awaiting approval", "needs approval"})
_STATES: frozenset[str] = TERMINAL_STATES | {"preparing", "waiting", "running", "awaiting approval"}
#: States whose result goes back to the model.
ANSWERED: frozenset[str] = frozenset({"ran", "failed", "unknown", "rejected", "denied"})
#: States of a call the dispatcher was handed: from then on it may have run,
#: so the turn it belongs to is never regenerated (docs/architecture.md,
#: "A call that ran belongs to the history").
DISPATCHED: frozenset[str] = frozenset({"waiting", "running", "ran", "failed", "unknown"})

_NOT_RUN = "Not run: "


def not_run_words(reason: str) -> str:
    """The one wording of a call that did not run, as its result reads: ``Not run: <reason>.``"""
    return f"{_NOT_RUN}{reason}."


def _not_run_reason(result: str | None) -> str | None:
    """The reason inside a result ``not_run_words`` wrote (a record stored before the field was)."""
    if result is None or not result.startswith(_NOT_RUN):
        return None
    reason = result[len(_NOT_RUN):]
    return reason[:-1] if reason.endswith(".") else reason


class _Prose:
    """Text that grows by deltas, kept as pieces: joining once per read keeps a
    long reply linear instead of copying the whole string on every delta."""

    __slots__ = ("parts", "_loose")
    kind = ""

    def __init__(self, text: str = "") -> None:
        self.parts: list[str] = [text] if text else []
        self._loose = 0

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
            self._loose = 0
        return self.parts[0] if self.parts else ""

    def append(self, delta: str) -> None:
        self._loose = append_piece(self.parts, delta, self._loose)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "text": self.text}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.text == self.text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"


class TextBlock(_Prose):
    __slots__ = ()
    kind = "text"

    @property
    def type(self) -> Literal["text"]:
        return "text"


class ReasoningBlock(_Prose):
    __slots__ = ()
    kind = "reasoning"

    @property
    def type(self) -> Literal["reasoning"]:
        return "reasoning"


@dataclass(slots=True)
class ToolCallBlock:
    """One call. ``fragments`` is the argument buffer, kept as appended pieces
    (adjacent small ones joined as they pile up: ``add``) so that a megabyte
    of arguments costs one join, not one per delta, and a few objects, not
    one per fragment.
    """

    id: str | None
    name: str
    slot: object = None
    fragments: list[str] = field(default_factory=list)
    size: int = 0
    ended: bool = False
    final: bool = False
    arguments: dict[str, Any] | None = None
    #: Why the call cannot be final, in plain words (None while undecided).
    problem: str | None = None
    provider_executed: bool = False
    provider_result: Any = None
    #: Times passed in by the caller (the stream core reads no clock).
    announced_at: float | None = None
    ended_at: float | None = None
    #: Set when the ``.done`` restatement was used instead of the deltas.
    restated: bool = False
    #: Set by the chat loop from the finaliser's and the dispatcher's reports.
    state: CallState = "preparing"
    #: The tool's result as the model reads it (text), or the error in words.
    result: str | None = None
    #: Why the call did not run (``not run``, ``needs approval``), in plain
    #: words; ``result`` then reads ``not_run_words(not_run)``.
    not_run: str | None = None
    #: The result came from the ledger: the call had already run.
    reused: bool = False
    #: A line safe to show on screen when ``result`` may quote argument values
    #: (a schema rejection names the fields, never their values).
    summary: str | None = None
    #: The idempotency key the dispatcher claimed for it (None if never dispatched).
    key: str | None = None
    #: The result of the same call (tool and arguments) that already ran on
    #: another branch of the conversation, as the dispatcher found it in the
    #: ledger: a side effect says so on its card; a read-only call reused it.
    other_branch: str | None = None
    #: The result of the same side effect (tool and arguments) that already ran
    #: earlier on this conversation's path: the card says so, and it asks first.
    already_ran: str | None = None
    #: The latest progress the tool reported while it ran (``progress_words``;
    #: an MCP server's ``notifications/progress``): shown on the running card, never stored.
    progress: str | None = None
    #: What the tool's server asked the person while it ran (``elicitation/create``), in order.
    elicitations: list[Elicitation] = field(default_factory=list)
    #: What the tool's server asked the model while it ran (``sampling/createMessage``), in order.
    samplings: list[SamplingRequest] = field(default_factory=list)
    #: The live forming decode (a ``FormingPreview``), kept by the chat loop so
    #: the card reads the same one instead of decoding the buffer a second time.
    preview: Any = None
    #: Times of the call's life (the caller's clock): announced, required
    #: fields first parsed, ended, dispatched, finished.
    timings: dict[str, float] = field(default_factory=dict)
    type: Literal["tool_call"] = "tool_call"
    #: How many trailing fragments are not yet joined (see ``pieces``).
    _loose: int = field(default=0, repr=False, compare=False)

    def add(self, fragment: str) -> None:
        """The next argument fragment, appended as it came."""
        self._loose = append_piece(self.fragments, fragment, self._loose)
        self.size += len(fragment)

    def stop(self, reason: str, state: CallState = "not run") -> None:
        """The call did not run, and why: its state, its reason, and the one wording of it as its result."""
        self.state = state
        self.not_run = reason
        self.result = not_run_words(reason)

    def relative_timings(self) -> dict[str, float]:
        """Seconds from the announcement: required fields stable, ended,
        dispatched, started, finished — whichever happened."""
        base = self.announced_at
        if base is None:
            return {}
        points = {
            "announced": base,
            "required": self.timings.get("required"),
            "ended": self.ended_at,
            "dispatched": self.timings.get("waiting"),
            "started": self.timings.get("running"),
            "finished": next((self.timings[s] for s in ("ran", "failed", "unknown", "rejected", "not run")
                              if s in self.timings), None),
        }
        return {name: round(at - base, 4) for name, at in points.items() if at is not None}

    @property
    def arguments_raw(self) -> str:
        if len(self.fragments) > 1:
            joined = "".join(self.fragments)
            self.fragments[:] = [joined]
            self._loose = 0
        return self.fragments[0] if self.fragments else ""

    def same_text(self, text: str) -> bool:
        """Whether the buffer is ``text``, compared piece by piece in place
        (joining a 10 MB buffer to compare it made a copy beside both)."""
        if sum(map(len, self.fragments)) != len(text):
            return False
        at = 0
        for piece in self.fragments:
            if not text.startswith(piece, at):
                return False
            at += len(piece)
        return True

    def same_digest(self, restatement: Restated) -> bool:
        """Whether the buffer is the text a checked trim kept as ``restatement`` (its
        characters and digest; the buffer hashed a slice at a time, never joined)."""
        if restatement.broken or restatement.chars != self.size:
            return False
        return text_digest(self.fragments) == (restatement.chars, restatement.digest)

    def take_text(self, text: str) -> None:
        """The buffer becomes ``text``, which equals it (``same_text``): one
        object instead of its pieces, with no join of them."""
        self.fragments[:] = [text]
        self._loose = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "tool_call",
            "id": self.id,
            "name": self.name,
            "arguments_raw": self.arguments_raw,
            "arguments": self.arguments if self.final else None,
            "final": self.final,
        }
        if self.problem is not None:
            out["problem"] = self.problem
        if self.state != "preparing":
            out["state"] = self.state
        if self.result is not None:
            out["result"] = self.result
        if self.not_run is not None and self.result != not_run_words(self.not_run):
            out["not_run"] = self.not_run  # else the result says it (``block_from_record`` reads it back from there)
        if self.reused:
            out["reused"] = True
        if self.other_branch is not None:
            out["other_branch"] = self.other_branch
        if self.already_ran is not None:
            out["already_ran"] = self.already_ran
        if self.key is not None:
            out["key"] = self.key
        if self.elicitations:
            out["elicitations"] = [e.to_dict() for e in self.elicitations]
        if self.samplings:
            out["samplings"] = [s.to_dict() for s in self.samplings]
        if self.announced_at is not None and (self.timings or self.ended_at is not None):
            out["timings"] = self.relative_timings()
        if self.provider_executed:
            out["provider_executed"] = True
            if isinstance(self.provider_result, dict):
                out["provider_result"] = self.provider_result.get("type")
        return out


Block = TextBlock | ReasoningBlock | ToolCallBlock


@dataclass(slots=True)
class Turn:
    dialect: str
    outcome: Outcome
    stop_reason: str | None
    error: str | None
    blocks: list[Block]
    #: What ended a turn without its terminal marker: eof, disconnect, timeout,
    #: cancelled (None for a turn that reached its marker).
    cause: str | None = None
    #: The tokens the provider said the reply cost (None: it said nothing).
    usage: Usage | None = None
    #: The model the provider said answered (None: it did not say).
    model: str | None = None
    #: A provider error's whole text (``limits.full_text``), beside its one line in ``error``.
    detail: str | None = None

    @property
    def calls(self) -> list[ToolCallBlock]:
        return [b for b in self.blocks if isinstance(b, ToolCallBlock)]

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "dialect": self.dialect,
            "outcome": self.outcome,
            "stop_reason": self.stop_reason,
            "error": self.error,
            "blocks": [b.to_dict() for b in self.blocks],
        }
        if self.cause is not None:
            out["cause"] = self.cause
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        if self.model is not None:
            out["model"] = self.model
        if self.detail is not None:
            out["detail"] = self.detail
        return out


def block_record(block: Block) -> dict[str, Any]:
    """Everything a block holds, for the store: what was shown, exactly."""
    if not isinstance(block, ToolCallBlock):
        return block.to_dict()
    record = block.to_dict()
    record.update(
        state=block.state,
        result=block.result,
        reused=block.reused,
        summary=block.summary,
        problem=block.problem,
        ended=block.ended,
        timings=dict(block.timings),
        provider_executed=block.provider_executed,
        announced_at=block.announced_at,
        ended_at=block.ended_at,
        key=block.key,
    )
    record.pop("provider_result", None)
    if isinstance(block.provider_result, dict):
        record["provider_result"] = {"type": block.provider_result.get("type")}
    return record


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _time(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def block_from_record(record: dict[str, Any]) -> Block:
    """The inverse of ``block_record`` (a stored block, ready to render).
    A record from an import may hold anything: a field of the wrong type is
    dropped rather than carried into a widget, and an unknown state is ``not run``."""
    if not isinstance(record, dict):
        raise ValueError("a block that is not an object")
    kind = record.get("type")
    if kind == "text":
        return TextBlock(str(record.get("text", "")))
    if kind == "reasoning":
        return ReasoningBlock(str(record.get("text", "")))
    if kind != "tool_call":
        raise ValueError(f"unknown block type {str(kind)[:40]!r}")
    raw = str(record.get("arguments_raw", ""))
    arguments = record.get("arguments")
    if "arguments" not in record and record.get("final"):
        # the store keeps a final call's buffer only: its arguments are that buffer, parsed
        try:
            arguments = call_arguments(raw)
        except StrictJSONError:
            arguments = None
    state = record.get("state", "preparing")
    timings = record.get("timings")
    call = ToolCallBlock(
        id=_text(record.get("id")),
        name=str(record.get("name", "")),
        fragments=[raw] if raw else [],
        size=len(raw),
        ended=bool(record.get("ended", record.get("final", False))),
        final=bool(record.get("final", False)),
        arguments=arguments if isinstance(arguments, dict) else None,
        problem=_text(record.get("problem")),
        provider_executed=bool(record.get("provider_executed", False)),
        provider_result=record.get("provider_result"),
        announced_at=_time(record.get("announced_at")),
        ended_at=_time(record.get("ended_at")),
        state=state if state in _STATES else "not run",
        result=_text(record.get("result")),
        not_run=_text(record.get("not_run")),
        reused=bool(record.get("reused", False)),
        summary=_text(record.get("summary")),
        key=_text(record.get("key")),
        other_branch=_text(record.get("other_branch")),
        already_ran=_text(record.get("already_ran")),
        elicitations=[e for e in map(Elicitation.from_dict, record.get("elicitations") or []) if e is not None]
        if isinstance(record.get("elicitations"), list) else [],
        samplings=[s for s in map(SamplingRequest.from_dict, record.get("samplings") or []) if s is not None]
        if isinstance(record.get("samplings"), list) else [],
        timings={str(k): t for k, v in (timings.items() if isinstance(timings, dict) else ())
                 if (t := _time(v)) is not None},
    )
    if call.not_run is None and call.state in ("not run", "needs approval"):
        call.not_run = _not_run_reason(call.result)  # the result words it: the record need not repeat it
    return call


def dispatched(blocks: list[Block]) -> bool:
    """Whether any of a turn's own calls was handed to the dispatcher."""
    return any(isinstance(b, ToolCallBlock) and not b.provider_executed and b.state in DISPATCHED for b in blocks)
