"""Typed progress of a delegation: snapshots every front renders the same way.

The orchestrator emits a :class:`TaskUpdate` on every change (planned, a
subtask started, a tool ran, tokens arrived, a verdict, the end). Each update
carries the whole :class:`TaskSnapshot`, so a front that missed some can
simply draw the latest. :meth:`TaskSnapshot.to_json` gives the fields of the
sidebar's ``task`` message, whose one definition is ``TaskView`` / ``SubtaskItem``
in ``loom_jupyter.host.wire.protocol`` (the contract test sends a snapshot
through it and the generated validator). :class:`SubtaskView` is the only class
of that name: the orchestrator's row, with what only the orchestrator needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from loom_jupyter.archive.clock import age_seconds
from loom_jupyter.records import FINISHED_SUBTASK, FINISHED_TASK, SubtaskStatus, TaskStatus

if TYPE_CHECKING:
    from loom_jupyter.records import SubtaskInfo, TaskInfo

__all__ = [
    "FINISHED_SUBTASK",
    "FINISHED_TASK",
    "ChangeKind",
    "SubtaskStatus",
    "SubtaskView",
    "TaskSnapshot",
    "TaskStatus",
    "TaskUpdate",
    "archived_snapshot",
]

ChangeKind: TypeAlias = Literal[
    "planned", "started", "tool", "usage", "verifying", "retrying", "finished", "task_done"
]


@dataclass(frozen=True, kw_only=True)
class SubtaskView:
    """One row of the live task table (``reason`` stays in the kernel: cells, panel, recall)."""

    id: str
    description: str
    status: SubtaskStatus
    attempt: int
    elapsed_s: float
    tokens: int
    last_tool: str | None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """The fields of the sidebar's ``SubtaskItem`` (elapsed rounded to 0.1 s)."""
        return {
            "id": self.id,
            "description": self.description,
            "status": self.status,
            "attempt": self.attempt,
            "elapsed_s": round(self.elapsed_s, 1),
            "tokens": self.tokens,
            "last_tool": self.last_tool,
        }


@dataclass(frozen=True, kw_only=True)
class TaskSnapshot:
    """A delegation as it stands now."""

    task_id: str
    goal: str
    status: TaskStatus
    subtasks: tuple[SubtaskView, ...] = ()
    tokens: int = 0
    cost_usd: float = 0.0  # of the requests whose model has a known price
    unpriced: bool = False  # some ran on a model without a known price
    message: str = ""

    @property
    def cost_text(self) -> str:
        """The cost for people: ``$0.0123``, or with ``+ price unknown``, never a false $0."""
        from loom_jupyter.models.pricing import cost_text

        return cost_text(self.cost_usd, unknown=self.unpriced)

    def to_json(self) -> dict[str, Any]:
        """The fields of the sidebar's ``task`` message (``TaskView`` in the protocol)."""
        return {
            "type": "task",
            "task_id": self.task_id,
            "goal": self.goal,
            "status": self.status,
            "subtasks": [s.to_json() for s in self.subtasks],
        }

    @property
    def finished(self) -> bool:
        """Whether the task has reached a final status."""
        return self.status in FINISHED_TASK


@dataclass(frozen=True)
class TaskUpdate:
    """Something changed in a delegation; ``subtask`` names the row it concerns, if one."""

    snapshot: TaskSnapshot
    change: ChangeKind
    subtask: str | None = None
    message: str = ""
    kind: Literal["task_update"] = "task_update"


def archived_snapshot(task: TaskInfo, rows: list[SubtaskInfo]) -> TaskSnapshot:
    """A task as the archive has it (a finished run, or one a dead kernel left)."""
    views = tuple(
        SubtaskView(
            id=row.subtask_key,
            description=row.description,
            status=cast("SubtaskStatus", row.status),
            attempt=row.attempts,
            elapsed_s=_elapsed(row.started_at, row.finished_at),
            tokens=row.input_tokens + row.output_tokens,
            last_tool=None,
            reason=row.reason,
        )
        for row in rows
    )
    return TaskSnapshot(
        task_id=task.id,
        goal=task.goal,
        status=cast("TaskStatus", task.status),
        subtasks=views,
        tokens=task.input_tokens + task.output_tokens,
        cost_usd=task.cost_usd,
        message=task.message,
    )


def _elapsed(started: str | None, finished: str | None) -> float:
    """Seconds between the last attempt's start and the end (0 when either is unknown)."""
    if not started or not finished:
        return 0.0
    return max(age_seconds(started, finished), 0.0)
