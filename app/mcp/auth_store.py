"""Where a server's OAuth tokens and client registration are kept: the
system keyring when one is available (the ``keyring`` package), otherwise
``<data dir>/mcp-auth/NAME.json``, created 0600 in a 0700 directory. Never
the config file.

One JSON record per server (and URL: a record made for another URL is not
used): the tokens, the absolute time the access token expires, the
registered client, and who signed in. It implements the SDK's
``TokenStorage``. The absolute expiry is ours: the SDK keeps ``expires_in``,
relative to when it was issued, so a token loaded by the next process would
look valid until the server refused it, and the SDK answers that 401 with a
whole new sign-in instead of the refresh that would have done.

Every token read or written is registered with the one redaction
(``app.stream.redact``) before anything can print or log it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ..stream.redact import register_secret

__all__ = ["TokenStore", "store_kind"]

_SERVICE = "callstream-mcp"


def _keyring() -> Any:
    """The keyring module when a usable backend is there (the ``fail`` and
    ``null`` backends, priority 0 or less, mean none), else None."""
    try:
        import keyring
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
        usable = float(getattr(backend, "priority", 0)) > 0
    except Exception:
        return None
    return keyring if usable else None


def store_kind() -> str:
    """``keyring (NAME)`` or ``file``: what ``mcp list`` and the README name."""
    ring = _keyring()
    return f"keyring ({type(ring.get_keyring()).__name__})" if ring is not None else "file"


class TokenStore:
    """The SDK's ``TokenStorage`` for one server."""

    def __init__(self, server: str, url: str, directory: Path) -> None:
        self.server = server
        self.url = url
        self.path = directory / f"{server}.json"
        self._ring = _keyring()

    # -- the record ------------------------------------------------------------

    def load(self) -> dict[str, Any]:
        text: str | None
        if self._ring is not None:
            try:
                text = self._ring.get_password(_SERVICE, self.server)
            except Exception:
                text = None
        else:
            try:
                text = self.path.read_text(encoding="utf-8")
            except OSError:
                text = None
        try:
            record = json.loads(text) if text else {}
        except ValueError:
            record = {}
        if not isinstance(record, dict) or record.get("url") != self.url:
            return {}
        for key in ("access_token", "refresh_token"):
            register_secret((record.get("tokens") or {}).get(key))
        register_secret((record.get("client") or {}).get("client_secret"))
        return record

    def save(self, record: dict[str, Any]) -> None:
        record["url"] = self.url
        text = json.dumps(record)
        if self._ring is not None:
            self._ring.set_password(_SERVICE, self.server, text)
            return
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        fresh = self.path.with_suffix(".tmp")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(fresh, self.path)

    def forget(self) -> bool:
        """Drop the record; True if there was one."""
        had = bool(self.load())
        if self._ring is not None:
            try:
                self._ring.delete_password(_SERVICE, self.server)
            except Exception:
                pass
        else:
            self.path.unlink(missing_ok=True)
        return had

    def update(self, **changes: Any) -> None:
        record = self.load()
        record.update(changes)
        self.save(record)

    # -- the SDK's TokenStorage --------------------------------------------------

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self.load().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: Any) -> None:
        register_secret(tokens.access_token)
        register_secret(tokens.refresh_token)
        record = self.load()
        old = record.get("tokens") or {}
        data = tokens.model_dump(mode="json", exclude_none=True)
        if not data.get("refresh_token") and old.get("refresh_token"):
            data["refresh_token"] = old["refresh_token"]  # a refresh that returned none keeps the old one
        record["tokens"] = data
        record["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        record.pop("refused", None)
        self.save(record)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        client = self.load().get("client")
        return OAuthClientInformationFull.model_validate(client) if client else None

    async def set_client_info(self, client_info: Any) -> None:
        register_secret(client_info.client_secret)
        self.update(client=client_info.model_dump(mode="json", exclude_none=True))
