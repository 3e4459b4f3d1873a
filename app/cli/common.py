"""What every command shares: the one way to state a failure, and the provider options."""

from __future__ import annotations

import argparse
import sys

from ..stream.inert import inert

__all__ = ["fail", "provider_options", "prompt_options", "warn_config"]


def fail(message: str) -> int:
    """Print one inert line to stderr and return the usage/configuration exit code (2)."""
    print(f"callstream: {inert(message)}", file=sys.stderr)
    return 2


def provider_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", help="a profile from the config file, or openai-chat, openai-responses, "
                        "anthropic, gemini, demo (default: the config's default, else the demo model)")
    parser.add_argument("--model", help="model name (overrides the profile's)")
    parser.add_argument("--base-url", help="base URL (for any OpenAI-compatible server: Ollama, vLLM, llama.cpp…)")


def prompt_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--system", help="the system prompt (overrides the role's, the profile's and the config's)")
    parser.add_argument("--role", help="a [roles.NAME] from the config: its system prompt (and its profile, "
                        "if it names one)")


def warn_config(warnings: list[str], err: object = None) -> None:
    """One inert line per unknown config key, so a typo never passes silently."""
    stream = err if err is not None else sys.stderr
    for warning in warnings:
        print(f"callstream: warning: {inert(warning)}", file=stream)  # type: ignore[call-overload]
