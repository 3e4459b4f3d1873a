"""What every command shares: the one way to state a failure, the one way
to open the transcript store, and the provider options.

A conversation named on the command line is resolved by ``Store.resolve``
(its id, or the start of exactly one; the id alphabet checked first): an
unknown or ambiguous one raises, and ``app.cli.main`` prints the sentence
(an ambiguous prefix lists its matches) and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..stream.inert import inert

if TYPE_CHECKING:
    from ..store.transcripts import Store

__all__ = ["fail", "open_store", "recording_arg", "provider_options", "prompt_options", "warn_config"]


def fail(message: str) -> int:
    """Print one inert line to stderr and return the usage/configuration exit code (2)."""
    print(f"callstream: {inert(message)}", file=sys.stderr)
    return 2


def open_store(display: object = None) -> Store:
    """The transcript store in the data dir (``display``: the tools' allow-lists, for the search index)."""
    from ..files.paths import data_dir
    from ..store.transcripts import Store

    return Store(data_dir() / "callstream.db", display)  # type: ignore[arg-type]


def recording_arg(text: str) -> Path:
    """The recording ``replay`` or ``audit`` was given: a file that exists
    (``read_recording`` says what is wrong with it), else a conversation —
    its id or a unique prefix, among the stored conversations and the
    recordings there are — whose recording it is."""
    from ..files.paths import data_dir, recordings_dir
    from ..rules.ids import InvalidId, check_id
    from ..store import ConversationNotFound, resolve_among
    from ..store.housekeeping import RECORDING_SUFFIXES, recording_files
    from ..store.recording import RecordingError

    path = Path(text)
    try:
        if path.exists():
            return path
        check_id(text)
    except (OSError, InvalidId):
        return path  # not a name an id can have: read_recording says the file cannot be read
    directory = recordings_dir()
    recorded = [entry.name[: -len(suffix)] for entry in (directory.iterdir() if directory.is_dir() else [])
                for suffix in RECORDING_SUFFIXES if entry.name.endswith(suffix)]
    try:
        if (data_dir() / "callstream.db").exists():
            store = open_store()
            try:
                whole = store.resolve(text, recorded)
            finally:
                store.close()
        else:
            whole = resolve_among(text, recorded)
    except ConversationNotFound:
        raise RecordingError(f"cannot read {text}: no such file, and no saved conversation's id starts so "
                             "(callstream transcripts lists them)") from None
    files = recording_files(directory, whole)
    if not files:
        raise RecordingError(f"conversation {whole} has no recording (it was made with record = false, or its "
                             "recording was pruned)")
    return files[0]


def provider_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", help="a profile from the config file, or openai-chat, openai-responses, "
                        "anthropic, gemini, demo (default: the config's default, else the demo model)")
    parser.add_argument("--model", help="model name (overrides the profile's)")
    parser.add_argument("--base-url", help="base URL (for any OpenAI-compatible server: Ollama, vLLM, llama.cpp…)")


def prompt_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--system", help="the system prompt (overrides the role's, the profile's and the config's)")
    parser.add_argument("--role", help="a [roles.NAME] from the config: its system prompt (and its profile, "
                        "if it names one)")


def warn_config(warnings: list[str], err: TextIO | None = None) -> None:
    """One inert line per unknown config key, so a typo never passes silently."""
    stream = err if err is not None else sys.stderr
    for warning in warnings:
        print(f"callstream: warning: {inert(warning)}", file=stream)
