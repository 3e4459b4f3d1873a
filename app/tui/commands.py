"""The built-in slash commands (registered in ``slash.COMMANDS`` on import).

Each handler gets the chat screen (the controller) and the rest of the line;
it talks to the session and the runtime, and answers with a note on the
screen. Nothing here is sent to the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..settings.checks import ConfigError
from ..stream.inert import inert, inert_json
from .slash import command, help_text

if TYPE_CHECKING:
    from .chat_screen import ChatScreen

__all__: list[str] = []


@command("help", "", "this list")
def _help(screen: ChatScreen, argument: str) -> None:
    screen.note(help_text())


@command("new", "", "start a new conversation (this one stays saved)", idle_only=True)
def _new(screen: ChatScreen, argument: str) -> None:
    screen.app.new_conversation()  # type: ignore[attr-defined]


@command("model", "[NAME]", "switch the model mid-conversation (the whole history goes along); no NAME: show it",
         idle_only=True)
def _model(screen: ChatScreen, argument: str) -> None:
    _switch(screen, None, argument or None)


@command("provider", "[PROFILE]", "switch to a profile or provider (openai-chat, anthropic, gemini, demo, …)",
         idle_only=True)
def _provider(screen: ChatScreen, argument: str) -> None:
    _switch(screen, argument or None, None)


def _switch(screen: ChatScreen, provider: str | None, model: str | None) -> None:
    runtime = screen.app.runtime  # type: ignore[attr-defined]
    if provider is None and model is None:
        profiles = ", ".join(runtime.config.providers) or "none configured"
        demo = " (the demo model speaks openai-chat, openai-responses, anthropic or gemini: /model gemini)" if (
            runtime.profile.provider == "demo") else ""
        screen.note(f"Talking to {runtime.endpoint.label} (model {runtime.endpoint.model}, wire format "
                    f"{runtime.endpoint.dialect}). Profiles: {inert(profiles)}.{demo}")
        return
    try:
        runtime.switch(screen.session, provider, model)
    except ConfigError as exc:
        screen.note(f"Cannot switch: {exc}", "error")
        return
    screen.refresh_provider()
    entries = len(screen.session.history)
    screen.note(f"Now talking to {runtime.endpoint.label} (model {runtime.endpoint.model}, wire format "
                f"{runtime.endpoint.dialect}); the next request carries the whole conversation "
                f"({entries} entr{'y' if entries == 1 else 'ies'}).")


@command("system", "[TEXT]", "set the system prompt for what follows; no TEXT: show it; 'none' clears it")
def _system(screen: ChatScreen, argument: str) -> None:
    session = screen.session
    if not argument:
        screen.note(f"System prompt: {session.system}" if session.system else "No system prompt is set.")
        return
    session.system = None if argument.lower() == "none" else argument
    screen.note("System prompt cleared." if session.system is None else "System prompt set for the next request.")


@command("tools", "[on|off NAME]", "the tools this conversation offers; switch one on or off")
def _tools(screen: ChatScreen, argument: str) -> None:
    runtime = screen.app.runtime  # type: ignore[attr-defined]
    offered = runtime.offered()
    words = argument.split()
    if words:
        if len(words) != 2 or words[0] not in ("on", "off"):
            screen.note("Usage: /tools, /tools on NAME, /tools off NAME", "warning")
            return
        verb, name = words
        if name not in offered.names():
            screen.note(f"No tool {inert(name)!r} here (offered: {', '.join(offered.names()) or 'none'}).", "warning")
            return
        if verb == "off":
            screen.disabled_tools.add(name)
        else:
            screen.disabled_tools.discard(name)
        runtime.apply_tools(screen.session, screen.disabled_tools)
    names = offered.names()
    if not names:
        screen.note("This conversation offers no tools.")
        return
    listed = ", ".join(f"{n} ({'off' if n in screen.disabled_tools else 'on'})" for n in names)
    screen.note(f"Tools offered: {inert(listed)}.")


@command("retry", "", "run the last failed turn again (what already ran comes back from the ledger)",
         idle_only=True)
def _retry(screen: ChatScreen, argument: str) -> None:
    screen.action_retry()


@command("copy", "[code [N]|card|result]", "copy the last reply (or its Nth code block, the last card's "
         "shown fields, its result) to the clipboard; Ctrl+Y picks any block")
def _copy(screen: ChatScreen, argument: str) -> None:
    from .copying import copy_command

    copy_command(screen, argument)


@command("export", "[markdown|json] [FILE]", "write this conversation to a file (Markdown shows allow-listed "
         "fields only)")
def _export(screen: ChatScreen, argument: str) -> None:
    from ..store import export_document, markdown_of

    words = argument.split(maxsplit=1)
    form = "markdown"
    if words and words[0] in ("markdown", "md", "json"):
        form = "json" if words[0] == "json" else "markdown"
        words = words[1:]
    runtime = screen.app.runtime  # type: ignore[attr-defined]
    stored = runtime.store.load(screen.session.conversation)
    if stored is None:
        screen.note("Nothing to export yet: the conversation has no messages.", "warning")
        return
    target = Path(words[0]).expanduser() if words else Path.cwd() / (
        f"callstream-{stored.id[:8]}.{'json' if form == 'json' else 'md'}")
    if form == "json":
        text = inert_json(export_document(stored)) + "\n"
    else:
        text = inert(markdown_of(stored, screen.app.display_specs))  # type: ignore[attr-defined]
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        screen.note(f"Cannot write {target}: {exc.strerror or exc}", "error")
        return
    screen.note(f"Exported the conversation as {form} to {target}.")


@command("fork", "", "a new conversation holding this one up to the selected entry (Alt+↑ selects)",
         idle_only=True)
def _fork(screen: ChatScreen, argument: str) -> None:
    screen.action_fork()


@command("mcp", "", "the MCP servers: each one's state and tools (connecting, ready, failed and why)")
def _mcp(screen: ChatScreen, argument: str) -> None:
    screen.app.action_mcp_servers()  # type: ignore[attr-defined]


@command("clear", "", "clear the screen (the conversation and what the model sees are unchanged; /new starts over)")
def _clear(screen: ChatScreen, argument: str) -> None:
    screen.clear_screen()


