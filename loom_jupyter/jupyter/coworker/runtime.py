"""One kernel's coworker: the Jupyter side of a :class:`~loom_jupyter.host.host.Host`.

:class:`KernelCowork` is created by ``%load_ext`` and shared by every front in the
kernel. The host (archive, session, turns, the event stream) runs on its engine
thread; this class adds what needs the kernel: the main-thread queue the magics pump,
the live namespace bridge, the stdin approver, the person's cells, the cell renderer
and the panel (both subscribers of the host's stream) and the sidebar's comm.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from loom_jupyter.errors import LoomError
from loom_jupyter.host.host import Host, KernelPorts
from loom_jupyter.host.runtime.stream import TurnEvent
from loom_jupyter.jupyter.coworker.comm_fronts import CommFronts
from loom_jupyter.jupyter.coworker.panel_front import PanelFront
from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence
    from pathlib import Path

    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.runtime.loop_thread import LoopThread
    from loom_jupyter.host.runtime.stream import Published
    from loom_jupyter.host.services.views import Views
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.jupyter.cell.approval import StdinApprover
    from loom_jupyter.jupyter.cell.render import Renderer
    from loom_jupyter.jupyter.kernel.activity import CellActivity
    from loom_jupyter.jupyter.kernel.front import FrontKind
    from loom_jupyter.jupyter.sidebar.cellguard import CellGuard
    from loom_jupyter.jupyter.sidebar.hub import SidebarHub
    from loom_jupyter.models.base import Model
    from loom_jupyter.session.conversation import CoworkSession
    from loom_jupyter.tools.base import ExecutionResult

__all__ = ["KernelCowork", "TurnOutcome"]

T = TypeVar("T")


@dataclass(frozen=True)
class TurnOutcome:
    """How a blocking turn ended, as seen by the magic."""

    interrupted: bool
    error: str | None = None


class KernelCowork:
    """The coworker of one kernel (one notebook)."""

    def __init__(
        self,
        shell: Any,
        location: NotebookLocation,
        *,
        model: Model | None = None,
        owner: str | None = None,
    ) -> None:
        self.shell = shell
        self.host = Host(location, model=model, owner=owner)
        self.main = MainThreadQueue(_running_loop())
        self.approver: StdinApprover | None = None  # built with the session, off the main thread
        self.panels = PanelFront(shell, self.host, self.main, self.run)
        self._renderer: Renderer | None = None  # the cell turn's, while its cell pumps
        self.comms = CommFronts(shell, self.host)  # hubs built on first use: a light load
        self._guard: CellGuard | None = None
        self.activity: CellActivity | None = None  # the person's cells between turns

    # the host's parts, by name -------------------------------------------------

    @property
    def location(self) -> NotebookLocation:
        """The notebook this kernel serves."""
        return self.host.location

    @property
    def loop_thread(self) -> LoopThread:
        """The host's engine thread."""
        return self.host.loop_thread

    @property
    def floor(self) -> TurnFloor:
        """The host's turn floor (turns, queue, approvals, the stream)."""
        return self.host.floor

    @property
    def views(self) -> Views:
        """History, sessions and search, read through the host."""
        return self.host.views

    @property
    def archive_path(self) -> Path:
        """The notebook's archive file."""
        return self.host.archive_path

    # lifecycle -------------------------------------------------------------
    #
    # Opening is split so that %load_ext stays quick: the archive is opened and
    # the latest session looked up first (enough for the banner); building the
    # session (agent, tools, context: the heavy imports) continues on the engine
    # thread after the load returns. Anything that needs the session waits for it.

    def start(self) -> None:
        """Begin opening: the archive opens on the engine thread while this thread goes on
        (``%load_ext`` registers its magics meanwhile); :meth:`open` waits for it."""
        if self.host.opening is not None:
            return
        from loom_jupyter.jupyter.sidebar.cellguard import CellGuard

        self._guard = CellGuard(self.shell)  # before the bridge is built on the engine thread
        ports = KernelPorts(
            self._bridge, self._approver, self._note_activity, self._opened, self._present
        )
        self.host.start(ports)

    def open(self, *, attach_sidebar: bool = True, hold: bool = False) -> None:
        """Open the archive and start resuming the latest active session.

        ``attach_sidebar=False`` leaves the comm targets alone: a predecessor hands its
        open sidebars and agents' links over (:meth:`CommFronts.take`). ``hold=True`` keeps the
        session's building waiting until :meth:`go_on` (``%load_ext`` prints its banner
        first); a failure to open lets it go at once.
        """
        self.start()
        opening = self.host.opening
        assert opening is not None  # started just now or by start()
        try:
            self.main.pump_until(_either(opening, self.host.peeked))
            if opening.done():
                opening.result()  # raise a failure to open the archive now
            self._watch_cells()
            if self.in_kernel and attach_sidebar:
                self.comms.listen()
        except BaseException:
            self.go_on()
            raise
        if not hold:
            self.go_on()

    def go_on(self) -> None:
        """Let the session's building (its heavy imports) go on, on the engine thread."""
        if not self.host.loaded.done():
            self.host.loaded.set_result(None)

    @property
    def idle(self) -> bool:
        """No turn and no delegation is running (the archive may be swapped)."""
        from loom_jupyter.jupyter.delegation.front import delegations_running

        return self.host.idle and not delegations_running(self)

    def _watch_cells(self) -> None:
        """Follow the person's cells; the next turn is told what they ran (main thread)."""
        from loom_jupyter.jupyter.kernel.activity import CellActivity, earlier_cells

        if self.activity is None and getattr(self.shell, "events", None) is not None:
            self.activity = CellActivity(self.shell, recorder=self.host.executions.record)
            for record in earlier_cells(self.shell):  # run before Loom loaded (issue 30)
                self.host.executions.record(record)

    def _present(self, names: Sequence[str]) -> list[str]:
        """Which of ``names`` the namespace has (a dict lookup each: any thread)."""
        namespace = self.shell.user_ns
        return [name for name in names if name in namespace]

    async def _note_activity(self, session: CoworkSession) -> None:
        """Archive the cells run since the last turn as a system note (engine loop)."""
        from loom_jupyter.jupyter.kernel.activity import activity_effects, activity_note

        runs = self.activity.take() if self.activity is not None else []
        note = activity_note(runs) if session.settings.notebook_activity else None
        if note:
            await session.append_note(note, activity_effects(runs))

    async def _opened(self, session: CoworkSession) -> None:
        """The session is open (engine loop): %delegate and delegate_task get their fronts."""
        from loom_jupyter.jupyter.delegation.front import attach_front

        await attach_front(self, session)

    @property
    def sidebar(self) -> SidebarHub:
        """The kernel's sidebars: every open sidebar comm, on the host's stream."""
        return self.comms.sidebar

    def _approver(self) -> Any:
        """The session's approver: stdin, and the sidebar when one is open (engine thread)."""
        from loom_jupyter.host.runtime.approvals import SharedApprover
        from loom_jupyter.jupyter.cell.approval import StdinApprover

        self.approver = StdinApprover(self.main)
        return SharedApprover(self.approver, self.floor)

    def _bridge(self) -> Any:
        """The KernelBridge over the live namespace; it waits for the person's running cell."""
        from loom_jupyter.jupyter.kernel.bridge import LiveKernelBridge
        from loom_jupyter.jupyter.sidebar.cellguard import GuardedBridge

        assert self._guard is not None  # made by open() before this runs
        live = LiveKernelBridge(
            self.shell, self.main, on_result=self._shown, recorder=self.host.executions.record
        )
        return GuardedBridge(live, self.shell, self.main, self._guard, self.floor)

    def close(self) -> None:
        """Release the lease and close the archive; safe to call twice (atexit, unload)."""
        if not self.loop_thread.alive:
            return
        self.go_on()  # a held opening ends before the host closes
        from loom_jupyter.jupyter.delegation.front import detach_front

        detach_front(self)
        self.comms.close(in_kernel=self.in_kernel)
        if self._guard is not None:
            self._guard.close()
        if self.activity is not None:
            self.activity.close()
        self.host.close()

    def _ready(self) -> None:
        """Wait (pumping) until the session is open; raise if opening failed."""
        opening = self.host.opening
        if opening is None:
            raise LoomError("loom is not loaded: run %load_ext loom_jupyter first")
        if not opening.done():
            self.main.pump_until(opening)
        opening.result()

    # access ------------------------------------------------------------------

    @property
    def session(self) -> CoworkSession:
        """The conversation (waits, pumping, for the end of opening)."""
        self._ready()
        return self.host.session_now()

    def session_now(self) -> CoworkSession:
        """The conversation, from the engine loop once opening is done."""
        return self.host.session_now()

    async def session_async(self) -> CoworkSession:
        """The conversation, awaited on the engine loop (opening may still run)."""
        return await self.host.session_async()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the engine loop once the session is open, pumping the main thread."""
        self._ready()
        future = self.loop_thread.submit(coro)
        self.main.pump_until(future)
        return future.result(timeout)

    @property
    def needs_api_key(self) -> bool:
        """Whether requests go to the Anthropic API (Bedrock/Vertex use cloud credentials)."""
        return self.session.settings.provider == "anthropic"

    @property
    def front(self) -> FrontKind:
        """The front of the cell running now: a notebook page, a console, or a terminal."""
        from loom_jupyter.jupyter.kernel.front import front_kind

        placed = self.location.source not in ("terminal", "unknown")
        return front_kind(self.shell, placed=placed)

    def missing_key(self) -> str | None:
        """The no-key message in the words of the front in use, when requests need a key
        and there is none (else None)."""
        from loom_jupyter.host.services.keys import missing_key_message

        return missing_key_message(self.front) if self.needs_api_key else None

    @property
    def in_kernel(self) -> bool:
        """True inside ipykernel (rich output); False in a terminal shell."""
        return getattr(self.shell, "kernel", None) is not None

    def banner(self) -> str:
        """The notebook, the session resumed (or new), how to switch; wrapped at words."""
        from loom_jupyter.jupyter.coworker.banner import banner

        return banner(self.host)

    # turns: the cell's front -----------------------------------------------------------

    def send(self, text: str) -> TurnOutcome:
        """Run one turn, rendering it into the cell; returns when the turn ends."""
        _ = self.session  # waits for the end of opening (and raises if it failed)
        from loom_jupyter.jupyter.cell.render import make_renderer

        renderer = make_renderer(self.shell, self.front)
        assert self.approver is not None
        self._renderer = self.approver.renderer = renderer
        to_cell = self._to_cell(renderer)
        self.floor.subscribers.append(to_cell)
        future = self.loop_thread.submit(self.host.turn("cell", text))
        try:
            self.main.pump_until(future, tick=renderer.tick)
        except KeyboardInterrupt:
            return self._interrupt(future, renderer)
        finally:
            renderer.tick()
            self.loop_thread.loop.call_soon_threadsafe(_unsubscribe, self.floor, to_cell)
        return TurnOutcome(interrupted=False, error=_error_of(future))

    def _to_cell(self, renderer: Renderer) -> Callable[[Published], None]:
        """The host's stream, for this cell (engine loop): its own turn's events."""

        def deliver(item: Published) -> None:
            if isinstance(item, TurnEvent) and item.source == "cell":
                event = item.event
                self.main.post(lambda: renderer.on_event(event))

        return deliver

    def _interrupt(
        self, future: concurrent.futures.Future[None], renderer: Renderer
    ) -> TurnOutcome:
        """Stop the turn; the engine archives the partial answer as interrupted."""
        self.main.interrupt_waiting()  # no namespace code starts after the interrupt
        self.loop_thread.loop.call_soon_threadsafe(self.session.interrupt)
        try:
            self.main.pump_until(future, tick=renderer.tick)
        except KeyboardInterrupt:
            future.cancel()  # a second interrupt: cancel the task outright (still archived)
            self.main.drain()
        finally:
            self.main.resume_waiting()
        renderer.message("Interrupted: the partial answer is saved in the archive as interrupted.")
        return TurnOutcome(interrupted=True)

    def _shown(self, code: str, result: ExecutionResult) -> None:
        """Code run for a cell (a ``%cowork`` turn, a ``%delegate``) shows in that cell; code
        run for the sidebar (its turns, ``/rebuild``) shows in none: no cell asked for it."""
        in_cell = self._guard is not None and self._guard.cell_running
        if self._renderer is not None and in_cell and not self.floor.sidebar_turn():
            self._renderer.show_execution(code, result)


def _unsubscribe(floor: TurnFloor, subscriber: Callable[[Published], None]) -> None:
    if subscriber in floor.subscribers:
        floor.subscribers.remove(subscriber)


def _either(
    first: concurrent.futures.Future[None], second: concurrent.futures.Future[None]
) -> concurrent.futures.Future[None]:
    """A future done when either is done."""
    both: concurrent.futures.Future[None] = concurrent.futures.Future()

    def settle(_: concurrent.futures.Future[None]) -> None:
        if not both.done():
            both.set_result(None)

    first.add_done_callback(settle)
    second.add_done_callback(settle)
    return both


def _error_of(future: concurrent.futures.Future[None]) -> str | None:
    try:
        future.result()
    except LoomError as exc:
        return str(exc)
    except (concurrent.futures.CancelledError, asyncio.CancelledError):
        return "the turn was cancelled"
    return None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
