"""What the chat screen needs of the app it runs in, typed.

``CallstreamApp`` (the live chat) and ``ReplayApp`` (a recording played back)
both host the chat screen; the screen is given its host when it is built and
talks to it only through this protocol, never through ``screen.app``'s
attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..runtime.wiring import Runtime
    from .context import DisplaySpecs

__all__ = ["ChatHost"]


class ChatHost(Protocol):
    @property
    def runtime(self) -> Runtime | None:
        """The stores, the registry, the provider (None in a replay: its conversation is not stored)."""
        ...

    @property
    def clock(self) -> Callable[[], float]:
        """The screen's clock (elapsed, "waiting N s"); snapshot tests freeze it."""
        ...

    @property
    def cursor_blink(self) -> bool: ...

    @property
    def prompt_history(self) -> list[str] | None:
        """Up/Down in the input box: the prompts of earlier runs (None: none kept)."""
        ...

    def save_prompt_history(self, history: list[str]) -> None: ...

    def display_specs(self, name: str) -> DisplaySpecs: ...

    def new_conversation(self) -> None: ...

    def open_conversation(self, conversation: str, at: int | None = None) -> None: ...

    def action_open_transcripts(self) -> None: ...

    def action_mcp_servers(self) -> None: ...
