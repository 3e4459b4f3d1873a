"""Everything a conversation needs, built once from the config and the
command line: the provider endpoint, the tools, the ledger, the transcript
store. ``ask`` and the TUI both start here, so they behave the same."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..chat.compaction import Compacted, CompactionRefused, compact
from ..chat.events import ExchangeDone
from ..chat.session import ChatSession
from ..chat.transcribe import TranscriptWriter
from ..chat.window import room_of
from ..files.paths import config_path, data_dir, recordings_dir
from ..ledger import Ledger, conversation_scope, open_ledger
from ..net.endpoint import Endpoint
from ..net.stream import Timeouts
from ..rules.ids import InvalidId, check_id
from ..rules.prices import PriceBook
from ..settings.checks import ConfigError
from ..settings.config import Config, load_config
from ..settings.configfile import allow_always
from ..settings.profiles import ProviderProfile, price_book
from ..settings.tools import BUILTIN_TOOL_NAMES
from ..store import (
    Store,
    StoredEntry,
    StoredTree,
    StoredTurn,
    StoredUser,
    UnresolvedConversation,
    history_of,
    retry_point,
    retryable,
)
from ..store.housekeeping import prune_recordings
from ..store.recording import RecordingWriter, recording_path
from ..stream import DIALECT_NAMES
from ..stream.history import Entry
from ..tools.approvals import Approvals
from ..tools.registry import Registry
from .endpoint import open_endpoint, register_configured_keys

if TYPE_CHECKING:
    from ..mcp.servers import MCPHub

__all__ = ["Runtime", "open_runtime", "offered_tools", "HISTORY_AT_OPEN"]

#: A reopened path of at most this many entries has its history read on opening (its context meter
#: shows at once); a longer one's is read when first needed (the first request, /compact, a copy).
HISTORY_AT_OPEN = 600


def offered_tools(profile: ProviderProfile, config: Config) -> Callable[[str], bool]:
    """Which tools a conversation on ``profile`` offers: the ones it names, else
    everything but the demo's support-store tools, which only the demo model
    gets (a real model has no business with a fictional order store) unless
    a ``[tools.*]`` of the same name replaced one."""
    if profile.tools is not None:
        listed = frozenset(profile.tools)
        return listed.__contains__
    if profile.provider == "demo":
        return lambda name: True
    hidden = frozenset(BUILTIN_TOOL_NAMES) - set(config.tools)
    return lambda name: name not in hidden


@dataclass
class Runtime:
    config: Config
    profile: ProviderProfile
    endpoint: Endpoint
    registry: Registry
    ledger: Ledger
    store: Store
    #: The system prompt new sessions start with (``--system``/``--role``, the profile, the config).
    system: str | None = None
    #: The config's MCP servers (their tools are the registry's once listed); None: none configured.
    mcp: MCPHub | None = None

    @property
    def prices(self) -> PriceBook:
        """What the conversation's requests cost and the model's context window (``rules.prices``),
        with the profiles' own prices and the current profile's provider."""
        return price_book(self.config.providers.values(), self.profile)

    def offered(self, profile: ProviderProfile | None = None) -> Registry:
        """The tools offered on ``profile`` (default: the runtime's), out of every tool known."""
        return self.registry.scoped(offered_tools(profile or self.profile, self.config))

    def session(self, conversation: str | None = None, offer_tools: bool = True,
                head: int | None = None,
                approvals: Approvals | None = None) -> ChatSession:
        """A session for a new conversation, or one continuing a stored one
        (its id, or a unique prefix of it: ``Store.resolve``; at entry
        ``head``'s branch, else where it was last shown). Raises ConfigError
        if it names none, or several (listing them)."""
        stored: StoredTree | None = None
        if conversation is not None:
            try:
                stored = self.tree(self.store.resolve(conversation))
            except (InvalidId, UnresolvedConversation) as exc:
                raise ConfigError(str(exc)) from None
            if stored is None:
                raise ConfigError(f"no stored conversation {conversation!r} (callstream transcripts lists them)")
            if head is not None:
                if stored.entry(head) is None:
                    raise ConfigError(f"conversation {stored.id} has no entry {head}")
                stored = self.tree(stored.id, stored.leaf_under(head))
                assert stored is not None
        session = ChatSession(
            self.endpoint, self.offered(), self.ledger, stored.id if stored else uuid.uuid4().hex,
            retries=self.profile.retries, max_rounds=self.profile.max_rounds, offer_tools=offer_tools,
            system=self.system,
            options=self.profile.options,
            max_calls_per_turn=self.config.max_calls_per_turn, max_concurrent_tools=self.config.max_concurrent_tools,
            timeouts=Timeouts(self.profile.connect_timeout, self.profile.read_timeout, self.profile.deadline),
            team=self.config.team, limits=self.config.limits)
        session.request_usage = self.profile.usage
        session.sampling.models = self.sampling_models()
        # the TUI asks, and an "always" goes into the config file; ``ask`` passes its own
        # (nobody to ask: fail closed unless --approve)
        session.approvals = approvals if approvals is not None else Approvals.from_config(
            self.config, write_always=partial(allow_always, self.config.path or config_path()))
        writer = TranscriptWriter(self.store, session, self.profile.provider, stored)
        session.listeners.append(writer)
        session.book = writer
        if stored is not None:
            self._place(session, stored, stored.items, stored.head, stored.items[-1].branch if stored.items else "")
            session.origins = self._origins(stored)
        if self.config.record:
            path = recording_path(recordings_dir(), check_id(session.conversation))
            session.recorder = RecordingWriter(path, {
                "conversation": session.conversation, "team": self.config.team, "dialect": self.endpoint.dialect,
                "provider": self.profile.provider, "model": self.endpoint.model,
                "retries": self.profile.retries, "max_rounds": self.profile.max_rounds})
        if self.config.recordings_max_age_days is not None or self.config.recordings_max_mb is not None:
            self.prune_recordings(session)  # at start, and after each exchange: the recordings grew
            session.listeners.append(lambda event: self.prune_recordings(session)
                                     if isinstance(event, ExchangeDone) else None)
        return session

    def sampling_models(self) -> list[str]:
        """The models an MCP server's sampling hints may pick (``stream.sampling.choose_model``): those of the
        configured profiles that reach the current profile's endpoint with its key — only the model differs, so
        the same endpoint serves them — and the current one."""
        here = self.profile
        return [here.model] + [p.model for p in self.config.providers.values() if p.model != here.model
                               and p.provider == here.provider and p.default_base_url() == here.default_base_url()
                               and p.key_variable() == here.key_variable()]

    def prune_recordings(self, session: ChatSession | None = None) -> None:
        """The config's ``[recordings]`` limits applied, oldest first; never to
        ``session``'s own recording (``app/store/housekeeping.py``)."""
        keep = [session.recorder.path] if session is not None and isinstance(session.recorder, RecordingWriter) else []
        prune_recordings(recordings_dir(), self.config.recordings_max_age_days,
                         self.config.recordings_max_mb, keep)

    # -- the conversation as a tree ---------------------------------------------

    def tree(self, conversation: str, head: int | None = None) -> StoredTree | None:
        """A stored conversation as opening it needs it: its tree without text (``Store.load(whole=False)``;
        the screen reads pages), its path read whole when its last turn has calls awaiting approval
        (answering them rebuilds the history from it: ``Store.load_path``, no other branch's blocks)."""
        stored = self.store.load(conversation, head, whole=False)
        if stored is not None and stored.pending_approvals():
            stored = self.store.load_path(stored.id, head)
        return stored

    def _place(self, session: ChatSession, stored: StoredTree, path: list[StoredEntry], position: int | None,
               branch: str) -> None:
        """Put ``session`` at the end of ``path`` (a path of ``stored``'s tree). A shallow tree's path
        has its last entry read whole here; its history is read when first needed, page by page (at
        once for a path of at most ``HISTORY_AT_OPEN`` entries, so a short conversation's meter shows
        on opening)."""
        history: list[Entry] | Callable[[], list[Entry]]
        if stored.shallow and path:
            if not stored.items or path[-1] is not stored.items[-1]:  # (the load read the path shown's)
                self.store.fill_last(stored, path)
            seqs = [entry.seq for entry in path]

            def read() -> list[Entry]:
                return history_of(self.store.entries(stored.id, seqs))

            history = read() if len(path) <= HISTORY_AT_OPEN else read
        else:
            history = history_of(path)
        session.move_to(history, position, branch, {e.turn for e in path if isinstance(e, StoredTurn)},
                        stored.next_turn)
        if path and path[-1].seq >= stored.forked_len and retryable(path):  # a fork's copies: the original's
            # the last turn failed: Ctrl+R may retry it
            session.restore_failed(partial(retry_point, path) if callable(history) else retry_point(path, history))
        session.stored = stored
        for listener in session.listeners:
            if isinstance(listener, TranscriptWriter):
                listener.moved(next((e.seq for e in reversed(path) if isinstance(e, StoredUser)), None), stored)

    def _origins(self, stored: StoredTree) -> list[tuple[str, frozenset[int]]]:
        """The conversations ``stored`` was forked from (as keys name them),
        each with the turns the fork copied: calls elsewhere in them ran on
        another branch."""
        out: list[tuple[str, frozenset[int]]] = []
        seen = {stored.id}
        current: StoredTree | None = stored
        while current is not None and current.forked_from and current.forked_from not in seen:
            copied = frozenset(e.turn for e in current.tree[:current.forked_len] if isinstance(e, StoredTurn))
            out.append((conversation_scope(current.forked_from, self.config.team), copied))
            seen.add(current.forked_from)
            current = self.store.load(current.forked_from, whole=False)
        return out

    def show(self, session: ChatSession, seq: int) -> StoredTree:
        """Show the branch through entry ``seq`` (down to its latest leaf) and
        continue from there."""
        stored = self.store.load(session.conversation, whole=False)
        if stored is None or stored.entry(seq) is None:
            raise ConfigError(f"conversation {session.conversation} has no entry {seq}")
        leaf = stored.leaf_under(seq)
        self.store.set_head(stored.id, leaf)
        stored = self.tree(stored.id, leaf)
        assert stored is not None
        self._place(session, stored, stored.items, leaf, stored.items[-1].branch if stored.items else "")
        return stored

    async def compact(self, session: ChatSession) -> Compacted:
        """``/compact``, ``ask --compact``: the older part of the session's path summarised by its model,
        the conversation going on from the summary and the recent turns on a new branch
        (``chat.compaction``); the session is put at that branch's end. Raises ``CompactionRefused``."""
        stored = self.store.load_path(session.conversation, session.position)  # the path whole, no other branch
        if stored is None or not stored.items:
            raise CompactionRefused("Nothing to compact yet: the conversation has no messages.")
        done = await compact(session, self.store, stored)
        self.show(session, done.last)
        return done

    async def compact_if_due(self, session: ChatSession) -> Compacted | None:
        """``compact = "auto"``: compact when the next request would fill the share of the model's window
        the meter warns at; None when it is off, not due, or refused (the message goes out unchanged)."""
        if self.config.compact != "auto" or session.position is None:
            return None
        if not room_of(session, self.prices.window(session.endpoint.model)).warning:
            return None
        try:
            return await self.compact(session)
        except CompactionRefused:
            return None

    def branch_before(self, session: ChatSession, seq: int) -> StoredTree:
        """Continue from the entry before ``seq`` on a new branch: what an
        edited message or a regenerated reply becomes (``seq`` and everything
        after it stay as they were, on their own branch)."""
        stored = self.tree(session.conversation)
        entry = stored.entry(seq) if stored is not None else None
        if stored is None or entry is None:
            raise ConfigError(f"conversation {session.conversation} has no entry {seq}")
        path = stored.path_to(entry.parent)
        self._place(session, stored, path, entry.parent, uuid.uuid4().hex[:8])
        stored.items, stored.head = path, entry.parent  # what the screen shows until the new entry arrives
        return stored

    def fork(self, conversation: str, at: int | None = None) -> str:
        """A new conversation from ``conversation``'s path up to entry ``at``
        (default: the entry it was last shown at); returns the new id."""
        try:
            return self.store.fork_at(conversation, at)[2]
        except LookupError as exc:
            raise ConfigError(str(exc)) from None

    def switch(self, session: ChatSession, provider: str | None = None, model: str | None = None) -> None:
        """``/provider`` and ``/model``: the session talks to another provider or
        model from its next request on. Its history is provider-neutral, so the
        next request carries the whole conversation in the new wire format. For
        the demo model, ``model`` may name a wire format (``/model gemini``).
        Raises ConfigError (an unknown profile, a missing key) and changes nothing."""
        if provider is not None:
            profile = self.config.profile(provider=provider)
        else:
            profile = self.config.profile(self.profile.name) if self.profile.name in self.config.providers else (
                self.config.profile(provider=self.profile.provider))
            for name in ("base_url", "key_env", "demo_dialect", "demo_speed"):
                setattr(profile, name, getattr(self.profile, name))
            profile.model = self.profile.model
        if model is not None:
            if profile.provider == "demo" and model in DIALECT_NAMES:
                profile.demo_dialect = model
            else:
                profile.model = model
        endpoint = open_endpoint(profile)
        old, self.endpoint, self.profile = self.endpoint, endpoint, profile
        old.close()
        session.endpoint = endpoint
        session.options = dict(profile.options)
        session.request_usage = profile.usage
        session.sampling.models = self.sampling_models()
        session.retries, session.max_rounds = profile.retries, profile.max_rounds
        session.timeouts = Timeouts(profile.connect_timeout, profile.read_timeout, profile.deadline)
        self.apply_tools(session, set())
        if session.recorder is not None:
            session.recorder.marker("switch", {"dialect": endpoint.dialect, "provider": profile.provider,
                                               "model": endpoint.model})

    def apply_tools(self, session: ChatSession, disabled: set[str]) -> None:
        """The session offers this profile's tools except the ones switched off (``/tools off``)."""
        offered = offered_tools(self.profile, self.config)
        off = frozenset(disabled)
        session.registry = self.registry.scoped(lambda name: offered(name) and name not in off)

    def close(self) -> None:
        self.endpoint.close()
        self.ledger.close()
        self.store.close()


def open_runtime(provider: str | None = None, model: str | None = None, base_url: str | None = None,
                 config: Config | None = None, endpoint: Endpoint | None = None, system: str | None = None,
                 role: str | None = None) -> Runtime:
    """``system`` (``--system``) beats ``role`` (``--role``, which may also pick a
    profile) beats the profile's and then the config's system prompt."""
    config = config if config is not None else load_config()
    register_configured_keys(config)
    chosen = config.role(role) if role else None
    if chosen is not None and provider is None:
        provider = chosen.provider
    profile = config.profile(provider=provider, model=model, base_url=base_url)
    endpoint = endpoint or open_endpoint(profile)
    home = data_dir()
    database = home / "callstream.db"
    registry = Registry.default(home, config)
    hub = None
    if config.mcp:  # the SDK and the servers' code load only when a server is configured
        from ..mcp.tools import attach_servers, open_hub

        hub = open_hub(config.mcp, home / "mcp-logs", output_limit=config.limits.tool_output_bytes)
        attach_servers(registry, hub)
    prompt = system or (chosen.system if chosen else None) or profile.system or config.system
    return Runtime(config, profile, endpoint, registry, open_ledger(config, database),
                   Store(database, registry.display_specs), prompt, hub)
