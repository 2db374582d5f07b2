"""Typed progress of a delegation: snapshots every front renders the same way.

The orchestrator emits a :class:`TaskUpdate` on every change (planned, a
subtask started, a tool ran, tokens arrived, a verdict, the end). Each update
carries the whole :class:`TaskSnapshot`, so a front that missed some can
simply draw the latest; :meth:`TaskSnapshot.to_json` is the sidebar's pinned
``task`` message (docs/sidebar-protocol.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from loom_jupyter.records import FINISHED_SUBTASK, FINISHED_TASK, SubtaskStatus, TaskStatus

__all__ = [
    "FINISHED_SUBTASK",
    "FINISHED_TASK",
    "ChangeKind",
    "SubtaskStatus",
    "SubtaskView",
    "TaskSnapshot",
    "TaskStatus",
    "TaskUpdate",
]

ChangeKind: TypeAlias = Literal[
    "planned", "started", "tool", "usage", "verifying", "retrying", "finished", "task_done"
]


@dataclass(frozen=True, kw_only=True)
class SubtaskView:
    """One row of the live task table."""

    id: str
    description: str
    status: SubtaskStatus
    attempt: int
    elapsed_s: float
    tokens: int
    last_tool: str | None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """The sidebar's subtask object (pinned keys)."""
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
    cost_usd: float = 0.0
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        """The sidebar's pinned ``task`` message (type, task_id, goal, status, subtasks)."""
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
