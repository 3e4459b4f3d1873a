"""Tools declared in the config file as commands.

The arguments go to the command as JSON on stdin, the idempotency key in
``CALLSTREAM_IDEMPOTENCY_KEY``. The JSON is written a piece at a time
(``jsonwrite.chunks``) into an anonymous temporary file that is the
command's stdin: a 10 MB argument is not held again as a ``str``, a
``bytes`` and a pipe transport's buffer while the command runs (it was 3
bytes per argument byte on top of the call itself); stdout is the result (or, for a tool
that declares ``output = "image"``, an image sent to the model as one); a non-zero exit is a
failure whose message is stderr. The command runs without a shell, in its own
process group (its own session): a timeout or a cancel ends the whole group,
children included. The call is judged by the command's own exit: stdout and
stderr go to anonymous temporary files, not pipes, so a background child
that keeps them open does not hold the call up (asyncio's ``wait()`` waits
for every pipe to close, not just for the exit).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from typing import Any

from ..settings.tools import CommandToolConfig
from ..stream.jsonwrite import chunks
from ..stream.limits import DEFAULT_LIMITS
from .base import DisplayField, Tool, ToolContext, ToolError
from .images import image_result, keep_image
from .output import read_capped

__all__ = ["command_tool"]



def _write_arguments(arguments: dict[str, Any], into: Any) -> None:
    """The arguments' JSON into the file the command reads as stdin, from its start."""
    for chunk in chunks(arguments):
        into.write(chunk)
    into.flush()
    into.seek(0)




def _image_output(out: Any) -> str:
    """A tool that declares ``output = "image"``: its stdout is an image, kept
    and named by the result so the next request sends it to the model as one."""
    from ..files.attach import MAX_BYTES, AttachError

    out.seek(0)
    data = out.read(MAX_BYTES + 1)
    try:
        return image_result(keep_image(data, "tool image"))
    except AttachError as error:
        reason = str(error).removeprefix("tool image: ").rstrip(".")
        raise ToolError(f"declared an image output, but wrote no usable image ({reason})") from None


def _end_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def command_tool(config: CommandToolConfig, output_limit: int = DEFAULT_LIMITS.tool_output_bytes) -> Tool:
    async def run(arguments: dict[str, Any], ctx: ToolContext) -> str:
        env = {**os.environ, "CALLSTREAM_IDEMPOTENCY_KEY": ctx.idempotency_key, "CALLSTREAM_TOOL": config.name}
        with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            _write_arguments(arguments, given)
            try:
                process = await asyncio.create_subprocess_exec(
                    *config.command, stdin=given, stdout=out, stderr=err, env=env, start_new_session=True)
            except OSError as exc:
                raise ToolError(f"cannot start {config.command[0]!r}: {exc.strerror or exc}") from None
            try:
                await asyncio.wait_for(process.wait(), timeout=config.timeout)
            except (TimeoutError, asyncio.CancelledError) as exc:
                _end_group(process)
                with contextlib.suppress(Exception):
                    await asyncio.shield(process.wait())
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise ToolError(f"timed out after {config.timeout:g} s") from None
            stderr = read_capped(err, output_limit)
            if process.returncode != 0:
                message = stderr.strip() or f"exited with status {process.returncode}"
                raise ToolError(message if len(message) <= 2000 else message[:1999] + "…")
            if config.output == "image":
                return _image_output(out)
            return read_capped(out, output_limit)

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
