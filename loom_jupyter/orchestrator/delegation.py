"""One delegation: plan, run the subtasks as a DAG with bounded parallelism, verify, retry.

Everything is written to the archive as it happens — the ``tasks`` row when
planning starts, ``subtasks`` rows once the plan is valid, each attempt's child
session turn by turn, every verdict — so a report is only ever a view of rows
that already exist, and a kernel restart shows what finished and what did not.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from loom_jupyter.archive.clock import utc_now
from loom_jupyter.errors import LoomError
from loom_jupyter.orchestrator.budget import Budget
from loom_jupyter.orchestrator.child import ChildOutcome, ChildRun
from loom_jupyter.orchestrator.forced import ForcedCaller
from loom_jupyter.orchestrator.parent import DelegateOptions, ParentContext
from loom_jupyter.orchestrator.plan import Plan
from loom_jupyter.orchestrator.planner import ask_for_plan
from loom_jupyter.orchestrator.progress import TaskSnapshot, TaskUpdate
from loom_jupyter.orchestrator.prompts import subtask_message
from loom_jupyter.orchestrator.state import SubtaskRun, effect_to_dict
from loom_jupyter.orchestrator.verify import verify

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.messages import Usage
    from loom_jupyter.orchestrator.judge import Verdict
    from loom_jupyter.orchestrator.progress import ChangeKind, SubtaskStatus, TaskStatus
    from loom_jupyter.records import SubtaskInfo, TaskInfo

__all__ = ["Delegation"]


class Delegation:
    """A goal handed to sub-agents. ``await plan()`` then ``await execute()``."""

    def __init__(
        self,
        parent: ParentContext,
        goal: str,
        *,
        options: DelegateOptions | None = None,
        listener: Callable[[TaskUpdate], None] | None = None,
    ) -> None:
        self.parent, self.goal = parent, goal
        self.options = options or DelegateOptions()
        settings = parent.settings
        self.budget = Budget(
            max_tokens=self.options.budget_tokens or settings.delegate_budget_tokens,
            max_usd=self.options.budget_usd or settings.delegate_budget_usd,
            max_runs=settings.delegate_max_runs,
        )
        self._listener = listener
        self.task_id = ""
        self.status: TaskStatus = "planning"
        self.message = ""
        self.runs: dict[str, SubtaskRun] = {}
        self._tasks: dict[asyncio.Task[None], SubtaskRun] = {}
        self._halt: tuple[SubtaskStatus, str] | None = None
        self._cancelled = False
        self._leader: SubtaskRun | None = None
        self._warm = asyncio.Event()
        self._caller = ForcedCaller(parent, self.spend)

    # -- building -----------------------------------------------------------

    @classmethod
    async def restore(
        cls,
        parent: ParentContext,
        task: TaskInfo,
        rows: list[SubtaskInfo],
        *,
        options: DelegateOptions | None = None,
        listener: Callable[[TaskUpdate], None] | None = None,
    ) -> Delegation:
        """An archived task, ready to ``execute()`` again: passed subtasks are kept."""
        delegation = cls(parent, task.goal, options=options, listener=listener)
        delegation.task_id = task.id
        by_key = {row.subtask_key: row for row in rows}
        for sub in Plan.from_json(task.plan_json).subtasks:
            delegation.runs[sub.id] = SubtaskRun.from_row(sub, by_key[sub.id])
        return delegation

    # -- planning -----------------------------------------------------------

    async def open(self) -> str:
        """Record the task (status ``planning``); returns its id."""
        if not self.task_id:
            self.task_id = await self.parent.archive.create_task(
                self.parent.session_id,
                goal=self.goal,
                status="planning",
                options_json=self.options.to_json(),
            )
            self._emit("planned", message="planning")
        return self.task_id

    async def plan(self) -> Plan | None:
        """Ask for a plan (re-asked once if invalid); ``None`` when the task has failed."""
        await self.open()
        try:
            plan, errors = await ask_for_plan(
                self.goal,
                self.parent.context,
                caller=self._caller,
                model_name=self.parent.model.name,
                max_subtasks=self.parent.settings.delegate_max_subtasks,
            )
        except LoomError as error:
            await self._fail_early(f"Planning failed: {error}")
            return None
        if plan is None:
            listed = "; ".join(errors)
            await self._fail_early(f"The plan was invalid twice ({listed}); nothing was run.")
            return None
        await self._store_plan(plan)
        return plan

    async def _store_plan(self, plan: Plan) -> None:
        archive = self.parent.archive
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
        self._emit("planned", message=f"planned {len(plan.subtasks)} subtask(s)")

    async def decline(self, message: str) -> None:
        """The plan was not approved: the task ends ``cancelled`` before anything ran."""
        self._cancelled = True
        await self._settle_cancelled(message)

    async def _settle_cancelled(self, message: str) -> None:
        self._halt, self.message = ("cancelled", message), message
        await self._settle_pending()
        self.status = "cancelled"
        await self._save_task()
        self._emit("task_done", message=message)

    async def _fail_early(self, message: str) -> None:
        self.status, self.message = "failed", message
        await self._save_task()
        self._emit("task_done", message=message)

    # -- running ------------------------------------------------------------

    async def execute(self) -> TaskSnapshot:
        """Run every subtask that has not passed; returns the final snapshot."""
        self.status = "running"
        await self.parent.archive.update_task(self.task_id, status="running")
        self._emit("started", message="running")
        try:
            await self._run_dag()
        except asyncio.CancelledError:
            await asyncio.shield(
                self._stop_everything("cancelled", "stopped: the run was cancelled")
            )
            raise
        return await self._conclude()

    def cancel(self, reason: str = "stopped by the person") -> None:
        """Stop: running subtasks are cancelled, nothing new starts (call on the loop)."""
        self._cancelled = True
        self._halt_all("cancelled", reason)

    async def _run_dag(self) -> None:
        while True:
            await self._settle_pending()
            for run in self._startable():
                self._start(run)
            if not self._tasks:
                return
            done, _ = await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                self._tasks.pop(task)

    async def _settle_pending(self) -> None:
        """Skip what can no longer run (a failed dependency, a halt), to a fixed point."""
        changed = True
        while changed:
            changed = False
            for run in self.runs.values():
                if run.status != "pending":
                    continue
                why = self._halt or self._blocked(run)
                if why is not None:
                    await self._end(run, why[0], why[1])
                    changed = True

    def _blocked(self, run: SubtaskRun) -> tuple[SubtaskStatus, str] | None:
        for dep in run.sub.depends_on:
            status = self.runs[dep].status
            if status not in ("pending", "running", "passed"):
                return "skipped", f"depends on {dep}, which {_said(status)}"
        return None

    def _startable(self) -> list[SubtaskRun]:
        if self._halt is not None:
            return []
        room = (self.options.max_parallel or self.parent.settings.delegate_max_parallel) - len(
            self._tasks
        )
        ready = [
            run
            for run in self.runs.values()
            if run.status == "pending"
            and all(self.runs[d].status == "passed" for d in run.sub.depends_on)
        ]
        return ready[: max(room, 0)]

    def _start(self, run: SubtaskRun) -> None:
        run.begin()
        if self._leader is None:
            self._leader = run
        self._tasks[asyncio.ensure_future(self._subtask(run))] = run

    async def _subtask(self, run: SubtaskRun) -> None:
        try:
            await self._attempts(run)
        except asyncio.CancelledError:
            status, reason = run.stop or ("cancelled", "stopped")
            await asyncio.shield(self._end(run, status, reason))
        except Exception as exc:  # a sub-agent's crash fails its subtask, not the delegation
            await self._end(run, "failed", f"raised {type(exc).__name__}: {exc}")
        finally:
            if run is self._leader:
                self._warm.set()

    async def _attempts(self, run: SubtaskRun) -> None:
        feedback: str | None = None
        for _ in range(1 + self.parent.settings.delegate_max_retries):
            why = self._halt[1] if self._halt else self.budget.take_run()
            if why is not None:
                await self._end(run, "failed" if run.verdicts else "skipped", why)
                return
            outcome = await self._attempt(run, feedback)
            if outcome.end != "done":
                await self._end(run, outcome.end, outcome.message or outcome.end)
                return
            run.result = outcome.text
            verdict = await self._verify(run, outcome)
            if verdict is None or verdict.verdict == "pass":
                run.effects = list(outcome.effects)
                await self._end(run, "passed", verdict.feedback if verdict else "not verified")
                return
            feedback = verdict.feedback
            self._emit("retrying", run.sub.id, feedback)
        tries = 1 + self.parent.settings.delegate_max_retries
        await self._end(run, "failed", f"did not pass verification in {tries} runs: {feedback}")

    async def _attempt(self, run: SubtaskRun, feedback: str | None) -> ChildOutcome:
        if self._leader is not run and self.parent.settings.delegate_stagger:
            await self._warm.wait()  # the first request's prefix is in the cache by now
        run.attempt += 1
        session_id = await self._child_session(run)
        self._emit("started", run.sub.id, f"attempt {run.attempt}")
        message = subtask_message(
            run.sub,
            goal=self.goal,
            context=self.parent.context,
            results={d: self.runs[d].result for d in run.sub.depends_on},
            feedback=feedback,
            attempt=run.attempt,
        )
        seconds = self.parent.settings.delegate_subtask_seconds
        try:
            return await asyncio.wait_for(self._child(run, session_id).run(message), seconds)
        except asyncio.TimeoutError:
            limit = f"wall-clock limit reached ({seconds:g} s per subtask run)"
            return ChildOutcome("incomplete", "", limit, run.usage, run.cost, ())

    async def _child_session(self, run: SubtaskRun) -> str:
        archive, parent = self.parent.archive, self.parent
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

    def _child(self, run: SubtaskRun, session_id: str) -> ChildRun:
        parent = self.parent
        settings = parent.settings.replace(
            max_iterations=parent.settings.delegate_subtask_iterations
        )
        return ChildRun(
            archive=parent.archive,
            session_id=session_id,
            model=parent.model,
            tools=parent.tools,
            settings=settings,
            kernel=parent.kernel,
            notebook_path=parent.notebook_path,
            observer=_Observer(self, run),
            policy=parent.policy,
            shape=parent.shape,
        )

    # -- verifying ----------------------------------------------------------

    async def _verify(self, run: SubtaskRun, outcome: ChildOutcome) -> Verdict | None:
        if not self.options.verify:
            return None
        self._emit("verifying", run.sub.id, "verifying")
        verdict, usage, cost = await verify(
            run.sub,
            run.attempt,
            outcome,
            kernel=self.parent.kernel,
            caller=self._caller,
            judge_model=self.parent.settings.delegate_judge_model,
        )
        run.usage, run.cost = run.usage + usage, run.cost + cost
        return await self._verdict(run, verdict)

    async def _verdict(self, run: SubtaskRun, verdict: Verdict) -> Verdict:
        run.verdicts.append(verdict)
        await self.parent.archive.update_subtask(
            run.row_id, verdict=verdict.verdict, verdicts_json=run.verdicts_json()
        )
        return verdict

    # -- caps and stopping --------------------------------------------------

    def spend(self, usage: Usage, cost: float, model: str) -> None:
        """Count a request; a breached budget stops all work."""
        self.budget.spend(usage, cost, model)
        why = self.budget.breach()
        if why is not None and self._halt is None:
            self.message = f"Stopped early: {why}."
            self._halt_all("incomplete", why)

    def _halt_all(self, status: SubtaskStatus, reason: str) -> None:
        if self._halt is None:
            self._halt = ("skipped" if status == "incomplete" else status, reason)
        for task, run in self._tasks.items():
            run.stop = (status, reason)
            task.cancel()

    async def _stop_everything(self, status: SubtaskStatus, reason: str) -> None:
        self._cancelled = True
        self._halt_all(status, reason)
        if self._tasks:
            await asyncio.wait(set(self._tasks))
        self._tasks.clear()
        await self._settle_cancelled(reason)

    # -- recording ----------------------------------------------------------

    async def _end(self, run: SubtaskRun, status: SubtaskStatus, reason: str) -> None:
        run.end(status, reason)
        await self.parent.archive.update_subtask(
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
        self._emit("finished", run.sub.id, f"{status}: {reason}")

    async def _conclude(self) -> TaskSnapshot:
        if self._cancelled:
            self.status = "cancelled"
        elif all(run.status == "passed" for run in self.runs.values()):
            self.status = "passed"
        else:
            self.status = "failed"
        await self._save_task()
        snapshot = self.snapshot()
        self._emit("task_done", message=self.message or self.status)
        return snapshot

    async def _save_task(self) -> None:
        usage = self.budget.usage
        await self.parent.archive.update_task(
            self.task_id,
            status=self.status,
            message=self.message,
            input_tokens=usage.total_input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=self.budget.cost_usd,
            finished_at=utc_now(),
            result_json=json.dumps(self._result(), ensure_ascii=False),
        )

    def _result(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "subtasks": {
                key: {"status": run.status, "attempts": run.attempt, "reason": run.reason}
                for key, run in self.runs.items()
            },
            "effects": [effect_to_dict(e) for run in self.runs.values() for e in run.effects],
        }

    def snapshot(self) -> TaskSnapshot:
        """The delegation as it stands now."""
        return TaskSnapshot(
            task_id=self.task_id,
            goal=self.goal,
            status=self.status,
            subtasks=tuple(run.view() for run in self.runs.values()),
            tokens=self.budget.tokens,
            cost_usd=self.budget.cost_usd,
            unpriced=self.budget.unpriced,
            message=self.message,
        )

    def _emit(self, change: ChangeKind, subtask: str | None = None, message: str = "") -> None:
        if self._listener is None:
            return
        try:
            self._listener(TaskUpdate(self.snapshot(), change, subtask, message))
        except Exception:  # a front's failure to draw must not stop the work
            return


class _Observer:
    """A child's activity, turned into progress and budget spend."""

    def __init__(self, delegation: Delegation, run: SubtaskRun) -> None:
        self._delegation, self._run = delegation, run
        self._active = False

    def on_activity(self) -> None:
        if self._run is self._delegation._leader:
            self._delegation._warm.set()
        if not self._active:
            self._active = True
            self._delegation._emit("usage", self._run.sub.id, "answering")

    def on_tool(self, name: str) -> None:
        self._run.last_tool = name
        self._delegation._emit("tool", self._run.sub.id, name)

    def on_usage(self, usage: Usage, cost: float, model: str) -> None:
        run = self._run
        run.usage, run.cost = run.usage + usage, run.cost + cost
        self._delegation.spend(usage, cost, model)
        self._delegation._emit("usage", run.sub.id)


def _said(status: str) -> str:
    return {
        "failed": "failed",
        "skipped": "was skipped",
        "cancelled": "was cancelled",
        "incomplete": "did not complete",
    }.get(status, status)
