"""``conversation_recall`` with ``task_id``: a delegated task's subtasks and their transcripts.

A delegation's digest names its task id; each subtask ran in child sessions of
the delegating one. Without ``subtask`` the recall lists the subtasks (status,
attempts, why); with it, it reads the latest attempt's transcript like
``action=range`` does, so nothing of a sub-agent's run is out of reach.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from loom_jupyter.errors import ToolError
from loom_jupyter.tools.base import ToolOutput

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from loom_jupyter.messages import ImageBlock, TextBlock
    from loom_jupyter.readers import ArchiveReader
    from loom_jupyter.records import SubtaskInfo, TaskInfo
    from loom_jupyter.tools.base import ToolContext
    from loom_jupyter.tools.recall_input import RecallInput

    ShowRange = Callable[[ArchiveReader, str, RecallInput, ToolContext], Awaitable[ToolOutput]]

__all__ = ["task_transcript"]


async def task_transcript(
    archive: ArchiveReader,
    session_id: str,
    args: RecallInput,
    ctx: ToolContext,
    show_range: ShowRange,
) -> ToolOutput:
    """The task's subtask list, or one subtask's transcript (turns as ``action=range``)."""
    task = await _task(archive, session_id, args.task_id or "")
    rows = await archive.list_subtasks(task.id)
    key = (args.subtask or "").strip()
    if not key:
        return _listing(task, rows)
    row = next((r for r in rows if r.subtask_key == key), None)
    if row is None:
        known = ", ".join(r.subtask_key for r in rows) or "none"
        raise ToolError(f"Task {task.id} has no subtask {key!r}; its subtasks: {known}.")
    if row.child_session_id is None:
        raise ToolError(f"Subtask {key!r} never ran ({row.status}: {row.reason or 'no reason'}).")
    if not args.start_turn and not args.end_turn:
        args = replace(args, start_turn=1)  # a transcript reads from its start by default
    shown = await show_range(archive, row.child_session_id, args, ctx)
    head = _head(row)
    return ToolOutput(
        (*_text(head), *shown.content), is_error=shown.is_error, summary=f"recall {key} transcript"
    )


async def _task(archive: ArchiveReader, session_id: str, ref: str) -> TaskInfo:
    ref = ref.strip()
    found = [t for t in await archive.list_tasks(session_id) if ref and t.id.startswith(ref)]
    if len(found) != 1:
        how = "No delegated task" if not found else f"{len(found)} delegated tasks"
        raise ToolError(f"{how} of this conversation match task_id={ref!r}.")
    return found[0]


def _listing(task: TaskInfo, rows: list[SubtaskInfo]) -> ToolOutput:
    lines = [f"Task {task.id} ({task.status}): {task.goal}"]
    for row in rows:
        runs = len(json.loads(row.sessions_json or "[]"))
        lines.append(
            f"- {row.subtask_key}: {row.status}, {row.attempts} attempt(s), {runs} transcript(s)"
            + (f" — {row.reason}" if row.reason else "")
        )
    lines.append("Open one with task_id and subtask=ID (start_turn/end_turn as for action=range).")
    return ToolOutput.text("\n".join(lines), summary=f"task {task.id[:8]}: {len(rows)} subtasks")


def _head(row: SubtaskInfo) -> str:
    attempts = json.loads(row.sessions_json or "[]")
    earlier = ", ".join(sid[:8] for sid in attempts[:-1])
    note = f" (earlier attempts: sessions {earlier})" if earlier else ""
    return (
        f"Subtask {row.subtask_key} — {row.status}, attempt {row.attempts}; transcript of the "
        f"latest attempt, session {str(row.child_session_id)[:8]}{note}:\n"
    )


def _text(text: str) -> tuple[TextBlock | ImageBlock, ...]:
    return ToolOutput.text(text).content
