"""A session's delegations: start (waiting or in the background), approve, cancel, resume.

:func:`attach` gives a :class:`~loom_jupyter.session.conversation.CoworkSession`
its :class:`Delegations`, which is also the session's ``delegator`` (what the
``delegate_task`` tool calls). Fronts subscribe to :class:`TaskUpdate` events
and call :meth:`Delegations.start` for ``%delegate``. When a delegation that
was not awaited by a tool call ends, its digest is added to the conversation
as a ``system`` turn, so the next turn sees it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loom_jupyter.engine.tokens import turn_tokens
from loom_jupyter.errors import DelegationError
from loom_jupyter.messages import TextBlock, TurnDraft
from loom_jupyter.orchestrator.approve import ask_to_run
from loom_jupyter.orchestrator.delegation import Delegation
from loom_jupyter.orchestrator.digest import digest
from loom_jupyter.orchestrator.kernel_lock import SerializedKernel
from loom_jupyter.orchestrator.parent import DelegateOptions, ParentContext
from loom_jupyter.orchestrator.progress import TaskSnapshot, TaskUpdate, archived_snapshot
from loom_jupyter.tools.base import ToolOutput
from loom_jupyter.tools.delegate import DELEGATE_TOOL_NAME
from loom_jupyter.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from loom_jupyter.records import TaskInfo
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["DelegationOutcome", "Delegations", "attach"]

_UNFINISHED = ("planning", "running")
_MAX_VARIABLES = 30


@dataclass(frozen=True)
class DelegationOutcome:
    """How a delegation ended (or that it runs on in the background)."""

    task_id: str
    status: str
    digest: str
    snapshot: TaskSnapshot | None = None


def attach(session: CoworkSession) -> Delegations:
    """Give ``session`` an orchestrator (idempotent); returns it."""
    existing = session.environment.delegator
    if isinstance(existing, Delegations):
        return existing
    delegations = Delegations(session)
    session.environment.delegator = delegations
    session.add_busy_probe(delegations.running_word)  # no session switch under a delegation
    return delegations


class Delegations:
    """Every delegation of one session, running or archived."""

    def __init__(self, session: CoworkSession) -> None:
        self.session = session
        self.kernel = SerializedKernel(session.kernel)
        self._running: dict[str, tuple[Delegation, asyncio.Task[DelegationOutcome]]] = {}
        self._listeners: list[Callable[[TaskUpdate], None]] = []
        self.latest: dict[str, TaskSnapshot] = {}  # task id -> last snapshot (for replays)

    # -- listening ------------------------------------------------------------

    def subscribe(self, listener: Callable[[TaskUpdate], None]) -> Callable[[], None]:
        """Call ``listener`` on every update (on the engine loop); returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _publish(self, update: TaskUpdate) -> None:
        self.latest[update.snapshot.task_id] = update.snapshot
        for listener in list(self._listeners):
            try:
                listener(update)
            except Exception:  # one broken front must not silence the others
                continue

    # -- starting -------------------------------------------------------------

    async def start(
        self,
        goal: str,
        *,
        context: str = "",
        options: DelegateOptions | None = None,
        background: bool = False,
    ) -> DelegationOutcome:
        """Plan and run ``goal`` (for ``%delegate``: the person asked, so no approval card).

        With ``background`` this returns once the task is recorded; the digest is
        posted to the conversation when it ends.
        """
        delegation = Delegation(
            await self._parent(context), goal, options=options, listener=self._publish
        )
        task_id = await delegation.open()
        job = self._launch(delegation, self._plan_and_run(delegation), note=True)
        if background:
            return DelegationOutcome(task_id, "running", f"Delegated task {task_id} started.")
        return await job

    async def delegate_for_tool(self, goal: str, context: str, *, wait: bool) -> ToolOutput:
        """``delegate_task``: the session's approval mode applies once the plan exists."""
        policy = self.session.policy
        if policy.mode == "read-only":
            return ToolOutput.error(
                "delegate_task starts sub-agents that change things, and this session is "
                "read-only, so it was not run. Describe the plan instead."
            )
        delegation = Delegation(await self._parent(context), goal, listener=self._publish)
        task_id = await delegation.open()
        job = self._launch(delegation, self._approve_and_run(delegation), note=not wait)
        if not wait:
            return ToolOutput.text(
                f"Delegated task {task_id} is running in the background; its digest will be "
                "posted to the conversation when it ends.",
                summary=f"delegated {task_id[:8]} (background)",
            )
        outcome = await job
        failed = outcome.status in ("failed", "cancelled") and outcome.snapshot is None
        return ToolOutput.text(outcome.digest, summary=f"task {outcome.status}", is_error=failed)

    async def resume(
        self, task_ref: str, *, options: DelegateOptions | None = None, background: bool = False
    ) -> DelegationOutcome:
        """Run again what did not pass in an archived task."""
        task = await self._task(task_ref)
        if task.id in self._running:
            raise DelegationError(f"Task {task.id} is still running.")
        if not task.plan_json:
            raise DelegationError(f"Task {task.id} has no plan to resume; delegate the goal again.")
        rows = await self.session.archive.list_subtasks(task.id)
        options = options or DelegateOptions(**json.loads(task.options_json or "{}"))
        delegation = await Delegation.restore(
            await self._parent(""), task, rows, options=options, listener=self._publish
        )
        job = self._launch(delegation, self._run(delegation), note=True)
        if background:
            return DelegationOutcome(task.id, "running", f"Delegated task {task.id} resumed.")
        return await job

    def _launch(
        self, delegation: Delegation, work: Coroutine[Any, Any, DelegationOutcome], *, note: bool
    ) -> asyncio.Task[DelegationOutcome]:
        """Run ``work`` as a task of its own (a background run outlives its caller)."""
        job = asyncio.ensure_future(self._finish(delegation, work, note=note))
        self._running[delegation.task_id] = (delegation, job)
        return job

    async def _finish(
        self, delegation: Delegation, work: Coroutine[Any, Any, DelegationOutcome], *, note: bool
    ) -> DelegationOutcome:
        try:
            outcome = await work
        finally:
            self._running.pop(delegation.task_id, None)
        if note:
            await self._post(outcome.digest, delegation.parent.session_id)
        return outcome

    async def _plan_and_run(self, delegation: Delegation) -> DelegationOutcome:
        if await delegation.plan() is None:
            return self._outcome(delegation, final=False)
        return await self._run(delegation)

    async def _approve_and_run(self, delegation: Delegation) -> DelegationOutcome:
        plan = await delegation.plan()
        if plan is None:
            return self._outcome(delegation, final=False)
        refusal = await ask_to_run(self.session.policy, delegation, plan)
        if refusal is not None:
            await delegation.decline(refusal)
            return self._outcome(delegation, final=False)
        return await self._run(delegation)

    async def _run(self, delegation: Delegation) -> DelegationOutcome:
        await delegation.execute()
        return self._outcome(delegation, final=True)

    def _outcome(self, delegation: Delegation, *, final: bool) -> DelegationOutcome:
        text = digest(
            task_id=delegation.task_id,
            goal=delegation.goal,
            status=delegation.status,
            message=delegation.message,
            runs=delegation.runs.values(),
            tokens=delegation.budget.tokens,
            cost=delegation.budget.cost_text,
        )
        snapshot = delegation.snapshot() if final else None
        return DelegationOutcome(delegation.task_id, delegation.status, text, snapshot)

    # -- control --------------------------------------------------------------

    def cancel(self, task_ref: str | None = None) -> list[str]:
        """Stop running delegations (all, or the one ``task_ref`` names); their ids."""
        stopped = []
        for task_id, (delegation, _) in list(self._running.items()):
            if task_ref is None or task_id.startswith(task_ref):
                delegation.cancel()
                stopped.append(task_id)
        return stopped

    @property
    def running(self) -> list[str]:
        """Ids of the delegations running now."""
        return list(self._running)

    def running_word(self) -> str | None:
        """``"A delegation"`` while one runs (what a refused session switch names), else None."""
        return "A delegation" if self._running else None

    async def wait(self, task_id: str) -> DelegationOutcome | None:
        """The outcome of a running delegation once it ends (``None`` if it is not running)."""
        entry = self._running.get(task_id)
        return None if entry is None else await asyncio.shield(entry[1])

    async def mark_interrupted(self) -> list[str]:
        """After a restart: this session's unfinished tasks become ``interrupted``."""
        sid = self.session.session_id
        if sid is None:
            return []
        marked = []
        archive = self.session.archive
        for task in await archive.list_tasks(sid):
            if task.status in _UNFINISHED and task.id not in self._running:
                for row in await archive.list_subtasks(task.id):
                    if row.status == "running":
                        await archive.update_subtask(
                            row.id, status="incomplete", reason="interrupted by a kernel restart"
                        )
                await archive.update_task(task.id, status="interrupted", message="kernel restarted")
                marked.append(task.id)
        return marked

    async def snapshots(self) -> list[TaskSnapshot]:
        """Every task of this session: live ones as they stand, the rest from the archive."""
        sid = self.session.session_id
        if sid is None:
            return []
        out = []
        for task in await self.session.archive.list_tasks(sid):
            live = self._running.get(task.id)
            out.append(live[0].snapshot() if live else await self._archived(task.id))
        return out

    async def _archived(self, task_id: str) -> TaskSnapshot:
        archive = self.session.archive
        task = await archive.get_task(task_id)
        return archived_snapshot(task, await archive.list_subtasks(task_id))

    async def _task(self, ref: str) -> TaskInfo:
        sid = self.session.session_id
        tasks = await self.session.archive.list_tasks(sid) if sid else []
        found = [t for t in tasks if t.id.startswith(ref.strip())] if ref.strip() else []
        if len(found) != 1:
            how = "no task" if not found else f"{len(found)} tasks"
            raise DelegationError(f"{how} of this session matches {ref!r}; see `%delegate status`.")
        return found[0]

    # -- the parent -------------------------------------------------------------

    async def _parent(self, context: str) -> ParentContext:
        session = self.session
        sid = await session.ensure_session_id()
        tools = ToolRegistry(
            t for t in session.environment.tools if t.spec.name != DELEGATE_TOOL_NAME
        )
        return ParentContext(
            archive=session.archive,
            session_id=sid,
            notebook_path=session.notebook_path,
            settings=session.settings,
            model=session.model,
            tools=tools,
            kernel=self.kernel,
            context=await self._context_text(context),
            policy=session.policy,
            shape=session.environment.request_shape(),
        )

    async def _context_text(self, extra: str) -> str:
        parts = []
        state = self.session.state.to_yaml().strip()
        if state:
            parts.append(f"Session state (decisions are standing instructions):\n{state}")
        try:
            variables = list(await self.session.kernel.list_variables())[:_MAX_VARIABLES]
        except Exception:  # a namespace that cannot be listed leaves the context shorter
            variables = []
        if variables:
            listed = "\n".join(
                f"- {v.name}: {v.type_name}{f' {v.shape}' if v.shape else ''}" for v in variables
            )
            parts.append(f"Variables in the namespace:\n{listed}")
        if extra.strip():
            parts.append(f"From the request:\n{extra.strip()}")
        return "\n\n".join(parts)

    async def _post(self, text: str, session_id: str) -> None:
        """Add the digest to the delegating conversation once no turn is writing it.

        Session switches are refused while a delegation runs; should the current session
        differ all the same, the digest is archived in the delegating one (it is there when
        that session is resumed), not in this one.
        """
        while self.session.busy:  # noqa: ASYNC110 (the session has no idle event to wait on)
            await asyncio.sleep(0.1)
        if self.session.session_id == session_id:
            await self.session.append_note(text)
            return
        blocks = (TextBlock(text),)
        draft = TurnDraft(
            role="system", content=text, blocks=blocks, token_count=turn_tokens(text, blocks)
        )
        await self.session.archive.append_turn(session_id, draft)
