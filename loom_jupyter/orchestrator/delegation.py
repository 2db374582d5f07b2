"""One delegation: plan, run the subtasks as a DAG with bounded parallelism, verify, retry.

Everything is written to the archive as it happens (``task_record.py``) — the
``tasks`` row when planning starts, ``subtasks`` rows once the plan is valid,
each attempt's child session turn by turn, every verdict — so a report is only
ever a view of rows that already exist, and a kernel restart shows what finished
and what did not. ``schedule.py`` decides which subtask runs when.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError
from loom_jupyter.orchestrator.budget import Budget
from loom_jupyter.orchestrator.child import ChildOutcome, ChildRun
from loom_jupyter.orchestrator.forced import ForcedCaller
from loom_jupyter.orchestrator.parent import DelegateOptions, ParentContext
from loom_jupyter.orchestrator.planner import ask_for_plan
from loom_jupyter.orchestrator.prompts import subtask_message
from loom_jupyter.orchestrator.schedule import SubtaskSchedule
from loom_jupyter.orchestrator.task_record import TaskRecord
from loom_jupyter.orchestrator.verify import verify
from loom_jupyter.telemetry import tracer_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.messages import Usage
    from loom_jupyter.orchestrator.forced import ForcedCall
    from loom_jupyter.orchestrator.judge import Verdict
    from loom_jupyter.orchestrator.plan import Plan
    from loom_jupyter.orchestrator.progress import (
        SubtaskStatus,
        TaskSnapshot,
        TaskStatus,
        TaskUpdate,
    )
    from loom_jupyter.orchestrator.state import SubtaskRun
    from loom_jupyter.records import SubtaskInfo, TaskInfo
    from loom_jupyter.telemetry import AgentTrace

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
        self.record = TaskRecord(parent, goal, self.budget, listener)
        self.schedule = SubtaskSchedule(
            self.record,
            max_parallel=self.options.max_parallel or settings.delegate_max_parallel,
            stagger=settings.delegate_stagger,
        )
        self._cancelled = False
        self._caller = ForcedCaller(parent, self.spend, self._seen)
        self._trace: AgentTrace | None = None  # its invoke_agent span, from open or execute

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
        delegation.record.reopen(task, rows)
        return delegation

    # -- what the fronts read -------------------------------------------------

    @property
    def task_id(self) -> str:
        """The task's id (empty until :meth:`open`)."""
        return self.record.task_id

    @property
    def status(self) -> TaskStatus:
        """Where the task stands."""
        return self.record.status

    @property
    def message(self) -> str:
        """Why it stopped early or failed, if it did."""
        return self.record.message

    @property
    def runs(self) -> dict[str, SubtaskRun]:
        """Each subtask's run, by subtask id."""
        return self.record.runs

    def snapshot(self) -> TaskSnapshot:
        """The delegation as it stands now."""
        return self.record.snapshot()

    # -- planning -----------------------------------------------------------

    async def open(self) -> str:
        """Record the task (status ``planning``); returns its id."""
        task_id = await self.record.open(self.options.to_json())
        self._span()
        return task_id

    def _span(self) -> AgentTrace:
        """The delegation's ``invoke_agent loom`` span (telemetry/), started once."""
        if self._trace is None:
            parent = self.parent
            self._trace = tracer_for(parent.settings).delegation(
                task_id=self.task_id,
                session_id=parent.session_id,
                notebook=str(parent.notebook_path),
                goal=self.goal,
                approval=parent.policy.mode if parent.policy is not None else "auto",
            )
        return self._trace

    def _seen(self, call: ForcedCall, tool: str) -> None:
        self._span().chat(
            model=call.model,
            usage=call.usage,
            latency_ms=call.latency_ms,
            stop_reason=call.stop_reason,
            purpose=tool,
        )

    async def _finished(self, status: TaskStatus) -> TaskSnapshot:
        snapshot = await self.record.finish(status)
        error = status if status in ("failed", "cancelled") else ""
        self._span().end(error=error, reason=status)
        return snapshot

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
        await self.record.store_plan(plan)
        return plan

    async def decline(self, message: str) -> None:
        """The plan was not approved: the task ends ``cancelled`` before anything ran."""
        self._cancelled = True
        await self._settle_cancelled(message)

    async def _settle_cancelled(self, message: str) -> None:
        self.record.message = message
        await self.schedule.end_pending("cancelled", message)
        await self._finished("cancelled")

    async def _fail_early(self, message: str) -> None:
        self.record.message = message
        await self._finished("failed")

    # -- running ------------------------------------------------------------

    async def execute(self) -> TaskSnapshot:
        """Run every subtask that has not passed; returns the final snapshot."""
        await self.record.start_running()
        try:
            await self.schedule.run(self._attempts)
        except asyncio.CancelledError:
            await asyncio.shield(
                self._stop_everything("cancelled", "stopped: the run was cancelled")
            )
            raise
        return await self._conclude()

    def cancel(self, reason: str = "stopped by the person") -> None:
        """Stop: running subtasks are cancelled, nothing new starts (call on the loop)."""
        self._cancelled = True
        self.schedule.halt("cancelled", reason)

    async def _attempts(self, run: SubtaskRun) -> None:
        feedback: str | None = None
        tries = 1 + self.parent.settings.delegate_max_retries
        for _ in range(tries):
            halted = self.schedule.halt_reason
            why = halted if halted is not None else self.budget.take_run()
            if why is not None:
                await self.record.end(run, "failed" if run.verdicts else "skipped", why)
                return
            outcome = await self._attempt(run, feedback)
            if outcome.end != "done":
                await self.record.end(run, outcome.end, outcome.message or outcome.end)
                return
            run.result = outcome.text
            verdict = await self._verify(run, outcome)
            if verdict is None or verdict.verdict == "pass":
                run.effects = list(outcome.effects)
                await self.record.end(
                    run, "passed", verdict.feedback if verdict else "not verified"
                )
                return
            feedback = verdict.feedback
            self.record.emit("retrying", run.sub.id, feedback)
        await self.record.end(
            run, "failed", f"did not pass verification in {tries} runs: {feedback}"
        )

    async def _attempt(self, run: SubtaskRun, feedback: str | None) -> ChildOutcome:
        await self.schedule.wait_for_lead(run)
        run.attempt += 1
        session_id = await self.record.child_session(run)
        self.record.emit("started", run.sub.id, f"attempt {run.attempt}")
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
            trace=self._span().subagent(
                subtask_id=run.sub.id, attempt=run.attempt, session_id=session_id
            ),
        )

    async def _verify(self, run: SubtaskRun, outcome: ChildOutcome) -> Verdict | None:
        if not self.options.verify:
            return None
        self.record.emit("verifying", run.sub.id, "verifying")
        verdict, usage, cost = await verify(
            run.sub,
            run.attempt,
            outcome,
            kernel=self.parent.kernel,
            caller=self._caller,
            judge_model=self.parent.settings.delegate_judge_model,
        )
        run.usage, run.cost = run.usage + usage, run.cost + cost
        await self.record.add_verdict(run, verdict)
        return verdict

    # -- caps and stopping --------------------------------------------------

    def spend(self, usage: Usage, cost: float, model: str) -> None:
        """Count a request; a breached budget stops all work."""
        self.budget.spend(usage, cost, model)
        why = self.budget.breach()
        if why is not None and self.schedule.halt_reason is None:
            self.record.message = f"Stopped early: {why}."
            self.schedule.halt("incomplete", why)

    async def _stop_everything(self, status: SubtaskStatus, reason: str) -> None:
        self._cancelled = True
        await self.schedule.stop(status, reason)
        await self._settle_cancelled(reason)

    async def _conclude(self) -> TaskSnapshot:
        if self._cancelled:
            return await self._finished("cancelled")
        passed = all(run.status == "passed" for run in self.runs.values())
        return await self._finished("passed" if passed else "failed")


class _Observer:
    """A child's activity, turned into progress and budget spend."""

    def __init__(self, delegation: Delegation, run: SubtaskRun) -> None:
        self._delegation, self._run = delegation, run
        self._active = False

    def on_activity(self) -> None:
        self._delegation.schedule.warmed(self._run)
        if not self._active:
            self._active = True
            self._delegation.record.emit("usage", self._run.sub.id, "answering")

    def on_tool(self, name: str) -> None:
        self._run.last_tool = name
        self._delegation.record.emit("tool", self._run.sub.id, name)

    def on_usage(self, usage: Usage, cost: float, model: str) -> None:
        run = self._run
        run.usage, run.cost = run.usage + usage, run.cost + cost
        self._delegation.spend(usage, cost, model)
        self._delegation.record.emit("usage", run.sub.id)
