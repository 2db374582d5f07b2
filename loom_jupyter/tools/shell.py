"""``shell``: run a command in the notebook's folder, with a timeout and an output cap.

The command runs in its own process group so a timeout (or an interrupted
turn) kills everything it started, not just the shell. Output is collected
head+tail in bounded memory; secret environment values are redacted.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from dataclasses import dataclass
from typing import Annotated, ClassVar

from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.approval import ApprovalRequest
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.guard import AlwaysScope, mentioned_rail
from loom_jupyter.tools.output import HeadTail, redact, redact_secrets, secret_values
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema
from loom_jupyter.tools.shell_scope import shell_scope

__all__ = ["Shell", "ShellInput", "ShellResult", "run_command"]

_DRAIN_SECONDS = 2.0  # how long to wait for the pipe after the process ended or was killed
_CHUNK = 65536


@dataclass(frozen=True)
class ShellResult:
    """The outcome of one command: its captured output and how it ended."""

    output: str
    returncode: int | None
    timed_out: bool


async def run_command(command: str, *, cwd: str, timeout: float, max_chars: int) -> ShellResult:
    """Run ``command`` with ``/bin/sh`` in ``cwd``; stdout and stderr are merged in order."""
    proc = await asyncio.create_subprocess_shell(
        command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # its own process group, killed as a whole
    )
    buffer = HeadTail(max_chars, clean=redact_secrets)
    assert proc.stdout is not None
    pump = asyncio.create_task(_pump(proc.stdout, buffer))
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except asyncio.TimeoutError:
        timed_out = True
    finally:
        if proc.returncode is None:  # timed out, or the turn was cancelled
            _kill_group(proc.pid)
            await proc.wait()
        await _drain(pump)
    return ShellResult(buffer.text(), proc.returncode, timed_out)


async def _pump(stream: asyncio.StreamReader, buffer: HeadTail) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await stream.read(_CHUNK):
        buffer.add(decoder.decode(chunk))
    buffer.add(decoder.decode(b"", final=True))


async def _drain(pump: asyncio.Task[None]) -> None:
    """Wait briefly for the rest of the output; a detached grandchild may keep the pipe open."""
    try:
        await asyncio.wait_for(asyncio.shield(pump), _DRAIN_SECONDS)
    except asyncio.TimeoutError:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _ending(result: ShellResult, timeout: float) -> str:
    if result.timed_out:
        return (
            f"[timed out after {timeout:g} s: the command and everything it started were killed. "
            "Run long jobs in the background with output to a file, or split the work.]"
        )
    code = result.returncode
    if code is not None and code < 0:
        return f"[killed by signal {-code}]"
    return f"[exit code {code}]"


@dataclass(frozen=True, kw_only=True)
class ShellInput(ToolInput):
    """``shell``'s input."""

    command: Annotated[str, Limit(min_length=1)]


class Shell(TypedTool[ShellInput]):
    """``shell``: run a shell command in the notebook's folder."""

    input_type = ShellInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="shell",
        description=(
            "Run a shell command (/bin/sh) in the notebook's folder. stdout and stderr are merged; "
            "the exit code is reported. Commands are killed after a timeout; there is no stdin."
        ),
        input_schema=input_schema(ShellInput),
    )

    def approval_request(self, args: ShellInput, ctx: ToolContext | None) -> ApprovalRequest:
        """Shows the command and where it runs."""
        command = args.command
        first = command.strip().splitlines()[0] if command.strip() else command
        where = f"\n(in {ctx.notebook_dir})" if ctx is not None else ""
        return ApprovalRequest("shell", f"run `{first[:80]}`", command + where)

    def runs_code(self, args: ShellInput) -> bool:
        """Always: the protected files are checked after it."""
        return True

    def guard_rail(self, args: ShellInput, ctx: ToolContext | None) -> str | None:
        """A guard rail the command names (``loom.yaml``, ``.git/``...), if any."""
        named = mentioned_rail(args.command)
        return f"{named} (the command names it)" if named else None

    def always_scope(self, args: ShellInput, ctx: ToolContext | None) -> AlwaysScope:
        """ "Always" allows a program that runs no other program ("`ls` commands"), or one
        of its subcommands ("`git status` commands"); any other command, this command line
        only (:mod:`loom_jupyter.tools.shell_scope`, security review R6)."""
        return shell_scope(args.command)

    async def run(self, args: ShellInput, ctx: ToolContext) -> ToolOutput:
        """Run the command; a non-zero exit or a timeout is an ``is_error`` result."""
        timeout = ctx.settings.shell_timeout_seconds
        result = await run_command(
            args.command,
            cwd=str(ctx.notebook_dir),
            timeout=timeout,
            max_chars=ctx.settings.tool_output_max_chars,
        )
        ending = _ending(result, timeout)
        body = result.output.rstrip() or "(no output)"
        text = redact(f"$ {args.command}\n{body}\n{ending}", secret_values())
        failed = result.timed_out or result.returncode != 0
        return ToolOutput.text(text, summary=ending.strip("[]")[:100], is_error=failed)
