"""The kernel side of delegation: one orchestrator per kernel, its progress in every front.

:func:`attach_front` runs on the engine loop once the session is open: it gives
the session its orchestrator (so ``delegate_task`` works in ``%cowork`` turns),
marks tasks a previous kernel left unfinished as ``interrupted``, and sends
every task's snapshot to the sidebar (kept there for replays). Each progress
update then reaches the sidebar, the live panel and — as a short line — the
cell that is running (a ``%delegate`` cell or the ``%cowork`` turn that called
``delegate_task``), so a delegation is never silent.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from loom_jupyter.jupyter.delegation.view import progress_line, task_table_bundle, to_sidebar
from loom_jupyter.orchestrator import attach

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.jupyter.cell.render import Renderer
    from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue
    from loom_jupyter.orchestrator import Delegations, TaskSnapshot, TaskUpdate
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["DelegateFront", "FrontHost", "attach_front", "front_of"]

T = TypeVar("T")

_FRONTS: dict[int, DelegateFront] = {}  # id(coworker) -> its front
_TABLE_EVERY = 0.5  # seconds between live-table redraws (status changes redraw at once)


class TaskBoard(Protocol):
    """Where a task's live table is shown besides its cell (the live panel)."""

    def show_task(self, snapshot: TaskSnapshot) -> None:
        """Draw ``snapshot`` (main thread)."""
        ...


class Panels(Protocol):
    """The coworker's panel front, as a delegation's front reads it."""

    @property
    def panel(self) -> TaskBoard | None:
        """The live panel, when one is shown."""
        ...


class FrontHost(Protocol):
    """What a delegation's front asks of the kernel's coworker (``KernelCowork``)."""

    @property
    def main(self) -> MainThreadQueue:
        """Work for the kernel's main thread."""
        ...

    @property
    def panels(self) -> Panels:
        """The live panel's front (its panel, when one is shown)."""
        ...

    @property
    def floor(self) -> TurnFloor:
        """The host's turn floor: task progress goes out on its stream."""
        ...

    @property
    def in_kernel(self) -> bool:
        """Rich output (a kernel) or text (a terminal)."""
        ...

    async def session_async(self) -> CoworkSession:
        """The conversation, awaited on the engine loop."""
        ...

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the engine loop, pumping the main thread."""
        ...


class DelegateFront:
    """Routes one kernel's delegation updates to the sidebar, the panel and the cell."""

    def __init__(self, cowork: FrontHost, delegations: Delegations) -> None:
        self.cowork = cowork
        self.delegations = delegations
        self.renderer: Renderer | None = None  # the %delegate cell's, while it runs
        self._tables: dict[str, Any] = {}  # task id -> display handle of its live table
        self._drawn: dict[str, float] = {}
        self.interrupted: list[str] = []
        delegations.subscribe(self._on_update)

    def _on_update(self, update: TaskUpdate) -> None:
        """On the engine loop: the sidebar now, the main thread for displays."""
        try:
            self.cowork.floor.publish_task(to_sidebar(update.snapshot))
        except RuntimeError:  # the engine loop is shutting down
            return
        self.cowork.main.post(lambda: self._show(update))

    def _show(self, update: TaskUpdate) -> None:
        """On the main thread: panel, live table, progress line."""
        panel = self.cowork.panels.panel
        if panel is not None:
            panel.show_task(update.snapshot)
        renderer = self._cell_renderer()
        if renderer is not None:
            self.track(update.snapshot)  # the running cell gets the task's live table
        self._redraw(update)
        line = progress_line(update)
        if line and renderer is not None:
            renderer.message(line)

    def _cell_renderer(self) -> Renderer | None:
        """The running cell's renderer: a %delegate cell's, or a blocking %cowork turn's.

        Nothing when no cell is pumping (a background task, a sidebar turn): its lines
        would land in whichever cell ran last.
        """
        if self.renderer is not None:
            return self.renderer
        if not self.cowork.main.pumping:
            return None
        renderer: Renderer | None = getattr(self.cowork, "_renderer", None)
        return renderer

    def track(self, snapshot: TaskSnapshot) -> None:
        """Show ``snapshot`` as a live table in the current cell (main thread)."""
        if not self.cowork.in_kernel or snapshot.task_id in self._tables:
            return
        from IPython.display import display

        bundle = task_table_bundle(snapshot)
        self._tables[snapshot.task_id] = display(bundle, raw=True, display_id=True)

    def _redraw(self, update: TaskUpdate) -> None:
        snapshot = update.snapshot
        handle = self._tables.get(snapshot.task_id)
        if handle is None:
            return
        now = time.monotonic()
        if (
            update.change in ("tool", "usage")
            and now - self._drawn.get(snapshot.task_id, 0) < _TABLE_EVERY
        ):
            return
        self._drawn[snapshot.task_id] = now
        handle.update(task_table_bundle(snapshot), raw=True)


async def attach_front(cowork: FrontHost, session: CoworkSession | None = None) -> DelegateFront:
    """Give the kernel's session its orchestrator and its fronts (engine loop; idempotent)."""
    existing = _FRONTS.get(id(cowork))
    if existing is not None:
        return existing
    session = session or await cowork.session_async()
    front = DelegateFront(cowork, attach(session))
    _FRONTS[id(cowork)] = front
    front.interrupted = await front.delegations.mark_interrupted()
    for snapshot in await front.delegations.snapshots():
        cowork.floor.publish_task(to_sidebar(snapshot))
    return front


def delegations_running(cowork: FrontHost) -> bool:
    """Whether a delegation of this kernel's coworker is running now (any thread)."""
    front = _FRONTS.get(id(cowork))
    return front is not None and bool(front.delegations.running)


def detach_front(cowork: FrontHost) -> None:
    """Forget the closed coworker's front (a later coworker may reuse its id)."""
    _FRONTS.pop(id(cowork), None)


def front_of(cowork: FrontHost) -> DelegateFront:
    """The kernel's front, attaching it on first use (main thread)."""
    front = _FRONTS.get(id(cowork))
    return front if front is not None else cowork.run(attach_front(cowork))
