"""Everything a conversation needs, built once from the config and the
command line: the provider endpoint, the tools, the ledger, the transcript
store. ``ask`` and the TUI both start here, so they behave the same."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from .chat.providers import Endpoint, open_endpoint, register_configured_keys
from .chat.session import ChatSession
from .config import BUILTIN_TOOL_NAMES, Config, ConfigError, ProviderProfile, load_config
from .ids import InvalidId, check_id
from .ledger import Ledger, open_ledger
from .net.stream import Timeouts
from .paths import data_dir
from .store.recording import RecordingWriter, recording_path
from .store.transcripts import Conversation, Store, TranscriptWriter, history_of, retry_point
from .tools.registry import Registry

__all__ = ["Runtime", "open_runtime", "offered_tools"]


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

    def offered(self, profile: ProviderProfile | None = None) -> Registry:
        """The tools offered on ``profile`` (default: the runtime's), out of every tool known."""
        return self.registry.scoped(offered_tools(profile or self.profile, self.config))

    def session(self, conversation: str | None = None, offer_tools: bool = True) -> ChatSession:
        """A session for a new conversation, or one continuing a stored one
        (its id, or a unique prefix of it). Raises ConfigError if not found."""
        stored: Conversation | None = None
        if conversation is not None:
            try:
                stored = self.store.load(check_id(conversation))
            except InvalidId as exc:
                raise ConfigError(str(exc)) from None
            if stored is None:
                raise ConfigError(f"no stored conversation {conversation!r} (callstream transcripts lists them)")
        history = history_of(stored) if stored else []
        session = ChatSession(
            self.endpoint, self.offered(), self.ledger, stored.id if stored else uuid.uuid4().hex, history,
            retries=self.profile.retries, max_rounds=self.profile.max_rounds, offer_tools=offer_tools,
            system=self.system,
            options=self.profile.options, first_turn=stored.next_turn if stored else None,
            max_calls_per_turn=self.config.max_calls_per_turn, max_concurrent_tools=self.config.max_concurrent_tools,
            timeouts=Timeouts(self.profile.connect_timeout, self.profile.read_timeout, self.profile.deadline),
            team=self.config.team)
        if stored:
            session.restore_failed(retry_point(stored, history))  # the last turn failed: Ctrl+R may retry it
        session.stored = stored
        writer = TranscriptWriter(self.store, session, self.profile.provider, stored)
        session.listeners.append(writer)
        session.turn_source = writer.allocate_turn
        session.resync = writer.resync
        if self.config.record:
            path = recording_path(data_dir() / "recordings", check_id(session.conversation))
            session.recorder = RecordingWriter(path, {
                "conversation": session.conversation, "team": self.config.team, "dialect": self.endpoint.dialect,
                "provider": self.profile.provider, "model": self.endpoint.model,
                "retries": self.profile.retries, "max_rounds": self.profile.max_rounds})
        return session

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
    prompt = system or (chosen.system if chosen else None) or profile.system or config.system
    return Runtime(config, profile, endpoint, Registry.default(home, config), open_ledger(config, database),
                   Store(database), prompt)
