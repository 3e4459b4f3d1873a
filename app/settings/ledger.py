"""Where the ledger lives and whose keys it holds: ``ledger`` (a shared
PostgreSQL ledger's URL; absent, the embedded sqlite one), ``team`` (the
namespace shared conversations' keys live in) and ``ledger_lease``. The
password never comes from here: ``PGPASSWORD`` or ``~/.pgpass`` (read by
libpq); a URL that carries one is refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .checks import ConfigError

__all__ = ["LedgerSettings", "DEFAULT_LEASE", "POSTGRES_SCHEMES", "parse_ledger", "url_has_password"]

#: Seconds a claim holds without being renewed (PostgreSQL ledgers).
DEFAULT_LEASE = 30.0
#: How a shared ledger's URL starts.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


@dataclass(slots=True, frozen=True)
class LedgerSettings:
    url: str | None = None
    team: str | None = None
    lease: float = DEFAULT_LEASE


def parse_ledger(data: dict[str, Any], where: str) -> LedgerSettings:
    ledger = data.get("ledger")
    if ledger is not None:
        if not isinstance(ledger, str) or not ledger.startswith(POSTGRES_SCHEMES):
            raise ConfigError(f"{where}: ledger must be a postgresql:// URL (leave it out for the embedded sqlite "
                              "ledger)")
        if url_has_password(ledger):
            raise ConfigError(f"{where}: ledger: passwords do not go in the config file; set PGPASSWORD (or use "
                              "~/.pgpass) in the environment")
    team = data.get("team")
    if team is not None and (not isinstance(team, str) or not team.strip()):
        raise ConfigError(f"{where}: team must be a non-empty name")
    lease = data.get("ledger_lease", DEFAULT_LEASE)
    if isinstance(lease, bool) or not isinstance(lease, int | float) or not 1 <= lease <= 86400:
        raise ConfigError(f"{where}: ledger_lease must be a number of seconds from 1 to 86400")
    return LedgerSettings(ledger, team, float(lease))


def url_has_password(url: str) -> bool:
    """True if a connection URL carries a password (``user:secret@``)."""
    try:
        return urlsplit(url).password is not None
    except ValueError:
        return False
