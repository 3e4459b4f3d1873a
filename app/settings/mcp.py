"""``[mcp.NAME]`` tables of the config file, and the ``mcpServers`` JSON other
clients use (Claude Desktop, ``.mcp.json``, oterm).

Example::

    [mcp.git]
    command = "mcp-server-git"
    args = ["--repository", "${REPO:-.}"]
    env = { GIT_AUTHOR_NAME = "${GIT_AUTHOR_NAME:-callstream}" }
    startup_timeout = 10            # seconds to connect and list the tools
    tool_timeout = 60               # seconds one call may take
    tools = ["git_status", "git_commit"]   # advertise only these (absent: all)
    disabled_tools = ["git_reset"]
    approval = "ask"                # "never" | "ask" | "always-ask" (absent: from the tool's annotations)
    log_level = "info"              # its log messages at and above this reach its log and /mcp ("off": none)
    instructions = true             # offer its instructions to the model
    roots = ["${REPO:-.}"]          # the directories it is told of (absent: the working directory)
    sampling = "ask"                # its requests to the model: "ask" the person, "allow" without asking, "deny"

    [mcp.git.tool.git_commit]
    display = [["message", "Message"]]     # what a card may show; everything else stays hidden
    approval = "always-ask"

    [mcp.search]
    url = "http://127.0.0.1:8931/mcp"      # Streamable HTTP ("transport = \"sse\"" for a legacy SSE server)
    headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }

``${VAR}`` and ``${VAR:-default}`` are expanded when a server is started,
from the environment, and only there: the parsed config keeps the text as
written, so nothing that expands a secret ever writes it back.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..stream.limits import loads
from ..stream.sampling import SAMPLING_MODES
from .mcp_auth import MCPAuthConfig, parse_auth

__all__ = ["MCPServerConfig", "ToolOptions", "parse_servers", "expand", "from_mcp_json", "APPROVAL_MODES",
           "MCPConfigError", "named_secrets", "LiteralToken", "literal_tokens", "LOG_LEVELS"]

APPROVAL_MODES = ("never", "ask", "always-ask")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MCPConfigError(ValueError):
    """An ``[mcp.*]`` table (or an imported file) that cannot be used; says where and why."""


@dataclass(slots=True)
class ToolOptions:
    display: list[tuple[str, str]] = field(default_factory=list)
    approval: str | None = None


@dataclass(slots=True)
class MCPServerConfig:
    name: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: "stdio" | "http" | "sse"
    transport: str = "stdio"
    enabled: bool = True
    startup_timeout: float = 30.0
    tool_timeout: float = 120.0
    tools: list[str] | None = None
    disabled_tools: list[str] = field(default_factory=list)
    approval: str | None = None
    tool: dict[str, ToolOptions] = field(default_factory=dict)
    #: The least severe ``notifications/message`` level kept (``LOG_LEVELS``).
    log_level: str = "info"
    #: Whether the server's ``instructions`` are offered to the model.
    instructions: bool = True
    #: The directories it is told of (``roots/list``); None: the working directory.
    roots: list[str] | None = None
    #: Its requests to the model (``sampling/createMessage``): "ask" | "allow" | "deny" (``SAMPLING_MODES``).
    sampling: str = "ask"
    #: ``[mcp.NAME.auth]``: OAuth client settings (app/settings/mcp_auth.py)
    auth: MCPAuthConfig = field(default_factory=MCPAuthConfig)

    def allows(self, tool: str) -> bool:
        return (self.tools is None or tool in self.tools) and tool not in self.disabled_tools


def expand(text: str, environ: dict[str, str] | None = None) -> str:
    """``${VAR}`` / ``${VAR:-default}`` from the environment; an unset
    ``${VAR}`` without a default is an error naming the variable."""
    env = os.environ if environ is None else environ

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise MCPConfigError(f"${{{name}}} is not set in the environment")
            return default
        return value

    return _VAR.sub(one, text)


def named_secrets(config: MCPServerConfig, environ: dict[str, str] | None = None) -> list[str]:
    """The values a server's ``headers`` and ``env`` take from the
    environment (``${VAR}``, not a default written in the config), and any
    token-shaped literal written there: a server may echo any of them back
    ("token … is expired"), so each is registered with the one redaction
    before the server starts. An unset variable names nothing (starting the
    server states it)."""
    env = os.environ if environ is None else environ
    found: list[str] = []
    for key, text in [*config.headers.items(), *config.env.items()]:
        for match in _VAR.finditer(text):
            value = env.get(match.group(1))
            if value:
                found.append(value)
        literal = _literal_token(key, text)
        if literal is not None:
            found.append(literal)
    return found


#: A credential by its prefix (OpenAI, Stripe, GitHub, GitLab, Slack, AWS, Google, Hugging Face, npm, PyPI, JWT, …).
_KNOWN_TOKEN = re.compile(r"^(?:sk-|sk_|pk_|rk_|gh[pousr]_|github_pat_|glpat-|xox[abporse]-|AKIA|ASIA|AIza|ya29\.|"
                          r"eyJ|hf_|npm_|pypi-|dop_v1_|shpat_)[A-Za-z0-9._~+/=:-]{8,}$")
#: An opaque run of 20 or more token characters.
_OPAQUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~+/=:-]{19,}$")
#: A key whose value is a secret by its name.
_SECRET_KEY = re.compile(r"(?i)token|secret|passw|api[-_]?key|auth|credential|cookie|session|private|(?:^|_)key$")
#: ``Authorization: Bearer …`` and its kin: what follows is the credential.
_SCHEME = re.compile(r"(?i)^(bearer|basic|token|bot)\s+")


def _literal_token(key: str, value: str) -> str | None:
    """The credential written literally in one ``env`` / ``headers`` value
    (what is left once every ``${VAR}`` is taken out), or None."""
    literal = _VAR.sub("", value).strip()
    text = _SCHEME.sub("", literal)
    if not text or any(c.isspace() for c in text) or "://" in text or text.startswith(("/", "~", ".", "-")):
        return None
    mixed = any(c.isdigit() for c in text) and any(c.isalpha() for c in text)
    if _KNOWN_TOKEN.match(text) or (text != literal and len(text) >= 8):
        return text
    if len(text) >= 8 and mixed and _SECRET_KEY.search(key):
        return text
    return text if _OPAQUE.match(text) and mixed else None


@dataclass(slots=True, frozen=True)
class LiteralToken:
    """A token-shaped value written literally in an imported server's table:
    where it is (``env`` / ``headers``, the key) and the ``${VAR}`` form to
    keep it in the environment instead. Never the value."""

    server: str
    where: str
    key: str
    variable: str
    offer: str


def literal_tokens(server: str, table: dict[str, Any]) -> list[LiteralToken]:
    """Every token-shaped literal in ``table``'s ``env`` and ``headers``."""
    found: list[LiteralToken] = []
    for where in ("env", "headers"):
        values = table.get(where)
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            if not isinstance(value, str) or _literal_token(str(key), value) is None:
                continue
            if where == "env" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(key)):
                variable = str(key).upper()
            else:
                tail = "TOKEN" if str(key).lower() in ("authorization", "proxy-authorization") else str(key)
                variable = re.sub(r"[^A-Za-z0-9]+", "_", f"{server}_{tail}").strip("_").upper()
            scheme = _SCHEME.match(_VAR.sub("", value).strip())
            found.append(LiteralToken(server, where, str(key), variable,
                                      (scheme.group(0) if scheme else "") + f"${{{variable}}}"))
    return found


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MCPConfigError(f"{where} must be a list of strings")
    return list(value)


