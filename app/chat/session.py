"""The conversation loop (DESIGN.md steps 1–9), UI-neutral.

``ChatSession.send(text)`` runs rounds — request, stream, assemble, dispatch, append tool results, next
request — until the model stops, a stated failure, a cancel, or the round limit. Listeners get ``ChatEvent``s.

A round (one model response) is a *turn* with an index that never changes across its attempts: a retry
re-issues the same turn index, so the ledger recognises any call that already ran. A retried attempt's blocks
replace the failed attempt's. A turn that ends in a stated failure goes into the history as its prose plus a
one-line note — with the calls that really ran and their real results, and nothing for the calls that did not.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from ..files.heap import return_big_blocks
from ..ledger import Ledger, conversation_scope
from ..net.endpoint import Endpoint
from ..net.stream import CancelledWithTurn, Recorder, RequestFailed, Timeouts, stream_once
from ..rules.told import answered_calls, call_ids, pending_names, told
from ..rules.words import plural
from ..stream import PENDING_APPROVAL, StreamParser, ToolCallBlock, Turn, dispatched
from ..stream.history import Assistant, Entry, User
from ..stream.limits import DEFAULT_LIMITS, Limits
from ..stream.usage import total
from ..tools.approvals import Approvals
from ..tools.dispatcher import MAX_CALLS_PER_TURN, MAX_CONCURRENT_TOOLS, Dispatcher, over_cap
from ..tools.registry import Registry
from .asking import Asking
from .attaching import Attachment, ready_for
from .events import (
    AttemptFailed,
    AttemptStarted,
    CallState,
    ChatEvent,
    ConversationMoved,
    ExchangeDone,
    TurnSettled,
    UserSent,
)
from .feed import TurnFeed
from .forming import FormingWatch
from .place import DeferredHistory, EntryBook, Retry, lineage_of
from .request import request_for
from .sampling import Sampling
from .turns import LiveTurn, ending_note, failure_words, let_go, retry_delay, retryable, stop_unfinished

if TYPE_CHECKING:
    from ..store import StoredTree

__all__ = ["ChatSession"]


class ChatSession:
    #: The provider-neutral history the next request carries (a long reopened path: read on first use).
    history = DeferredHistory()

    def __init__(
        self,
        endpoint: Endpoint,
        registry: Registry,
        ledger: Ledger,
        conversation: str,
        history: list[Entry] | None = None,
        *,
        retries: int = 3,
        max_rounds: int = 8,
        timeouts: Timeouts | None = None,
        backoff: float = 0.5,
        offer_tools: bool = True,
        system: str | None = None,
        recorder: Recorder | None = None,
        clock: Callable[[], float] = time.monotonic,
        first_turn: int | None = None,
        http: httpx.AsyncClient | None = None,
        options: dict[str, Any] | None = None,
        dispatcher_class: Callable[..., Dispatcher] = Dispatcher,
        team: str | None = None,
        max_calls_per_turn: int = MAX_CALLS_PER_TURN,
        max_concurrent_tools: int = MAX_CONCURRENT_TOOLS,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.endpoint = endpoint
        self.registry = registry
        self.ledger = ledger
        self.conversation = conversation
        #: The conversation as the ledger's keys name it (the config's shared namespace).
        self.key_conversation = conversation_scope(conversation, team)
        self.history = list(history or [])
        self.retries = retries
        self.max_rounds = max_rounds
        self.timeouts = timeouts or Timeouts()
        self.backoff = backoff
        self.offer_tools = offer_tools
        self.asking = Asking()  # a running tool's requests for the person (``ask`` swaps in one that declines)
        self.sampling = Sampling(self)  # its requests to the model, through the person (``ask``: ``Refusing``)
        self.system = system
        self.recorder = recorder
        self.clock = clock
        self.options = dict(options or {})
        #: A replay swaps in a dispatcher that reports recorded outcomes.
        self.dispatcher_class = dispatcher_class
        self.max_calls_per_turn = max_calls_per_turn
        self.max_concurrent_tools = max_concurrent_tools
        #: Byte limits on a stream (an SSE line or event, the whole body).
        self.limits = limits
        self._forming = FormingWatch(clock)
        #: Speculative warming of read-only tools while their calls form.
        self.warming = True
        self.turns: list[LiveTurn] = []
        self.next_turn = first_turn if first_turn is not None else sum(isinstance(e, Assistant) for e in self.history)
        self.listeners: list[Callable[[ChatEvent], None]] = []
        self._http: httpx.AsyncClient | None = http
        self._current: asyncio.Task[Any] | None = None
        self._dispatcher: Dispatcher | None = None
        self._cancelled = False
        self.busy = False
        #: Where Ctrl+R starts: (history length, turn index) re-issues a failed turn in which nothing was
        #: dispatched; (history length, None) continues, as a new turn, from a failed turn whose calls ran.
        self._failed: Retry | None = None
        #: Failed turns whose calls ran and that the loop continued from, this exchange.
        self._continuations = 0
        #: A turn index to re-issue instead of allocating one (retry_last).
        self._reissue: int | None = None
        #: Set by the runtime (its transcript writer): the store numbers each new entry, under its write
        #: lock so two processes on one conversation never share one, and says what other processes added.
        self.book: EntryBook | None = None
        #: The stored conversation this session continues, if any (for the screen).
        self.stored: StoredTree | None = None
        #: Where in the conversation's tree the next entry goes, kept by the session alone (it moves
        #: before any listener hears of the new entry): the branch (part of every ledger key; "" is the
        #: main one), the entry it follows, the turn indices on the path from the root, and the
        #: (conversation, turns) this one was forked from — what "another branch" means to the dispatcher.
        self.branch = ""
        self.position: int | None = None
        self.path_turns: set[int] = set()
        self.origins: list[tuple[str, frozenset[int]]] = []
        #: Who may run what without asking (app/tools/approvals.Approvals); None: nothing asks.
        self.approvals: Approvals | None = None
        #: Ask for usage where the wire needs asking (a profile's ``usage = false`` turns it off).
        self.request_usage = True
        #: Where the exchange in progress began in ``turns`` (its usage is theirs).
        self._exchange_start = 0
        self._let_go = 0  # the turns before it keep how they ran only (``let_go_stored``)
        self.budget: Callable[[list[LiveTurn]], str | None] | None = None  # ask --max-cost: chat/budget.py

    @property
    def branched(self) -> bool:
        """The tree has entries off this path, or this is a branch or a fork."""
        stored = self.stored
        return bool(self.branch or self.origins) or (stored is not None and (
            len(stored.tree) > len(stored.items) or bool(stored.forked_from)))

    # -- plumbing ------------------------------------------------------------

    def _emit(self, event: ChatEvent) -> None:
        for listener in list(self.listeners):
            listener(event)

    def prepare(self) -> None:
        """Make the HTTP client before the first request needs it (its TLS
        context alone is tens of milliseconds), so a screen can do it while
        the person is still typing."""
        if self._http is None:
            self._http = httpx.AsyncClient(follow_redirects=False)  # see net.stream: same origin only

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        close = getattr(self.recorder, "close", None)
        if close is not None:
            close()
            self.recorder = None

    def cancel(self) -> None:
        """Esc / Ctrl-C: the running turn ends as a stated failure; no call is
        half-dispatched (a running tool is cancelled and recorded as failed)."""
        self._cancelled = True
        self._mark("cancel")
        if self._dispatcher is not None:
            self._dispatcher.cancel()
        if self._current is not None:
            self._current.cancel()

    async def _cancellable(self, awaitable: Any) -> Any:
        self._current = asyncio.ensure_future(awaitable)
        try:
            return await self._current
        finally:
            self._current = None

    # -- the loop ------------------------------------------------------------

    def _mark(self, kind: str, **info: Any) -> None:
        if self.recorder is not None:
            self.recorder.marker(kind, info)

    def _catch_up(self) -> bool:
        """Before sending: take in the turns another process added to the
        stored conversation, and say so. True when it had moved on."""
        moved = self.book.resync() if self.book is not None else None
        if moved is None:
            return False
        stored = self.stored = moved.stored
        self.history = moved.history
        self._failed = moved.failed
        self.position = stored.head  # where it was last shown
        self.branch = stored.items[-1].branch if stored.items else ""
        self.path_turns = stored.path_turns
        turns = sum(1 for item in moved.added if hasattr(item, "blocks"))
        self._emit(ConversationMoved(list(moved.added), f"This conversation moved on in another process "
                                     f"({plural(turns, 'turn')} added); continuing from there."))
        return True

    async def send(self, text: str, attachments: Sequence[Attachment] = ()) -> ExchangeDone:
        ready = ready_for(self.endpoint.dialect, attachments, self.history)  # refused: nothing stored or sent
        return_big_blocks()  # a reply may carry a call of many megabytes: its buffers go back when freed
        self._catch_up()
        self.history.append(User(text, ready))
        self._mark("user", text=text)
        entry = self.book.user_entry(text, self.position, self.branch, ready) if self.book is not None else None
        self.position = entry if entry is not None else self.position
        self._emit(UserSent(text, entry, ready))
        return await self._rounds()

    def move_to(self, history: list[Entry] | Callable[[], list[Entry]], position: int | None, branch: str,
                path_turns: set[int], next_turn: int) -> None:
        """Continue from another point of the conversation's tree: the path's
        history, the entry it ends on, the branch new entries go on. Turn
        indices keep counting from the whole tree's, so no index is used twice."""
        if self.busy:
            raise RuntimeError("a turn is running")
        self.history = history if callable(history) else list(history)
        self.position = position
        self.branch = branch
        self.path_turns = set(path_turns)
        self.next_turn = max(self.next_turn, next_turn)
        self._failed = None

    async def regenerate(self) -> ExchangeDone:
        """A new reply to the history as it stands (after ``move_to`` the
        point before the reply being regenerated): the rounds without a new
        user message."""
        self._mark("regenerate", branch=self.branch)
        return await self._rounds()

    def lineage(self) -> list[tuple[str, frozenset[int]]]:
        """This conversation with the turns on the path, then each one it was
        forked from with the copied turns still on the path: a call claimed in
        any other turn of these ran on another branch (one line of conversation: none)."""
        return lineage_of(self.key_conversation, self.path_turns, self.origins) if self.branched else []

    def restore_failed(self, point: Retry | None) -> None:
        """A reopened conversation whose last turn failed can be retried (where from: a point, or
        one read from the history when it is first needed)."""
        self._failed = point

    def can_retry(self) -> bool:
        return self._failed is not None and not self.busy

    async def retry_last(self) -> ExchangeDone:
        """Ctrl+R. A failed turn in which nothing was dispatched runs again
        under its own turn index (the ledger catches an identical call); one
        whose calls were dispatched stays in the history as it happened, and
        the retry continues from it as a new turn."""
        self._exchange_start = len(self.turns)
        if self._catch_up() and self._failed is None:
            return self._done("done", "Nothing to retry: the conversation moved on in another process.")
        failed = self._failed(self.history) if callable(self._failed) else self._failed
        if failed is None:
            return ExchangeDone("done", "nothing to retry")
        length, turn = failed
        del self.history[length:]
        self._reissue = turn
        self._mark("retry", turn=turn)
        return await self._rounds()

    def _allocate(self) -> int:
        if self._reissue is not None:
            index, self._reissue = self._reissue, None
        elif self.book is not None:
            index, self.position = self.book.turn_entry(self.position, self.branch)
        else:
            index = self.next_turn
        self.next_turn = max(self.next_turn, index + 1)
        return index

    async def _rounds(self) -> ExchangeDone:
        self.busy = True
        self._cancelled = False
        self._failed = None
        self._continuations = 0
        self._exchange_start = len(self.turns)
        try:
            if self.offer_tools:
                await self.registry.settled()  # MCP servers still starting: their tools, or their failure
            for _ in range(self.max_rounds):
                if self.budget is not None and (over := self.budget(self.turns[self._exchange_start:])):
                    return self._done("over_budget", over)  # a stated failure, before the request is sent
                status = await self._round()
                if status == "needs_approval":
                    names = [c.name for c in self.turns[-1].blocks if isinstance(c, ToolCallBlock)
                             and c.state in PENDING_APPROVAL]
                    return self._done(status, f"{', '.join(dict.fromkeys(names))} needs approval and did not run "
                                              f"(--approve {','.join(dict.fromkeys(names))} allows it).")
                if status != "continue":
                    return self._done(status)
            return self._done("round_limit", f"Stopped after {plural(self.max_rounds, 'round')} of tool calls "
                                             "(the max_rounds limit).")
        finally:
            self.busy = False

    def let_go_stored(self) -> None:
        """The stored turns of the exchanges before the last keep how they ran only (``turns.let_go``;
        the screen's, as an exchange ends: ``ask`` prints every turn, and a replay has no store)."""
        if self.book is not None:
            self._let_go = let_go(self.turns, self._let_go, self._exchange_start)

    def _done(self, status: str, message: str | None = None) -> ExchangeDone:
        turns = self.turns[self._exchange_start:]
        model = next((t.model for t in reversed(turns) if t.model), None)
        event = ExchangeDone(status, message, total(t.usage for t in turns), model)
        self._emit(event)
        return event

    async def _round(self) -> str:
        index = self._allocate()
        record = LiveTurn(index, model=self.endpoint.model or None)
        self.turns.append(record)
        self.path_turns.add(index)
        tools = self.registry.specs() if self.offer_tools else []
        feed = TurnFeed(record, self._emit, self.registry, frozenset(spec.name for spec in tools), self._forming,
                        self.warming)
        dispatcher = self.dispatcher_class(self.registry, self.ledger, self.key_conversation, index, feed.report,
                                           self.clock, max_calls=self.max_calls_per_turn,
                                           max_concurrent=self.max_concurrent_tools,
                                           branch=self.branch, lineage=self.lineage())
        self._dispatcher = dispatcher
        dispatcher.approvals, dispatcher.path = self.approvals, (self.key_conversation, frozenset(self.path_turns))
        dispatcher.elicitor, dispatcher.sampler = self.asking.ask, self.sampling.for_turn(record)
        path, body = request_for(self.endpoint, self.history, tools, self.system, self.registry,
                                 self.request_usage, self.options)
        self._mark("turn", turn=index, request=body)
        self.prepare()
        turn: Turn | None = None
        for attempt in range(1, self.retries + 2):
            if self._cancelled:
                break
            record.attempts = attempt
            dispatcher.begin_attempt()
            parser = StreamParser(self.endpoint.dialect, self.limits)
            record.blocks = parser.blocks
            entry = self.book.attempt_entry(index, attempt, self.position, self.branch) if self.book else None
            self.position = entry if entry is not None else self.position
            self._emit(AttemptStarted(index, attempt, entry))
            self._mark("attempt", turn=index, attempt=attempt)
            assert self._http is not None  # prepare() made it
            try:
                turn = await self._cancellable(stream_once(
                    self._http, self.endpoint.url(path), self.endpoint.headers, body, parser, self.timeouts,
                    functools.partial(feed.updates, parser.blocks, attempt, dispatcher=dispatcher),
                    self.recorder, self.clock))
            except RequestFailed as exc:
                self._mark("http", turn=index, attempt=attempt, status=exc.status, message=exc.message,
                           retryable=exc.retryable)
                turn = Turn(self.endpoint.dialect, "provider_error", None, exc.message, parser.blocks,
                            exc.cause, detail=exc.detail)
                if exc.retryable and attempt <= self.retries and not self._cancelled:
                    delay = exc.retry_after if exc.retry_after is not None else retry_delay(self.backoff, attempt)
                    await self._fail_attempt(record, attempt, exc.message, delay)
                    continue
                break
            except CancelledWithTurn as stopped:
                turn = stopped.turn
                self._mark("end", turn=index, attempt=attempt, cause="cancelled")
                break
            except asyncio.CancelledError:
                turn = Turn(self.endpoint.dialect, "cut_off", None, "the turn was cancelled", parser.blocks,
                            "cancelled")
                break
            finally:
                # every attempt's tokens were spent, a failed one's too (a cut-off may know its input only)
                record.usage = total([record.usage, parser.assembler.usage])
                record.model = parser.assembler.model or record.model
            self._mark("end", turn=index, attempt=attempt, cause=turn.cause or "eof")
            if turn.outcome == "complete" or self._cancelled:
                break
            if dispatched(parser.blocks):
                break  # what ran belongs to the history: continue from it (_settle), never regenerate it
            if retryable(turn) and attempt <= self.retries:
                await self._fail_attempt(record, attempt, failure_words(turn), retry_delay(self.backoff, attempt))
                continue
            break
        assert turn is not None
        record.result = turn
        return await self._settle(record, turn, dispatcher)

    async def _fail_attempt(self, record: LiveTurn, attempt: int, words: str, delay: float) -> None:
        message = f"Attempt {attempt} failed: {words}. Retrying in {delay:.1f} s."
        record.failures.append(message)
        self._emit(AttemptFailed(record.index, attempt, message))
        with contextlib.suppress(asyncio.CancelledError):
            await self._cancellable(asyncio.sleep(delay))

    async def _settle(self, record: LiveTurn, turn: Turn, dispatcher: Dispatcher) -> str:
        """Wait for the dispatched calls, then write the turn into the history."""
        failed = turn.outcome != "complete" or self._cancelled
        if self._cancelled:
            dispatcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._cancellable(dispatcher.wait())
        if self._cancelled:
            dispatcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await dispatcher.wait()
            failed = True
        self._dispatcher = None
        stopped, unfinished = stop_unfinished(record.blocks, over_cap(dispatcher.max_calls))
        for index in stopped:
            self._emit(CallState(record.index, index, "not run"))
        answered = answered_calls(record.blocks)
        pending = pending_names(record.blocks)
        start = len(self.history)
        if failed and self._cancelled and turn.outcome == "complete":
            turn = record.result = Turn(turn.dialect, "cut_off", turn.stop_reason, "the turn was cancelled",
                                        turn.blocks, "cancelled")
        note = record.note = ending_note(turn, failed, pending, unfinished, dispatcher.max_calls, dispatcher.capped)
        for call, call_id in zip(answered, call_ids(record.index, answered), strict=True):
            call.id = call_id  # the id the history gives it, stored with it, so a reload tells the same
        self.history += told(record.index, record.blocks, note)
        self._mark("results", turn=record.index, calls=[
            {"key": c.key, "state": c.state, "result": c.result, "reused": c.reused}
            for c in record.blocks if isinstance(c, ToolCallBlock) and c.key is not None])
        self._emit(TurnSettled(record.index, turn, record.attempts, note, record.usage, record.model))
        for block in (b for b in record.blocks if isinstance(b, ToolCallBlock)):
            block.preview = None  # the call is whole: its forming decode goes (a card keeps its own)
        if not failed:
            if pending:
                return "needs_approval"
            return "continue" if answered else "done"
        ran = dispatched(record.blocks)
        if ran and not self._cancelled and retryable(turn) and self._continuations < self.retries:
            # its calls ran: the next request continues from them (prose, calls, results, note)
            self._continuations += 1
            with contextlib.suppress(asyncio.CancelledError):
                await self._cancellable(asyncio.sleep(retry_delay(self.backoff, self._continuations)))
            if not self._cancelled:
                return "continue"
        self._failed = (len(self.history), None) if ran else (start, record.index)
        return "cancelled" if self._cancelled else "failed"

    # -- approvals ---------------------------------------------------------------

    def answer(self, key: str, answer: Any) -> bool:
        """The user's answer to a call of the running turn awaiting approval."""
        return self._dispatcher is not None and self._dispatcher.answer(key, answer)

    def pending_approvals(self) -> list[ToolCallBlock]:
        """Stored calls of the last turn still awaiting an answer (after a crash, or an ``ask`` that asked nobody)."""
        if self.busy or self.stored is None or self.turns:  # (turns: the conversation went on in this session)
            return []
        return self.stored.pending_approvals()

    async def resume_pending(self, answers: dict[str, Any]) -> bool:
        """Answer stored pending approvals (``resumed.resume``); True if none is left pending."""
        from .resumed import resume

        return await resume(self, answers)

    async def go_on(self) -> ExchangeDone:
        """Continue after answered approvals: the model reads their results."""
        return await self._rounds()
