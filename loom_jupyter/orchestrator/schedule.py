"""A plan's subtasks run as a DAG: what may start, bounded parallelism, halting, the cache's lead.

A subtask starts once every subtask it depends on has passed, at most
``max_parallel`` at a time; one whose dependency did not pass is skipped. A halt
(a breached budget, a cancellation) cancels what runs and skips what has not
started. With ``stagger``, the first subtask's first request goes alone, so the
others read the prompt prefix it cached.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from loom_jupyter.orchestrator.progress import SubtaskStatus
    from loom_jupyter.orchestrator.state import SubtaskRun
    from loom_jupyter.orchestrator.task_record import TaskRecord

__all__ = ["SubtaskSchedule"]


class SubtaskSchedule:
    """The running subtasks of one delegation and the halt that stops them."""

    def __init__(self, record: TaskRecord, *, max_parallel: int, stagger: bool) -> None:
        self._record, self._max_parallel, self._stagger = record, max_parallel, stagger
        self._tasks: dict[asyncio.Task[None], SubtaskRun] = {}
        self._halt: tuple[SubtaskStatus, str] | None = None
        self._leader: SubtaskRun | None = None
        self._warm = asyncio.Event()

    @property
    def halt_reason(self) -> str | None:
        """Why no more work may start, once halted."""
        return None if self._halt is None else self._halt[1]

    async def run(self, work: Callable[[SubtaskRun], Awaitable[None]]) -> None:
        """Run ``work`` for every subtask that can run, until none is left running."""
        while True:
            await self.settle_pending()
            for run in self._startable():
                self._start(run, work)
            if not self._tasks:
                return
            done, _ = await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                self._tasks.pop(task)

    def halt(self, status: SubtaskStatus, reason: str) -> None:
        """Stop: running subtasks are cancelled with ``status``, nothing new starts."""
        if self._halt is None:
            self._halt = ("skipped" if status == "incomplete" else status, reason)
        for task, run in self._tasks.items():
            run.stop = (status, reason)
            task.cancel()

    async def stop(self, status: SubtaskStatus, reason: str) -> None:
        """Halt, then wait until every running subtask has ended."""
        self.halt(status, reason)
        if self._tasks:
            await asyncio.wait(set(self._tasks))
        self._tasks.clear()

    async def end_pending(self, status: SubtaskStatus, reason: str) -> None:
        """Every subtask not yet started ends with ``status`` (this halt wins over earlier ones)."""
        self._halt = (status, reason)
        await self.settle_pending()

    async def settle_pending(self) -> None:
        """Skip what can no longer run (a failed dependency, a halt), to a fixed point."""
        changed = True
        while changed:
            changed = False
            for run in self._record.runs.values():
                if run.status != "pending":
                    continue
                why = self._halt or self._blocked(run)
                if why is not None:
                    await self._record.end(run, why[0], why[1])
                    changed = True

    def _blocked(self, run: SubtaskRun) -> tuple[SubtaskStatus, str] | None:
        for dep in run.sub.depends_on:
            status = self._record.runs[dep].status
            if status not in ("pending", "running", "passed"):
                return "skipped", f"depends on {dep}, which {_said(status)}"
        return None

    def _startable(self) -> list[SubtaskRun]:
        if self._halt is not None:
            return []
        runs = self._record.runs
        ready = [
            run
            for run in runs.values()
            if run.status == "pending"
            and all(runs[d].status == "passed" for d in run.sub.depends_on)
        ]
        return ready[: max(self._max_parallel - len(self._tasks), 0)]

    def _start(self, run: SubtaskRun, work: Callable[[SubtaskRun], Awaitable[None]]) -> None:
        run.begin()
        if self._leader is None:
            self._leader = run
        self._tasks[asyncio.ensure_future(self._guarded(run, work))] = run

    async def _guarded(
        self, run: SubtaskRun, work: Callable[[SubtaskRun], Awaitable[None]]
    ) -> None:
        try:
            await work(run)
        except asyncio.CancelledError:
            status, reason = run.stop or ("cancelled", "stopped")
            await asyncio.shield(self._record.end(run, status, reason))
        except Exception as exc:  # a sub-agent's crash fails its subtask, not the delegation
            await self._record.end(run, "failed", f"raised {type(exc).__name__}: {exc}")
        finally:
            self.warmed(run)

    # -- the cache's lead -----------------------------------------------------

    async def wait_for_lead(self, run: SubtaskRun) -> None:
        """With ``stagger``, a follower waits for the leader's first answer to arrive."""
        if self._leader is not run and self._stagger:
            await self._warm.wait()  # the first request's prefix is in the cache by now

    def warmed(self, run: SubtaskRun) -> None:
        """``run`` got an answer (or ended): if it leads, the others may start asking."""
        if run is self._leader:
            self._warm.set()


def _said(status: str) -> str:
    return {
        "failed": "failed",
        "skipped": "was skipped",
        "cancelled": "was cancelled",
        "incomplete": "did not complete",
    }.get(status, status)