def _table(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise MCPConfigError(f"{where} must be a table of strings")
    return {str(k): v for k, v in value.items()}


def _seconds(table: dict[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        raise MCPConfigError(f"{where}.{key} must be a number of seconds from 0 to 3600")
    return float(value)


def _approval(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if value not in APPROVAL_MODES:
        raise MCPConfigError(f"{where} must be one of {', '.join(APPROVAL_MODES)}")
    return str(value)


def parse_display(value: Any, where: str) -> list[tuple[str, str]]:
    """A display allow-list as a config file writes it (field names, or
    ``[field, label]`` pairs): the one reading for command tools and MCP tools."""
    out: list[tuple[str, str]] = []
    if not isinstance(value, list):
        raise MCPConfigError(f"{where} must be a list of field names or [field, label] pairs")
    for item in value:
        if isinstance(item, str):
            out.append((item, item.replace("_", " ").capitalize()))
        elif isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item):
            out.append((item[0], item[1]))
        else:
            raise MCPConfigError(f"{where} entries are field names or [field, label] pairs")
    return out


_KNOWN = frozenset({"command", "args", "env", "cwd", "url", "headers", "transport", "type", "enabled",
                    "startup_timeout", "tool_timeout", "tools", "disabled_tools", "approval", "tool", "auth"})

#: What a server's own notices may carry (issue 26): ``log_level`` (its ``notifications/message``
#: lines at and above it reach its log and the /mcp panel; "off" keeps none) and ``instructions``
#: (whether its ``instructions`` are offered to the model).
_KNOWN = _KNOWN | {"log_level", "instructions", "roots", "sampling"}
#: The specification's log levels (RFC 5424), least severe first, and "off".
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "off")


def parse_server(name: str, table: Any, where: str) -> MCPServerConfig:
    if not _NAME.match(name):
        raise MCPConfigError(f"{where}: a server name is 1 to 40 letters, digits, '_' or '-'")
    if not isinstance(table, dict):
        raise MCPConfigError(f"{where} must be a table")
    unknown = sorted(set(table) - _KNOWN)
    if unknown:
        raise MCPConfigError(f"{where}: unknown key {unknown[0]!r}")
    server = MCPServerConfig(name=name)
    command, url = table.get("command"), table.get("url")
    if (command is None) == (url is None):
        raise MCPConfigError(f"{where} needs either command (a stdio server) or url (an HTTP server)")
    if command is not None:
        if not isinstance(command, str) or not command:
            raise MCPConfigError(f"{where}.command must be a program name or path")
        server.command = command
        server.args = _strings(table.get("args", []), f"{where}.args")
        server.env = _table(table.get("env", {}), f"{where}.env")
        if "cwd" in table:
            if not isinstance(table["cwd"], str):
                raise MCPConfigError(f"{where}.cwd must be a path")
            server.cwd = table["cwd"]
    else:
        if not isinstance(url, str) or not url.startswith(("http://", "https://", "${")):
            raise MCPConfigError(f"{where}.url must be an http:// or https:// URL")
        server.url = url
        server.headers = _table(table.get("headers", {}), f"{where}.headers")
        transport = table.get("transport", table.get("type", "sse" if url.rstrip("/").endswith("/sse") else "http"))
        if transport in ("streamable-http", "streamable_http"):
            transport = "http"
        if transport not in ("http", "sse"):
            raise MCPConfigError(f"{where}.transport must be \"http\" or \"sse\" for a url")
        server.transport = transport
        if "auth" in table:
            server.auth = parse_auth(table["auth"], f"{where}.auth", MCPConfigError)
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise MCPConfigError(f"{where}.enabled must be true or false")
    server.enabled = enabled
    server.startup_timeout = _seconds(table, "startup_timeout", server.startup_timeout, where)
    server.tool_timeout = _seconds(table, "tool_timeout", server.tool_timeout, where)
    if "tools" in table:
        server.tools = _strings(table["tools"], f"{where}.tools")
    server.disabled_tools = _strings(table.get("disabled_tools", []), f"{where}.disabled_tools")
    server.approval = _approval(table.get("approval"), f"{where}.approval")
    server.log_level = table.get("log_level", server.log_level)
    if server.log_level not in LOG_LEVELS:
        raise MCPConfigError(f"{where}.log_level must be one of {', '.join(LOG_LEVELS)}")
    if "roots" in table:
        server.roots = _strings(table["roots"], f"{where}.roots")
    server.instructions = table.get("instructions", server.instructions)
    if not isinstance(server.instructions, bool):
        raise MCPConfigError(f"{where}.instructions must be true or false")
    server.sampling = table.get("sampling", server.sampling)
    if server.sampling not in SAMPLING_MODES:
        raise MCPConfigError(f"{where}.sampling must be one of {', '.join(SAMPLING_MODES)}")
    per_tool = table.get("tool", {})
    if not isinstance(per_tool, dict):
        raise MCPConfigError(f"{where}.tool must be a table of [{where}.tool.NAME] tables")
    for tool, options in per_tool.items():
        at = f"{where}.tool.{tool}"
        if not isinstance(options, dict):
            raise MCPConfigError(f"{at} must be a table")
        server.tool[tool] = ToolOptions(parse_display(options.get("display", []), f"{at}.display"),
                                        _approval(options.get("approval"), f"{at}.approval"))
    return server


def parse_servers(data: Any, where: str) -> dict[str, MCPServerConfig]:
    """The ``[mcp]`` table of a config file."""
    if not isinstance(data, dict):
        raise MCPConfigError(f"{where}: [mcp] must be a table of [mcp.NAME] servers")
    return {name: parse_server(name, table, f"{where}: mcp.{name}") for name, table in data.items()}


def from_mcp_json(text: str, where: str, renamed: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """The ``mcpServers`` of a Claude Desktop / ``.mcp.json`` / oterm file as
    ``[mcp.NAME]`` tables (``${VAR}`` left as written). Each one is checked
    by ``parse_server`` so an import never writes a table we would refuse.

    A name outside the server-name alphabet has those characters made ``_``;
    when two names become one (``a.b``, ``a/b``), the later gets ``_2``,
    ``_3``… so no server is lost. ``renamed`` (if given) gets each name
    that changed, as written → as imported."""
    try:
        document = loads(text)
    except ValueError as exc:
        raise MCPConfigError(f"{where}: not JSON ({exc})") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise MCPConfigError(f"{where}: no \"mcpServers\" object")
    out: dict[str, dict[str, Any]] = {}
    for name, entry in servers.items():
        at = f"{where}: mcpServers.{name}"
        if not isinstance(entry, dict):
            raise MCPConfigError(f"{at} must be an object")
        table: dict[str, Any] = {}
        for key in ("command", "args", "env", "cwd", "url", "headers"):
            if key in entry:
                table[key] = entry[key]
        kind = entry.get("type") or entry.get("transport")
        if kind in ("sse",):
            table["transport"] = "sse"
        if entry.get("disabled") is True:
            table["enabled"] = False
        base = re.sub(r"[^A-Za-z0-9_-]", "_", str(name))[:40] or "server"
        safe, n = base, 1
        while safe in out:
            n += 1
            safe = f"{base[:40 - len(str(n)) - 1]}_{n}"
        parse_server(safe, table, at)
        out[safe] = table
        if renamed is not None and safe != name:
            renamed[str(name)] = safe
    return out
