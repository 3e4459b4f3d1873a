"""Tools declared in the config file as commands.

The arguments go to the command as JSON on stdin, the idempotency key in
``CALLSTREAM_IDEMPOTENCY_KEY``; stdout is the result; a non-zero exit is a
failure whose message is stderr. The command runs without a shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any

from ..config import CommandToolConfig
from .base import DisplayField, Tool, ToolContext, ToolError

__all__ = ["command_tool"]

_MAX_OUTPUT = 1_000_000


def command_tool(config: CommandToolConfig) -> Tool:
    async def run(arguments: dict[str, Any], ctx: ToolContext) -> str:
        env = {**os.environ, "CALLSTREAM_IDEMPOTENCY_KEY": ctx.idempotency_key, "CALLSTREAM_TOOL": config.name}
        try:
            process = await asyncio.create_subprocess_exec(
                *config.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env)
        except OSError as exc:
            raise ToolError(f"cannot start {config.command[0]!r}: {exc.strerror or exc}") from None
        data = json.dumps(arguments, ensure_ascii=False).encode()
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(data), timeout=config.timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(Exception):
                await process.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise ToolError(f"timed out after {config.timeout:g} s") from None
        if process.returncode != 0:
            message = stderr.decode("utf-8", "replace").strip() or f"exited with status {process.returncode}"
            raise ToolError(message[:2000])
        return stdout[:_MAX_OUTPUT].decode("utf-8", "replace")

    return Tool(
        name=config.name,
        description=config.description,
        parameters=config.parameters,
        run=run,
        read_only=config.read_only,
        display=tuple(DisplayField(path, label) for path, label in config.display),
        timeout=config.timeout,
        approval=config.approval,
        origin="command",
    )
