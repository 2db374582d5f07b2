"""One gate for every tool call: the agent's, a delegated sub-agent's, an outside agent's.

Each call passes the same steps, in this order::

    input check -> rail -> approval (through the caller's Asker) -> run
        -> redaction, cap (the registry) -> protected files checked after the fact

and leaves as typed events (:class:`ApprovalNeeded`, :class:`ToolStarted`, then exactly one
:class:`ToolCallDone`) that the caller archives and fans out as it does for any turn. A rule
added here holds for every caller (issue 38.1).

A call that runs code or a command (:class:`~loom_jupyter.tools.base.RunsCode`) is checked
after it ran: the protected files (``tools/protected.py``: loom.yaml and instruction files,
skills, ``.git/config`` and hooks, ``.loom/`` but the archive, the person's Loom config) that
changed without the person's yes to that very change are put back, the person is asked
whether to keep the change (the card or the cell shows the diff), and the turn stops
(:attr:`ToolCallDone.halt`). The text rails stay the first question; this is the boundary.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, TypeAlias

from loom_jupyter.engine.events import ApprovalNeeded, ToolStarted
from loom_jupyter.own_writes import REMOVED, by_loom
from loom_jupyter.tools.approval import ApprovalRequest
from loom_jupyter.tools.base import RunsCode, ToolOutput, call_args

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from loom_jupyter.messages import ToolUseBlock
    from loom_jupyter.tools.approval import ApprovalPolicy, Asker
    from loom_jupyter.tools.base import AnyTool, ToolContext
    from loom_jupyter.tools.protected import ProtectedChange, ProtectedWatch
    from loom_jupyter.tools.registry import ToolRegistry

__all__ = ["GateEvent", "ToolCallDone", "ToolGate", "protected_watch", "summarize_input"]


@dataclass(frozen=True)
class ToolCallDone:
    """One tool call's result (also for calls that were refused or not run). ``halt``: why
    the turn must stop after it (a protected change was undone), else ``""``."""

    call: ToolUseBlock
    output: ToolOutput
    halt: str = ""
    kind: Literal["tool_call_done"] = "tool_call_done"


GateEvent: TypeAlias = ApprovalNeeded | ToolStarted | ToolCallDone
"""What one call through the gate yields: maybe a question, maybe a start, then its end."""


@dataclass(kw_only=True)
class ToolGate:
    """Runs tool calls for one caller; ``asker`` is who answers its questions (None: the
    session's own approver, see :class:`~loom_jupyter.tools.approval.Asker`)."""

    registry: ToolRegistry
    policy: ApprovalPolicy
    asker: Asker | None = None

    async def run(self, call: ToolUseBlock, ctx: ToolContext) -> AsyncIterator[GateEvent]:
        """Check, approve, run and check after ``call``; its events, ending in ToolCallDone."""
        ctx = replace(ctx, call_id=call.id)
        tool = self.registry.check_call(call)
        if isinstance(tool, ToolOutput):
            yield ToolCallDone(call, tool)  # an unknown tool or bad input: the registry's words
            return
        asker = self.asker or self.policy.asker()
        if self.policy.will_ask(tool, call, ctx, asker=asker):
            request = self.policy.describe(tool, call, ctx)
            yield ApprovalNeeded(call.id, call.name, request.summary, request.detail)
        decision = await self.policy.check(tool, call, ctx, asker=asker)
        if not decision.allowed:
            yield ToolCallDone(call, decision.to_output())
            return
        yield ToolStarted(call.id, call.name, summarize_input(call), dict(call.input))
        if not _runs_code(tool, call):
            yield ToolCallDone(call, await self._run(call, ctx))
            return
        watch = protected_watch(ctx)
        await watch.begin()
        try:
            output = await self._run(call, ctx)
        finally:
            changes = await watch.end()
        if not changes:
            yield ToolCallDone(call, output)
        elif decision.rail is not None and decision.asked:
            await watch.accept(changes)  # the person said yes to exactly this write
            yield ToolCallDone(call, output)
        else:
            yield await self._undone(call, ctx, output, watch, changes, asker)

    async def _run(self, call: ToolUseBlock, ctx: ToolContext) -> ToolOutput:
        try:
            return await self.registry.run(call, ctx)
        except Exception as exc:  # the registry guards tools; this guards the registry
            return ToolOutput.error(f"{call.name} failed: {type(exc).__name__}: {exc}")

    async def _undone(
        self,
        call: ToolUseBlock,
        ctx: ToolContext,
        output: ToolOutput,
        watch: FolderWatch,
        changes: tuple[ProtectedChange, ...],
        asker: Asker,
    ) -> ToolCallDone:
        """Put the protected files back, ask whether to keep the change, stop the turn."""
        from loom_jupyter.tools.protected import describe_changes, diff_text

        failed = await watch.undo(changes)
        what = describe_changes(changes, base=ctx.notebook_dir)
        diff = diff_text(changes, base=ctx.notebook_dir)
        request = ApprovalRequest(
            call.name,
            f"{call.name} changed {what}, which Loom protects; Loom undid it. Keep this change?",
            diff,
            call_id=f"{call.id}:keep",
            input=dict(call.input),
            always=None,
            question="keep",
        )
        kept = not failed and await self.policy.confirm(request, asker)
        if kept:
            failed = await watch.reapply(changes)
        note = _undo_note(call.name, what, kept, failed, diff)
        sealed = self.registry.seal(_with_note(note, output), ctx)
        return ToolCallDone(call, sealed, halt=_halt_message(call.name, what, kept))


def _runs_code(tool: AnyTool, call: ToolUseBlock) -> bool:
    if not isinstance(tool, RunsCode):
        return False
    try:
        return tool.runs_code(call_args(tool, call.input))
    except Exception:  # the input was checked; a tool that cannot tell is watched
        return True


def _with_note(note: str, output: ToolOutput) -> ToolOutput:
    """The note first (a cap cuts the end), then what the call returned; an error."""
    head = ToolOutput.text(note).content
    return replace(output, content=head + output.content, is_error=True)


def _undo_note(name: str, what: str, kept: bool, failed: str, diff: str) -> str:
    if failed and kept:
        done = f"The person chose to keep it, but Loom could not put all of it back ({failed})."
    elif failed:
        done = f"Loom tried to undo it but could not ({failed}); the person must check it."
    elif kept:
        done = "Loom undid it; the person looked at the change and chose to keep it."
    else:
        done = "Loom undid it (the old contents are back, new files removed)."
    return (
        f"{name} changed {what} without the person's approval of that change. These files "
        f"decide what Loom and git run and allow, so only the person may change them. {done} "
        "The turn stops here: tell the person what you were trying to do and why.\n\n"
        f"The attempted change:\n{diff}"
    )


def _halt_message(name: str, what: str, kept: bool) -> str:
    ending = "you kept it" if kept else "it was undone"
    return (
        f"The turn stopped: {name} changed {what} without your approval; {ending}. "
        "Loom checks these files after every call that runs code or a command."
    )


def summarize_input(call: ToolUseBlock, limit: int = 100) -> str:
    """One line describing a call's input, for people (``code: df.head()``...)."""
    parts = []
    for key, value in call.input.items():
        text = value if isinstance(value, str) else repr(value)
        parts.append(f"{key}: {' '.join(str(text).split())}")
    line = ", ".join(parts)
    return line if len(line) <= limit else line[: limit - 1] + "…"


class FolderWatch:
    """The protected files of one notebook folder, shared by every call that runs code in
    this process (the agent, its sub-agents running side by side, outside agents).

    The baseline is taken when the first of the overlapping calls begins; each call that
    ends compares against it, so a change one call made is seen (and undone) whichever of
    the running calls ends first, and a change the person approved becomes the baseline.
    What Loom itself wrote meanwhile (a trust decision, a saved key: :mod:`own_writes`) is
    the person's and becomes the baseline too."""

    def __init__(self, watch: ProtectedWatch) -> None:
        self._watch = watch
        self._running = 0
        self._lock = asyncio.Lock()

    async def begin(self) -> None:
        async with self._lock:
            if self._running == 0:
                await asyncio.to_thread(self._watch.before)
            self._running += 1

    async def end(self) -> tuple[ProtectedChange, ...]:
        """What changed since the baseline, but what Loom wrote itself."""
        async with self._lock:
            self._running -= 1
            changes = await asyncio.to_thread(self._watch.after)
            own = tuple(c for c in changes if _by_loom(c))
            rest = tuple(c for c in changes if c not in own)
            if all(map(_folder_only, rest)):  # a new empty `.loom/` decides nothing
                own, rest = changes, ()
            if own:
                self._watch.accept(own)
            return rest

    async def accept(self, changes: tuple[ProtectedChange, ...]) -> None:
        async with self._lock:
            self._watch.accept(changes)

    async def undo(self, changes: tuple[ProtectedChange, ...]) -> str:
        """Put them back; "" or why some could not be."""
        async with self._lock:
            failed = await asyncio.to_thread(self._watch.undo, changes)
        return "; ".join(f"{u.path}: {u.reason}" for u in failed)

    async def reapply(self, changes: tuple[ProtectedChange, ...]) -> str:
        """The person kept them: put the new state back; "" or why some could not be."""
        async with self._lock:
            failed = await asyncio.to_thread(self._watch.reapply, changes)
        return "; ".join(f"{u.path}: {u.reason}" for u in failed)


def _folder_only(change: ProtectedChange) -> bool:
    """A folder made or removed: nothing is in it that Loom or git would read."""
    return all(state is None or state.kind == "dir" for state in (change.old, change.new))


def _by_loom(change: ProtectedChange) -> bool:
    new = change.new
    return by_loom(change.path, REMOVED if new is None else new.sha256)


_WATCHES: dict[Path, FolderWatch] = {}


def protected_watch(ctx: ToolContext) -> FolderWatch:
    """The one watch of ``ctx``'s notebook folder in this process (the files are the
    process's, whoever runs the call)."""
    from loom_jupyter.tools.protected import ProtectedWatch

    folder = ctx.notebook_dir.resolve()
    watch = _WATCHES.get(folder)
    if watch is None:
        watch = _WATCHES[folder] = FolderWatch(ProtectedWatch.for_folder(folder))
    return watch
