"""What the archive and the fronts learn of one delegation, written as it happens.

The ``tasks`` row when planning starts, ``subtasks`` rows once the plan is valid,
each attempt's closed child session, every verdict and every end; each change
also goes to the listener as a :class:`TaskUpdate` carrying the whole snapshot.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from loom_jupyter.archive.clock import utc_now
from loom_jupyter.orchestrator.plan import Plan
from loom_jupyter.orchestrator.progress import TaskSnapshot, TaskUpdate
from loom_jupyter.orchestrator.state import SubtaskRun, effect_to_dict

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.orchestrator.budget import Budget
    from loom_jupyter.orchestrator.judge import Verdict
    from loom_jupyter.orchestrator.parent import ParentContext
    from loom_jupyter.orchestrator.progress import ChangeKind, SubtaskStatus, TaskStatus
    from loom_jupyter.records import SubtaskInfo, TaskInfo

__all__ = ["TaskRecord"]


class TaskRecord:
    """One delegation's task row, its subtask runs and rows, and the updates about them."""

    def __init__(
        self,
        parent: ParentContext,
        goal: str,
        budget: Budget,
        listener: Callable[[TaskUpdate], None] | None = None,
    ) -> None:
        self._parent, self.goal, self._budget = parent, goal, budget
        self._listener = listener
        self.task_id = ""
        self.status: TaskStatus = "planning"
        self.message = ""
        self.runs: dict[str, SubtaskRun] = {}

    # -- the task -------------------------------------------------------------

    async def open(self, options_json: str) -> str:
        """Record the task (status ``planning``) once; returns its id."""
        if not self.task_id:
            self.task_id = await self._parent.archive.create_task(
                self._parent.session_id,
                goal=self.goal,
                status="planning",
                options_json=options_json,
            )
            self.emit("planned", message="planning")
        return self.task_id

    def reopen(self, task: TaskInfo, rows: list[SubtaskInfo]) -> None:
        """Take up an archived task: its plan's runs, the passed ones kept."""
        self.task_id = task.id
        by_key = {row.subtask_key: row for row in rows}
        for sub in Plan.from_json(task.plan_json).subtasks:
            self.runs[sub.id] = SubtaskRun.from_row(sub, by_key[sub.id])

    async def store_plan(self, plan: Plan) -> None:
        """The valid plan and one pending row per subtask."""
        archive = self._parent.archive
        await archive.update_task(self.task_id, plan_json=plan.to_json())
        for sub in plan.subtasks:
            row = await archive.create_subtask(
                self.task_id,
                subtask_key=sub.id,
                description=sub.description,
                depends_on=sub.depends_on,
                acceptance=sub.acceptance,
                check_expr=sub.check,
            )
            self.runs[sub.id] = SubtaskRun(sub, row)
        self.emit("planned", message=f"planned {len(plan.subtasks)} subtask(s)")

    async def start_running(self) -> None:
        """The task's subtasks start (again)."""
        self.status = "running"
        await self._parent.archive.update_task(self.task_id, status="running")
        self.emit("started", message="running")

    async def finish(self, status: TaskStatus) -> TaskSnapshot:
        """The task's final status, saved with its spend and result; the final snapshot."""
        self.status = status
        usage = self._budget.usage
        await self._parent.archive.update_task(
            self.task_id,
            status=self.status,
            message=self.message,
            input_tokens=usage.total_input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=self._budget.cost_usd,
            finished_at=utc_now(),
            result_json=json.dumps(self._result(), ensure_ascii=False),
        )
        snapshot = self.snapshot()
        self.emit("task_done", message=self.message or self.status)
        return snapshot

    def _result(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "subtasks": {
                key: {"status": run.status, "attempts": run.attempt, "reason": run.reason}
                for key, run in self.runs.items()
            },
            "effects": [effect_to_dict(e) for run in self.runs.values() for e in run.effects],
        }

    # -- the subtasks ---------------------------------------------------------

    async def child_session(self, run: SubtaskRun) -> str:
        """A closed child session for ``run``'s current attempt; its id."""
        archive, parent = self._parent.archive, self._parent
        title = f"[delegated {self.task_id[:8]}] {run.sub.id} · attempt {run.attempt}"
        sid = await archive.create_session(
            notebook_path=str(parent.notebook_path),
            model=parent.model.name,
            title=title,
            parent_session_id=parent.session_id,
        )
        # A child is a transcript, never a conversation to resume on reopen.
        await archive.update_session(sid, status="closed")
        run.sessions.append(sid)
        await archive.update_subtask(
            run.row_id,
            status="running",
            attempts=run.attempt,
            child_session_id=sid,
            sessions_json=json.dumps(run.sessions),
            started_at=utc_now(),
        )
        return sid

    async def add_verdict(self, run: SubtaskRun, verdict: Verdict) -> None:
        """A judge's verdict on ``run``'s attempt."""
        run.verdicts.append(verdict)
        await self._parent.archive.update_subtask(
            run.row_id, verdict=verdict.verdict, verdicts_json=run.verdicts_json()
        )

    async def end(self, run: SubtaskRun, status: SubtaskStatus, reason: str) -> None:
        """``run`` is over: its row gets the status, result, verdicts, effects and spend."""
        run.end(status, reason)
        await self._parent.archive.update_subtask(
            run.row_id,
            status=status,
            reason=reason,
            attempts=run.attempt,
            result=run.result,
            verdicts_json=run.verdicts_json(),
            effects_json=run.effects_json(),
            input_tokens=run.usage.total_input_tokens,
            output_tokens=run.usage.output_tokens,
            cost_usd=run.cost,
            finished_at=utc_now(),
        )
        self.emit("finished", run.sub.id, f"{status}: {reason}")

    # -- the fronts -----------------------------------------------------------

    def snapshot(self) -> TaskSnapshot:
        """The delegation as it stands now."""
        return TaskSnapshot(
            task_id=self.task_id,
            goal=self.goal,
            status=self.status,
            subtasks=tuple(run.view() for run in self.runs.values()),
            tokens=self._budget.tokens,
            cost_usd=self._budget.cost_usd,
            unpriced=self._budget.unpriced,
            message=self.message,
        )

    def emit(self, change: ChangeKind, subtask: str | None = None, message: str = "") -> None:
        """Tell the listener, if any; a front's failure to draw never stops the work."""
        if self._listener is None:
            return
        try:
            self._listener(TaskUpdate(self.snapshot(), change, subtask, message))
        except Exception:  # a front's failure to draw must not stop the work
            return
