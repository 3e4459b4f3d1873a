"""Where a session sends its requests: a base URL, the headers (which hold
the key, so they are never printed), the wire format and the model. Built by
``app/runtime/endpoint.py`` from a profile; kept here, below the chat loop,
so the loop needs no config and no demo server to know where to send."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Endpoint"]


@dataclass(slots=True)
class Endpoint:
    dialect: str
    base_url: str
    model: str
    label: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # never printed: holds the key
    #: Stops what serves this endpoint when it is closed (the embedded demo model's server).
    closer: Callable[[], None] | None = field(default=None, repr=False)

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    def close(self) -> None:
        if self.closer is not None:
            closer, self.closer = self.closer, None
            closer()
