"""``callstream mcp list [--json] | import FILE | doctor``: the MCP servers of
the config file, what each offers, and what a provider would refuse."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..stream.inert import inert, inert_json
from .common import fail

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    mcp = sub.add_parser(
        "mcp",
        help="MCP tool servers: list them and their tools, import mcpServers JSON, check schemas, read resources",
        description="list: start every [mcp.NAME] server of the config, say how each went and what tools it "
        "offers. import FILE: add the mcpServers of a Claude Desktop / .mcp.json / oterm file as [mcp.NAME] "
        "tables. doctor: check every server's tools against all four wire formats; exit 1 if any would be "
        "refused. resources NAME: a server's resources and templates. read NAME URI: one resource.",
    )
    verbs = mcp.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="each server's state and tools")
    listing.add_argument("--json", action="store_true", help="print the servers as a JSON array")
    listing.add_argument("--login", action="store_true",
                         help="sign in (browser) to each server that asks for it, instead of failing")
    imported = verbs.add_parser("import", help="add the mcpServers of a JSON file to the config")
    imported.add_argument("file")
    verbs.add_parser("doctor", help="name the server, tool and field each provider would reject")
    called = verbs.add_parser("call", help="run one tool of a server, without a model (as a session would)")
    called.add_argument("name", help="the server ([mcp.NAME])")
    called.add_argument("tool", help="the tool, by the server's own name for it")
    called.add_argument("arguments", nargs="?", help="the arguments as one JSON object (absent: {})")
    called.add_argument("--approve", action="store_true", help="run it without asking (a side effect asks otherwise)")
    called.add_argument("--login", action="store_true",
                        help="sign in (browser) if the server asks for it, instead of failing")
    called.add_argument("--json", action="store_true", help="print the outcome as one JSON object")
    called.add_argument("--elicit-defaults", action="store_true",
                        help="accept a server's form request with the defaults its schema gives (declined without)")
    listed = verbs.add_parser("resources", help="the resources and resource templates a server offers")
    listed.add_argument("name", help="the server ([mcp.NAME])")
    reading = verbs.add_parser("read", help="read one resource of a server (as the model's read_resource would)")
    reading.add_argument("name", help="the server ([mcp.NAME])")
    reading.add_argument("uri", help="the resource's URI")
    login = verbs.add_parser("login", help="sign in to an OAuth-protected server (opens the browser)")
    login.add_argument("name")
    login.add_argument("--no-browser", action="store_true", help="only print the URL (a remote terminal)")
    logout = verbs.add_parser("logout", help="forget a server's tokens")
    logout.add_argument("name")


def run(args: argparse.Namespace) -> int:
    import asyncio

    from ..settings.checks import ConfigError

    try:
        if args.verb == "import":
            return _import(args.file)
        if args.verb in ("resources", "read"):
            from . import mcp_resources

            if args.verb == "read":
                return asyncio.run(mcp_resources.read(args.name, args.uri))
            return asyncio.run(mcp_resources.resources(args.name))
        if args.verb in ("call", "login", "logout"):
            from . import mcp_call, mcp_login

            if args.verb == "call":
                return asyncio.run(mcp_call.call(args.name, args.tool, args.arguments, args.approve, args.json,
                                                 args.login, args.elicit_defaults))
            if args.verb == "login":
                return asyncio.run(mcp_login.login(args.name, browser=not args.no_browser))
            return mcp_login.logout(args.name)
        return asyncio.run(_started(args.verb, getattr(args, "json", False), getattr(args, "login", False)))
    except ConfigError as exc:
        return fail(str(exc))


async def _hub(login: bool = False) -> Any:
    from ..files.paths import data_dir
    from ..mcp.tools import mark_refusals, open_hub
    from ..settings.config import load_config
    from ..tools.registry import Registry

    config = load_config()
    hub = open_hub(config.mcp, data_dir() / "mcp-logs", output_limit=config.limits.tool_output_bytes)
    if login:  # someone is there: a server that asks gets a sign-in (its own loopback listener)
        from ..mcp.auth import SignIn

        for server in hub.servers:
            if server.config.url is not None:
                server.sign_in = SignIn()
                await server.sign_in.open()
    hub.start()
    await hub.wait_settled()
    for server in hub.servers:
        if server.sign_in is not None:
            await server.sign_in.loopback.close()
    # a tool whose name a command tool or an earlier server holds is refused, as a session would
    mark_refusals(hub.servers, Registry.default(data_dir(), config))
    return hub


async def _started(verb: str, as_json: bool, login: bool = False) -> int:
    hub = await _hub(login)
    try:
        if not hub.servers:
            print("No MCP servers are configured ([mcp.NAME] tables in the config file; callstream mcp import "
                  "FILE adds them).", file=sys.stderr)
            return 0 if verb == "list" else 1
        return _list(hub, as_json) if verb == "list" else _doctor(hub)
    finally:
        await hub.close()


def _list(hub: Any, as_json: bool) -> int:
    from ..mcp import tool_name
    from ..mcp.auth_login import sign_in_state

    statuses = hub.statuses()
    signed = {server.config.name: sign_in_state(server) for server in hub.servers}
    if as_json:
        # a server's own words (a reason, its stderr, a tool's name) as JSON that cannot drive a terminal, redacted
        sys.stdout.write(inert_json([{**s.to_dict(), **signed[s.name]} for s in statuses]))
        sys.stdout.write("\n")
    else:
        for status in statuses:
            print(inert(status.line()))
            if signed[status.name]["sign_in"] != "not needed":
                print(inert(f"  sign-in: {signed[status.name]['sign_in_line']}"))
            for tool in status.tools:
                kind = "read-only" if tool.read_only else "side effect"
                about = tool.description.splitlines()[0] if tool.description.strip() else ""
                refused = status.refused.get(tool.name) or tool.unsupported
                print(inert(f"  {tool_name(status.name, tool.name)}  ({kind})  "
                            + (f"{tool.name!r} {refused}" if refused else about)))
                if tool.note and not refused:
                    print(inert(f"    ⚠ schema: {tool.note}"))
    return 0 if all(s.state in ("ready", "disabled") for s in statuses) else 1


def _doctor(hub: Any) -> int:
    from ..mcp import tool_name
    from ..stream.dialects.schemas import DIALECT_NAMES, problems

    bad = 0
    for status in hub.statuses():
        if status.state == "failed":
            print(inert(status.line()))
            bad += 1
            continue
        for tool in status.tools:
            name = tool_name(status.name, tool.name)
            refused = status.refused.get(tool.name) or tool.unsupported
            if refused:
                print(inert(f"{status.name} · {tool.name} ({name}): {refused}"))
                bad += 1
                continue
            for dialect in DIALECT_NAMES:
                for problem in problems(dialect, tool.input_schema):
                    print(inert(f"{status.name} · {tool.name} ({name}) · {dialect}: {problem.path}: "
                                f"{problem.reason}"))
                    bad += 1
    if bad:
        print(f"{bad} problem{'s' if bad != 1 else ''}: a provider would refuse (or get less than) the request "
              "that offers these tools, or a tool is not offered (disable them with disabled_tools, or fix the "
              "server).", file=sys.stderr)
        return 1
    print("Every tool of every server is accepted by all four wire formats.")
    return 0


def _inline(value: Any) -> Any:
    """``value`` with every table in it an inline table (an inline table holds no other kind)."""
    import tomlkit

    if isinstance(value, dict):
        table = tomlkit.inline_table()
        for key, inner in value.items():
            table[key] = _inline(inner)
        return table
    if isinstance(value, list):
        return [_inline(inner) for inner in value]
    return value


def _import(file: str) -> int:
    from pathlib import Path

    from ..files.paths import config_path
    from ..settings.config import load_config
    from ..settings.configfile import edit_config
    from ..settings.mcp import MCPConfigError, from_mcp_json

    source = Path(file)
    renamed: dict[str, str] = {}
    try:
        tables = from_mcp_json(source.read_text(encoding="utf-8"), str(source), renamed)
    except OSError as exc:
        return fail(f"{source}: cannot read it ({exc.strerror or exc})")
    except MCPConfigError as exc:
        return fail(str(exc))
    existing = load_config().mcp
    added = [name for name in tables if name not in existing]
    skipped = [name for name in tables if name in existing]
    path = config_path()

    def change(document: Any) -> None:
        import tomlkit
        from tomlkit.items import InlineTable

        mcp = document.get("mcp")
        if mcp is None:
            mcp = tomlkit.table(is_super_table=True)
            document["mcp"] = mcp
        if isinstance(mcp, InlineTable):  # ``mcp = { … }``: the servers join it in its own (inline) form
            for name in added:
                mcp[name] = _inline(tables[name])
            return
        for name in added:
            table = tomlkit.table()
            table.comment(f"imported from {source.name}")
            for key, value in tables[name].items():
                table[key] = value
            mcp[name] = table

    if added:
        edit_config(path, change)
    written = {safe: original for original, safe in renamed.items()}
    for name in added:
        was = (f" (mcpServers {json.dumps(written[name])}: a server name holds only letters, digits, '_' and "
               "'-')") if name in written else ""
        print(inert(f"added [mcp.{name}] to {path}{was}"))
        _warn_literal_tokens(name, tables[name], path)
    for name in skipped:
        print(inert(f"kept the existing [mcp.{name}] (not replaced)"), file=sys.stderr)
    if not tables:
        print("the file lists no servers", file=sys.stderr)
    return 0


def _warn_literal_tokens(name: str, table: dict[str, Any], path: Any) -> None:
    """A token copied as a literal (a Claude Desktop file holds them so): say
    where it is (never the value) and offer the ``${VAR}`` form."""
    import re

    from ..settings.mcp import literal_tokens

    for found in literal_tokens(name, table):
        key = found.key if re.fullmatch(r"[A-Za-z0-9_-]+", found.key) else json.dumps(found.key)
        print(inert(f"warning: [mcp.{name}] {found.where}: {key} holds what looks like a literal token, copied as "
                    f"it was into {path}. To keep it out of the file, make it {key} = \"{found.offer}\" and set "
                    f"{found.variable} in the environment."),
              file=sys.stderr)
