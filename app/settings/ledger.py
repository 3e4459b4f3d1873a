"""Where the ledger lives and whose keys it holds: ``ledger`` (a shared
PostgreSQL ledger's URL; absent, the embedded sqlite one), ``team`` (the
namespace shared conversations' keys live in) and ``ledger_lease``. The
password never comes from here: ``PGPASSWORD`` or ``~/.pgpass`` (read by
libpq); a connection string that carries one, in any form libpq reads, is
refused."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from .checks import ConfigError

__all__ = ["LedgerSettings", "DEFAULT_LEASE", "POSTGRES_SCHEMES", "parse_ledger", "url_has_password",
           "url_passwords", "is_password_parameter"]

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
        forms = [form for form, _ in url_passwords(ledger)] if isinstance(ledger, str) else []
        if forms:  # first, whatever else is wrong with it: a password is never quoted back
            raise ConfigError(f"{where}: ledger holds a password ({forms[0]}); passwords do not go in the config "
                              "file: set PGPASSWORD (or use ~/.pgpass) in the environment")
        if not isinstance(ledger, str) or not ledger.startswith(POSTGRES_SCHEMES):
            raise ConfigError(f"{where}: ledger must be a postgresql:// URL (leave it out for the embedded sqlite "
                              "ledger)")
    team = data.get("team")
    if team is not None and (not isinstance(team, str) or not team.strip()):
        raise ConfigError(f"{where}: team must be a non-empty name")
    lease = data.get("ledger_lease", DEFAULT_LEASE)
    if isinstance(lease, bool) or not isinstance(lease, int | float) or not 1 <= lease <= 86400:
        raise ConfigError(f"{where}: ledger_lease must be a number of seconds from 1 to 86400")
    return LedgerSettings(ledger, team, float(lease))


#: ``password=`` in a key=value conninfo string (``host=db password=…``), and its value (quoted or bare).
_CONNINFO = re.compile(r"""(?i)(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'?|\S*)""")


def is_password_parameter(pair: str) -> bool:
    """Whether one ``name=value`` of a URL's query is a password: libpq
    percent-decodes the name (``pass%77ord``); any case is refused."""
    return unquote(pair.partition("=")[0]).strip().lower() == "password"


def url_passwords(url: str) -> list[tuple[str, str]]:
    """Every password a connection string carries, in each form libpq reads,
    as (the form, for a message; the value as written): the URL's userinfo
    (``user:secret@``), a ``password`` query parameter, ``password=`` in a
    key=value conninfo string. ``[]`` when it carries none."""
    text = url.strip()
    if not text.lower().startswith(POSTGRES_SCHEMES):
        return [("password=… in the connection string", m.group(1).strip("'")) for m in _CONNINFO.finditer(text)]
    rest = text.split("://", 1)[1]
    before_query, _, query = rest.partition("?")
    found: list[tuple[str, str]] = []
    userinfo = before_query.rpartition("@")[0] if "@" in before_query else ""
    if ":" in userinfo:
        found.append(("user:password@ in the URL", userinfo.partition(":")[2]))
    for pair in query.split("#")[0].split("&"):
        if is_password_parameter(pair):
            found.append(("?password=… in the URL", pair.partition("=")[2]))
    return found


def url_has_password(url: str) -> bool:
    """True if a connection string carries a password in any form libpq reads."""
    return bool(url_passwords(url))
