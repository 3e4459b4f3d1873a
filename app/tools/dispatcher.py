"""The dispatcher: the only thing that runs tools (DESIGN.md step 7).

An asyncio worker, separate from reading the stream and from rendering. It is
handed each final, valid call the moment the call ends; it claims the call's
key in the ledger, runs it (read-only calls concurrently, side-effecting
calls one after another in the order they ended), records the result, and
reports every state change as a ``CallUpdate`` — the card says "running" only
because this says so.

A call's path through here (DESIGN.md "Call states")::

    submit ──▶ waiting ──(admitted; a run slot is free)──▶ claim ──▶ running ──▶ ran | failed
      │           │                                │           └─ cancelled while it ran:
      │           │                                │              read-only → failed; side-effecting → unknown
      │           │                                └─ already in the ledger: ran | failed (reused) | unknown
      │           └─ cancelled before it started: not run (never claimed)
      └─ over max_calls_per_turn: not run

Between ``waiting`` and the run slot, ``_admit`` decides whether the call may
run at all (``awaiting approval``, ``denied``, ``needs approval``): a call
waiting for the user holds no run slot, so eight calls awaiting an answer
never keep an allowed ninth from running. The claim is made when the call
starts, not when it is queued, so a call that never started never leaves a
claim behind; at most ``max_concurrent`` calls hold a run slot at once.

One dispatcher serves one turn across its attempts, so a retried stream that
repeats a call already in flight joins that run instead of starting another;
the ledger catches repeats across processes and restarts.

Across branches (docs/architecture.md, "Side effects across branches"): the
key includes the branch, so a call on a new branch is a new call — but
before it runs, the dispatcher asks the ledger whether the same tool with the
same arguments already ran on another branch of this conversation (or of the
one it was forked from). A read-only call reuses that result; a
side-effecting one says so on its card (``other_branch``) before it runs again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..ledger import Claim, Ledger, LedgerUnavailable, canonical_digest, idempotency_key
from ..ledger.branches import Lineage, ran_elsewhere, ran_on_path
from ..rules.words import CANCELLED_UNKNOWN, UNKNOWN_ADVICE, UNKNOWN_OUTCOME
from ..stream.blocks import not_run_words
from ..stream.elicitation import Elicitation
from ..stream.progress import progress_words
from ..stream.sampling import SamplingRequest
from .approvals import Answer
from .base import NotSent, OutcomeUnknown, Tool, ToolContext, ToolError
from .registry import Registry

__all__ = ["CallUpdate", "Dispatcher", "UNKNOWN_OUTCOME", "CANCELLED_UNKNOWN", "MAX_CALLS_PER_TURN",
           "MAX_CONCURRENT_TOOLS", "over_cap", "running_elsewhere"]



def running_elsewhere(holder: str | None) -> str:
    """What the model and the card are told when another client holds the call
    and its result did not come within the wait."""
    return (f"Error: this call is running elsewhere ({holder or 'another client'}) and its result did not arrive "
            "in time. Its outcome is unknown here: do not assume it succeeded or failed, and do not repeat it "
            "without asking the user.")
NOT_STARTED = "Error: the turn was cancelled before this call ran."

#: Defaults of the config's ``max_calls_per_turn`` and ``max_concurrent_tools``.
MAX_CALLS_PER_TURN = 128
MAX_CONCURRENT_TOOLS = 8


def over_cap(limit: int) -> str:
    """Why a call past the per-turn cap did not run (card and log)."""
    return f"this turn already made {limit} calls (the max_calls_per_turn limit)"


def ledger_unreachable(exc: LedgerUnavailable) -> str:
    return (f"Error: not run: the idempotency ledger is unavailable, so this call could not be claimed ({exc}). It "
            "was not started, so it cannot have run twice; it may be retried once the ledger is back.")


def not_recorded(why: str) -> str:
    """Appended to a result the ledger did not take: the call ran once here,
    and other clients will see it as unknown; it is never run again."""
    return (f"\n\n(Ran once, but its result is not recorded in the ledger: {why}. Other clients will see this "
            "call's outcome as unknown; it will not run again.)")


@dataclass(slots=True)
class CallUpdate:
    """A call's new state. ``ref`` is whatever the submitter used to name the
    call (the chat loop passes the block index)."""

    ref: Any
    state: str
    result: str | None = None
    is_error: bool = False
    reused: bool = False
    key: str | None = None
    at: float = 0.0
    #: The result of the same call on another branch (see the module docstring).
    other_branch: str | None = None
    #: Why the call did not run (``not run``, ``needs approval``); ``result`` words it.
    not_run: str | None = None
    #: The result of the same side effect earlier on this conversation's path (it asks first).
    already_ran: str | None = None
    #: A line for the conversation about this call (an "always" answer the config could not keep).
    note: str | None = None
    #: The tool's latest progress while it runs (``progress_words``), with state ``running``.
    progress: str | None = None
    #: A request of the tool's server for the person, asked or answered, with state ``running``.
    elicitation: Elicitation | None = None
    #: A request of the tool's server to the model, at each of its states, with state ``running``.
    sampling: SamplingRequest | None = None


async def nobody_to_ask(_key: str, asked: Elicitation) -> dict[str, Any] | None:
    """A request for the person where none can answer (a replay, a test of the loop): declined."""
    asked.state, asked.reason = "decline", asked.reason or "nobody here can answer it"
    return None


async def nobody_samples(_key: str, asked: SamplingRequest, _changed: Callable[[], None]) -> None:
    """A request to the model where nobody can let it through (``mcp call``, a replay): refused."""
    if asked.state == "asked":
        asked.state, asked.reason = "refused", "nobody here can let it through"


class Dispatcher:
    def __init__(self, registry: Registry, ledger: Ledger, conversation: str, turn: int,
                 on_update: Callable[[CallUpdate], None], clock: Callable[[], float] = time.monotonic,
                 max_calls: int = MAX_CALLS_PER_TURN, max_concurrent: int = MAX_CONCURRENT_TOOLS, *,
                 branch: str = "", lineage: Lineage = ()) -> None:
        self.registry = registry
        self.ledger = ledger
        self.conversation = conversation
        self.turn = turn
        self.branch = branch
        #: (conversation, turns on the path being continued), this one first,
        #: then those it was forked from: what "another branch" is measured against.
        self.lineage = list(lineage)
        #: (conversation, turns on the path): where "already ran in this conversation" is looked for
        #: when there is no lineage (one line of conversation); None: not looked for (a resume, replay).
        self.path: tuple[str, frozenset[int]] | None = None
        self.on_update = on_update
        self.clock = clock
        self._occurrences: dict[str, int] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._inflight: dict[str, asyncio.Future[CallUpdate]] = {}
        self._serial: asyncio.Task[None] | None = None
        self._cancel = asyncio.Event()
        self.runs = 0  # how many times a tool really started here (for tests and the log)
        self.max_calls = max_calls
        self.submitted = 0
        #: Calls past ``max_calls``: not run, and the turn says so.
        self.capped = 0
        self._slots = asyncio.Semaphore(max_concurrent)
        self.running = 0
        self.peak_running = 0  # the most calls that held a run slot at once
        #: app/tools/approvals.Approvals; None: nothing asks (tests of the loop, replay).
        self.approvals: Any = None
        #: Answers given before the call came (a reopened pending approval), by key.
        self.preapproved: dict[str, Answer] = {}
        self._answers: dict[str, asyncio.Future[Answer]] = {}
        #: Who answers a running tool's request for the person (the session's); by default nobody: declined.
        self.elicitor: Callable[[str, Elicitation], Awaitable[dict[str, Any] | None]] = nobody_to_ask
        #: Who takes a running tool's request to the model through the person (the session's); by
        #: default nobody: refused. Its third argument says on the card that the request changed.
        self.sampler: Callable[[str, SamplingRequest, Callable[[], None]], Awaitable[None]] = nobody_samples

    def answer(self, key: str, answer: Answer) -> bool:
        """The user's answer to a call awaiting approval; False if none awaits under ``key``."""
        future = self._answers.get(key)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    def begin_attempt(self) -> None:
        """A new attempt of the same turn: identical calls count from one again,
        so the retry's calls get the keys the first attempt's got."""
        self._occurrences.clear()

    def _emit(self, update: CallUpdate) -> None:
        update.at = self.clock()
        self.on_update(update)

    def submit(self, ref: Any, name: str, arguments: dict[str, Any]) -> str:
        """Queue a final, valid call; returns its idempotency key."""
        identity = name + "\x00" + canonical_digest(arguments)  # a digest: the turn holds no copy of big arguments
        occurrence = self._occurrences[identity] = self._occurrences.get(identity, 0) + 1
        key = idempotency_key(self.conversation, self.turn, name, arguments, occurrence, self.branch)
        if self.submitted >= self.max_calls:
            self.capped += 1
            reason = over_cap(self.max_calls)
            self._emit(CallUpdate(ref, "not run", not_run_words(reason), True, not_run=reason))
            return key
        self.submitted += 1
        self._emit(CallUpdate(ref, "waiting", key=key))
        self._schedule(ref, name, arguments, key, occurrence)
        return key

    def resume(self, ref: Any, name: str, arguments: dict[str, Any], key: str) -> None:
        """Dispatch a stored call under its stored key (a pending approval
        answered after a reopen): the ledger keeps it to once."""
        self._schedule(ref, name, arguments, key, 1)

    def _schedule(self, ref: Any, name: str, arguments: dict[str, Any], key: str, occurrence: int) -> None:
        tool = self.registry.get(name)
        if tool is not None and tool.read_only:
            self._tasks.append(asyncio.create_task(self._dispatch(ref, name, arguments, key, occurrence)))
        else:
            previous = self._serial

            async def in_order() -> None:
                if previous is not None:
                    with contextlib.suppress(BaseException):
                        await asyncio.shield(previous)
                await self._dispatch(ref, name, arguments, key, occurrence)

            self._serial = asyncio.create_task(in_order())
            self._tasks.append(self._serial)

    async def wait(self) -> None:
        """Until every submitted call reached a terminal state."""
        while self._tasks:
            tasks, self._tasks = self._tasks, []
            await asyncio.gather(*tasks, return_exceptions=True)

    def cancel(self) -> None:
        self._cancel.set()
        for task in self._tasks:
            task.cancel()

    async def _dispatch(self, ref: Any, name: str, arguments: dict[str, Any], key: str, occurrence: int) -> None:
        inflight = self._inflight.get(key)
        if inflight is not None:
            # the same call from a retried attempt: report the one run's outcome
            try:
                done = await asyncio.shield(inflight)
            except asyncio.CancelledError:
                self._emit(CallUpdate(ref, "not run", NOT_STARTED, True, key=key))
                raise
            self._emit(CallUpdate(ref, done.state, done.result, done.is_error, reused=True, key=key))
            return
        future: asyncio.Future[CallUpdate] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            admitted = await self._admit(ref, name, arguments, key)
            if isinstance(admitted, CallUpdate):
                update = admitted
            else:
                tool, other_branch = admitted
                async with self._slots:
                    self.running += 1
                    self.peak_running = max(self.peak_running, self.running)
                    try:
                        update = await self._run(ref, tool, arguments, key, occurrence, other_branch)
                    finally:
                        self.running -= 1
        except asyncio.CancelledError as exc:
            if isinstance(exc, _Cancelled):
                update = exc.update  # stopped while it ran: failed (read-only) or unknown (side-effecting)
            else:
                update = CallUpdate(ref, "not run", NOT_STARTED, True, key=key)
            if not future.done():
                future.set_result(update)
            self._emit(update)
            raise
        if not future.done():
            future.set_result(update)
        self._emit(update)

    async def _admit(self, ref: Any, name: str, arguments: dict[str, Any],
                     key: str) -> CallUpdate | tuple[Tool, str | None]:
        """Between ``waiting`` and the run slot: the refusal that ends the
        call here (no such tool, cancelled, denied, needs approval), or the
        tool and what it already did on another branch. Runs outside the
        slots, so a call awaiting the user's answer holds none."""
        tool = self.registry.get(name)
        if tool is None:  # the finaliser rejects these; kept as a guard
            return CallUpdate(ref, "rejected", f"Error: there is no tool called {name!r}.", True, key=key)
        if tool.refresh is not None:  # judged by what the tool is now (its server may have changed it)
            await tool.refresh()
            tool = self.registry.get(name)
            if tool is None:
                reason = f"{name} is no longer offered (its server withdrew it)"
                return CallUpdate(ref, "not run", not_run_words(reason), True, key=key, not_run=reason)
        if self._cancel.is_set():
            return CallUpdate(ref, "not run", NOT_STARTED, True, key=key)
        other_branch = await self._ran_elsewhere(name, arguments, tool.read_only)
        if self.approvals is not None:
            # a side effect that already happened (on this path or another branch) asks again, whatever allows it
            again = other_branch if not tool.read_only else None
            earlier = None if tool.read_only else await self._ran_on_path(name, arguments)
            refused = await self._approval(ref, tool, key, again, earlier)
            if refused is not None:
                return refused
        return tool, other_branch

    async def _run(self, ref: Any, tool: Tool, arguments: dict[str, Any], key: str, occurrence: int,
                   other_branch: str | None) -> CallUpdate:
        """Claim ``key`` (now that the call starts and holds a slot) and run the tool."""
        name = tool.name
        if self._cancel.is_set():
            return CallUpdate(ref, "not run", NOT_STARTED, True, key=key)
        claiming = asyncio.ensure_future(asyncio.to_thread(
            self.ledger.claim, key, self.conversation, self.turn, name, arguments, occurrence,
            retry_cancelled=tool.read_only, wait=tool.timeout))
        try:
            claim: Claim = await asyncio.shield(claiming)
        except asyncio.CancelledError:
            # the claim may land after the cancel: never leave it without an outcome
            claim = await claiming
            if claim.state == "claimed":
                await self._record(key, "cancelled", "Error: cancelled before it ran.", True, claim.fence)
            raise
        except LedgerUnavailable as exc:
            return CallUpdate(ref, "not run", ledger_unreachable(exc), True, key=key)
        if claim.state in ("ran", "failed"):
            return CallUpdate(ref, claim.state, claim.result, claim.is_error, reused=True, key=key,
                              other_branch=other_branch)
        if claim.state == "unknown":
            return CallUpdate(ref, "unknown", claim.result or UNKNOWN_OUTCOME, True, key=key, other_branch=other_branch)
        if claim.state == "elsewhere":
            return CallUpdate(ref, "unknown", running_elsewhere(claim.holder), True, key=key)
        if other_branch is not None and tool.read_only:
            # a read it already made on another branch: the same answer, under this branch's key
            await asyncio.to_thread(self.ledger.finish, key, "ran", other_branch, False, fence=claim.fence)
            return CallUpdate(ref, "ran", other_branch, False, reused=True, key=key, other_branch=other_branch)
        if other_branch is not None:
            # a side effect that already happened on another branch: stated on the card before it runs again
            self._emit(CallUpdate(ref, "waiting", key=key, other_branch=other_branch))
        loop = asyncio.get_running_loop()
        def progress(done: float, total: float | None, message: str | None) -> None:
            self._emit(CallUpdate(ref, "running", key=key, progress=progress_words(done, total, message)))

        async def elicit(asked: Elicitation) -> dict[str, Any] | None:
            self._emit(CallUpdate(ref, "running", key=key, elicitation=asked))
            try:
                return await self.elicitor(key, asked)
            finally:
                self._emit(CallUpdate(ref, "running", key=key, elicitation=asked))

        async def sample(asked: SamplingRequest) -> None:  # the same call, the same key: only news on its card
            def changed() -> None:
                self._emit(CallUpdate(ref, "running", key=key, sampling=asked))

            changed()
            try:
                await self.sampler(key, asked, changed)
            finally:
                changed()

        ctx = ToolContext(idempotency_key=key, cancelled=self._cancel, deadline=loop.time() + tool.timeout,
                          progress=progress, elicit=elicit, sample=sample)
        self._emit(CallUpdate(ref, "running", key=key))
        self.runs += 1
        try:
            result = await asyncio.wait_for(tool.run(dict(arguments), ctx), timeout=tool.timeout)
            state, is_error = "ran", False
        except asyncio.CancelledError:
            if tool.read_only:  # nothing happened that a re-run would repeat
                await self._record(key, "cancelled", "Error: cancelled while it ran.", True, claim.fence)
                raise _Cancelled(CallUpdate(ref, "failed", "Error: cancelled while it ran.", True, key=key)) from None
            # a side effect may have happened: unknown, and never re-run automatically
            await self._record(key, "unknown", CANCELLED_UNKNOWN, True, claim.fence)
            raise _Cancelled(CallUpdate(ref, "unknown", CANCELLED_UNKNOWN, True, key=key)) from None
        except TimeoutError:
            result, state, is_error = f"Error: timed out after {tool.timeout:g} s.", "failed", True
        except NotSent as exc:  # it never reached the tool: nothing happened, and it may be asked for again
            reason = str(exc).rstrip(".")
            result, state, is_error = not_run_words(reason), "not run", True
            await self._record(key, "cancelled", result, True, claim.fence)
            return CallUpdate(ref, state, result, is_error, key=key, not_run=reason)
        except OutcomeUnknown as exc:
            result, state, is_error = f"Error: {str(exc).rstrip('.')}. {UNKNOWN_ADVICE}", "unknown", True
        except ToolError as exc:
            result, state, is_error = f"Error: {exc}", "failed", True
        except Exception as exc:  # a tool bug is a failed call, never a crashed turn
            result, state, is_error = f"Error: the tool raised {type(exc).__name__}: {exc}", "failed", True
        refused = await self._record(key, state, result, is_error, claim.fence)
        if refused:
            result += not_recorded(refused)
        return CallUpdate(ref, state, result, is_error, key=key)

    async def _record(self, key: str, state: str, result: str, is_error: bool, fence: int) -> str | None:
        """Write a claimed call's result; why it was not written, or None."""
        try:
            if await asyncio.to_thread(self.ledger.finish, key, state, result, is_error, fence=fence):
                return None
            return "its claim was taken over by another client"
        except LedgerUnavailable as exc:
            return f"the ledger could not be reached when it ended ({exc})"

    async def _ran_elsewhere(self, name: str, arguments: dict[str, Any], read_only: bool) -> str | None:
        """The result of this call on another branch, if it ran there: for a
        read-only call only a clean run counts; for a side effect, any claim
        that may have acted (ran, or unknown)."""
        if not self.lineage:
            return None
        rows = await asyncio.to_thread(ran_elsewhere, self.ledger, self.lineage, name, arguments)
        wanted = ("ran",) if read_only else ("ran", "unknown", "claimed")
        for row in rows:
            if row["state"] in wanted:
                return str(row["result"]) if row["result"] is not None else "outcome unknown"
        return None

    async def _ran_on_path(self, name: str, arguments: dict[str, Any]) -> str | None:
        """The result of this side effect in an earlier turn on the path being
        continued (any claim that may have acted), if it ran there."""
        lineage = self.lineage or ([self.path] if self.path is not None else [])
        if not lineage:
            return None
        rows = await asyncio.to_thread(ran_on_path, self.ledger, lineage, name, arguments,
                                       (self.conversation, self.turn))
        for row in rows:
            if row["state"] in ("ran", "unknown", "claimed"):
                return str(row["result"]) if row["result"] is not None else "outcome unknown"
        return None

    async def _approval(self, ref: Any, tool: Tool, key: str, ran_elsewhere: str | None = None,
                        already_ran: str | None = None) -> CallUpdate | None:
        """The ``awaiting approval`` state: None lets the call go on to its claim.
        ``ran_elsewhere`` (a side effect's result on another branch) turns an
        allow rule's "run" into a question when someone can be asked: running
        it again is a second side effect, and only the user can want that. A
        deny rule still wins; with nobody to ask, the rules decide as always
        (``ask --approve`` is the user's answer given in advance)."""
        try:
            entry = await asyncio.to_thread(self.ledger.lookup, key)
        except LedgerUnavailable:
            entry = None  # the claim after the answer says what the ledger can
        if entry is not None and entry["state"] in ("ran", "failed", "unknown"):
            return None  # already recorded: the claim returns the stored outcome, nothing runs
        # the rules first, on every path: an answer given before the call came (a stored pending approval
        # answered after a reopen) never outranks a deny rule, even one written after it was stored
        decision = self.approvals.decide(tool, ran_before=ran_elsewhere is not None or already_ran is not None)
        if decision == "deny":
            self.preapproved.pop(key, None)
            return CallUpdate(ref, "denied", "Denied: a rule in the config ([approval] deny) does not allow "
                                             f"{tool.name}. It was not run.", True, key=key)
        answer = self.preapproved.pop(key, None)
        if answer is None:
            if decision == "run":
                return None
            if not self.approvals.interactive:
                again = "; it already ran in this conversation" if ran_elsewhere or already_ran else ""
                reason = f"{tool.name} needs approval (nobody could be asked{again}; --approve {tool.name} allows it)"
                return CallUpdate(ref, "needs approval", not_run_words(reason), True, key=key, not_run=reason,
                                  other_branch=ran_elsewhere, already_ran=already_ran)
            future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
            self._answers[key] = future
            self._emit(CallUpdate(ref, "awaiting approval", key=key, other_branch=ran_elsewhere,
                                  already_ran=already_ran))
            try:
                answer = await future
            finally:
                self._answers.pop(key, None)
        if answer.choice == "deny":
            why = f" Their reason: {answer.reason}" if answer.reason else ""
            return CallUpdate(ref, "denied", f"Denied: the user did not allow this call; it was not run.{why}", True,
                              key=key)
        unsaved = await asyncio.to_thread(self.approvals.remember, tool, answer, self.conversation)
        if unsaved is not None:  # an "always" the config could not keep: stated, and the call goes on
            self._emit(CallUpdate(ref, "waiting", key=key, note=unsaved))
        return None


class _Cancelled(asyncio.CancelledError):
    """Cancellation that carries the failed(cancelled) update to report."""

    def __init__(self, update: CallUpdate) -> None:
        super().__init__()
        self.update = update
