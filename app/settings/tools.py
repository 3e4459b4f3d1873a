"""The tools a config names: ``[tools.NAME]`` command tools (a command line,
a JSON Schema checked when the config loads, what a card may show), and the
names of the built-in tools a profile's ``tools = [...]`` may list."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from ..stream.limits import TooDeep, check_depth, loads
from .approval import approval_mode
from .checks import ConfigError, check_keys, positive_float
from .mcp import MCPConfigError, parse_display

__all__ = ["BUILTIN_TOOL_NAMES", "READER_NAME", "TOOL_KEYS", "CommandToolConfig", "parse_tool", "check_profile_tools"]

#: The demo's support-store tools (app/tools/builtin.py builds them under these
#: names): offered with the demo provider, and elsewhere only when a profile lists them.
BUILTIN_TOOL_NAMES = ("search_orders", "get_order", "create_ticket")
#: The built-in tool through which the model reads an MCP server's resources (``app/mcp/resources.py``),
#: offered while a connected server declares resources; a profile may name it.
READER_NAME = "read_resource"

#: Seconds a command tool may run unless its table says otherwise.
DEFAULT_TIMEOUT = 30.0

#: The keys a ``[tools.NAME]`` table may hold; anything else gets a warning naming it.
TOOL_KEYS = {"command", "description", "parameters", "read_only", "display", "timeout", "approval", "output"}
#: What a command tool's stdout is: text (the result), or an image the model is sent as an image.
TOOL_OUTPUTS = ("text", "image")


@dataclass(slots=True)
class CommandToolConfig:
    name: str
    command: list[str]
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    read_only: bool = False
    display: list[tuple[str, str]] = field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT
    approval: str | None = None
    #: ``image``: stdout is an image's bytes, sent to the model as an image (``tools.images``).
    output: str = "text"


def parse_tool(name: str, table: Any, where: str, warnings: list[str]) -> CommandToolConfig:
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    check_keys(table, TOOL_KEYS, where, warnings)
    command = table.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
        raise ConfigError(f"{where}.command must be a command line (a string or a list of strings)")
    parameters = table.get("parameters", {"type": "object", "properties": {}})
    if isinstance(parameters, str):
        try:
            parameters = loads(parameters)
        except ValueError as exc:
            raise ConfigError(f"{where}.parameters is not JSON: {exc}") from None
    if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
        raise ConfigError(f"{where}.parameters must be a JSON Schema for an object")
    _check_schema(name, parameters, where)
    try:
        display = parse_display(table.get("display", []), f"{where}.display")
    except MCPConfigError as exc:
        raise ConfigError(str(exc)) from None
    output = table.get("output", "text")
    if output not in TOOL_OUTPUTS:
        raise ConfigError(f"{where}.output must be one of {', '.join(TOOL_OUTPUTS)} (got {str(output)[:40]!r})")
    return CommandToolConfig(
        name=name,
        command=command,
        description=str(table.get("description", "")),
        parameters=parameters,
        read_only=bool(table.get("read_only", False)),
        display=display,
        timeout=positive_float(table, "timeout", DEFAULT_TIMEOUT, where),
        approval=approval_mode(table.get("approval"), f"{where}.approval"),
        output=output,
    )


def _check_schema(name: str, parameters: dict[str, Any], where: str) -> None:
    """A tool schema that is not a schema (``required = 5``) is refused when
    the config loads, naming the tool — not when the model first calls it."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs installed
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

    try:
        check_depth(parameters)
        Draft202012Validator.check_schema(parameters)
    except TooDeep as exc:
        raise ConfigError(f"{where}.parameters: {exc}") from None
    except SchemaError as exc:
        at = ".".join(str(p) for p in exc.absolute_path) or "the top level"
        raise ConfigError(f"{where}.parameters is not a valid JSON Schema ({exc.message[:120]} at {at}); "
                          f"the tool {name!r} cannot be offered until it is fixed") from None


def check_profile_tools(where: str, profile: str, listed: list[str], tools: set[str], servers: set[str]) -> None:
    """Every tool ``profile`` lists is a built-in, one of ``tools`` (the
    ``[tools.*]`` tables) or a tool of one of ``servers`` (``server__tool``)."""
    for tool in listed:
        server = tool.split("__", 1)[0] if "__" in tool else None
        if tool not in tools and tool not in BUILTIN_TOOL_NAMES and server not in servers and not (
                tool == READER_NAME and servers):
            raise ConfigError(f"{where}: providers.{profile}.tools names {tool!r}, which is neither a built-in "
                              f"tool ({', '.join(BUILTIN_TOOL_NAMES)}), a [tools.*] table nor an MCP "
                              "server's tool (server__tool)")
