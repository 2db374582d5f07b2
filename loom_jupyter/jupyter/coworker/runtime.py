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
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import assert_never

from loom_jupyter.errors import LoomError
from loom_jupyter.host.host import Host, KernelPorts
from loom_jupyter.host.runtime.stream import HostMessage, TurnEvent
from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue
from loom_jupyter.jupyter.sidebar import AGENT_TARGET, TARGET

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence
    from pathlib import Path

    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.runtime.loop_thread import LoopThread
    from loom_jupyter.host.runtime.stream import Published
    from loom_jupyter.host.services.panel_data import PanelData
    from loom_jupyter.host.services.views import Views
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.jupyter.cell.approval import StdinApprover
    from loom_jupyter.jupyter.cell.render import Renderer
    from loom_jupyter.jupyter.kernel.activity import CellActivity
    from loom_jupyter.jupyter.kernel.front import FrontKind
    from loom_jupyter.jupyter.panel.widget import Panel
    from loom_jupyter.jupyter.sidebar.agents import AgentHub
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
        self.panel: Panel | None = None
        self._renderer: Renderer | None = None  # the cell turn's, while its cell pumps
        self._hub: SidebarHub | None = None  # built on first use: %load_ext stays light
        self._hub_lock = threading.Lock()  # the main thread and the engine loop may both ask
        self._agents: AgentHub | None = None  # outside agents' links (``loom-agent``)
        self._guard: CellGuard | None = None
        self.activity: CellActivity | None = None  # the person's cells between turns
        self.host.subscribe(self._to_panel)  # the floor itself is made on first use

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
        open sidebars and agents' links over (:meth:`take_fronts`). ``hold=True`` keeps the
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
                self._attach_sidebar()
                self._attach_agents()
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
        with self._hub_lock:
            if self._hub is None:
                from loom_jupyter.jupyter.sidebar.hub import SidebarHub

                self._hub = SidebarHub(self.host)
            return self._hub

    def _attach_sidebar(self) -> None:
        """Accept sidebar comms (main thread); the hub takes the comm target over when the
        first sidebar opens."""
        self.shell.kernel.comm_manager.register_target(TARGET, self._first_sidebar)

    def _first_sidebar(self, comm: Any, msg: dict[str, Any]) -> None:
        hub = self.sidebar
        if hub.link is None:
            hub.attach(self.shell.kernel)
        assert hub.link is not None
        hub.link.accept(comm, msg)

    @property
    def agents(self) -> AgentHub:
        """Outside agents' links (``loom-agent``, DESIGN §14): apart from the sidebars."""
        with self._hub_lock:
            if self._agents is None:
                from loom_jupyter.jupyter.sidebar.agents import AgentHub

                self._agents = AgentHub(self.host, lambda: self._hub)
            return self._agents

    def _attach_agents(self) -> None:
        """Accept outside agents' links (main thread), the hub built when the first opens."""
        self.shell.kernel.comm_manager.register_target(AGENT_TARGET, self._first_agent)

    def _first_agent(self, comm: Any, msg: dict[str, Any]) -> None:
        hub = self.agents
        if hub.link is None:
            hub.attach(self.shell.kernel)
        assert hub.link is not None
        hub.link.accept(comm, msg)

    def take_fronts(self, predecessor: KernelCowork) -> None:
        """Serve ``predecessor``'s open sidebars and agents' links (the notebook was renamed;
        main thread): they stay connected and see no restart."""
        self.sidebar.take(predecessor.sidebar.release())
        link = predecessor.agents.release()
        if link is not None:
            self.agents.take(link)
        elif self.in_kernel:
            self._attach_agents()  # none open: the light target, this coworker's now

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
        if self._hub is not None:
            self._hub.detach()
        if self._agents is not None:
            self._agents.detach()
        if self.in_kernel:  # the light targets, when none opened (the hubs may exist)
            manager = self.shell.kernel.comm_manager
            if manager.targets.get(TARGET) == self._first_sidebar:
                manager.unregister_target(TARGET, self._first_sidebar)
            if manager.targets.get(AGENT_TARGET) == self._first_agent:
                manager.unregister_target(AGENT_TARGET, self._first_agent)
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

    # the panel: a subscriber of the host's stream ---------------------------------

    def ensure_panel(self) -> Panel:
        """The kernel's live panel, created on first use."""
        from loom_jupyter.jupyter.panel.widget import Panel

        if self.panel is None:
            self.panel = Panel(self.shell, self.run(self.views.panel_data()))
        return self.panel

    def refresh_panel(self, *, tell_sidebars: bool = True) -> None:
        """Reload the panel (after resume, new, fork, delete); tell every front."""
        if self.panel is not None:
            self.panel.reset(self.run(self.views.panel_data()))
        if tell_sidebars:
            self.run(self.host.switches.changed())

    def _to_panel(self, item: Published) -> None:
        """The host's stream, for the panel (engine loop): each engine event, and a reload
        when a front switched sessions."""
        if self.panel is None:
            return
        if isinstance(item, TurnEvent):
            event = item.event
            self.main.post(lambda: self._panel_apply(event))
        elif isinstance(item, HostMessage):
            if item.message.type == "session_changed":
                self._panel_reset_soon()
        else:
            assert_never(item)

    def _panel_apply(self, event: Any) -> None:
        if self.panel is not None:
            self.panel.apply(event)

    def _panel_reset_soon(self) -> None:
        """Reload the panel from the engine loop (a sidebar switched sessions)."""

        def reset(data: PanelData) -> None:
            if self.panel is not None:
                self.panel.reset(data)

        def settled(future: concurrent.futures.Future[PanelData]) -> None:
            if future.exception() is None:
                self.main.post(lambda: reset(future.result()))

        self.loop_thread.submit(self.views.panel_data()).add_done_callback(settled)

    def banner(self) -> str:
        """The notebook, the session resumed (or new), how to switch; wrapped at words."""
        from loom_jupyter.jupyter.cell.output import plural, shorten, wrap_words

        host = self.host
        where = f"loom: {self.location.path.name}"
        if self.location.source == "terminal":
            where += f" (terminal; archive {self.archive_path})"
        info = host.found.resumed
        if info is None:
            head = f"{where} — new session"
        else:
            title = shorten(info.title or "(untitled)", 48)
            head = f"{where} — resumed “{title}” ({plural(host.found.resumed_prompts, 'prompt')})"
        mode, source = host.trust.approval_mode()
        hint = f"approval: {mode} ({source}) · %cowork sessions to switch · %cowork --help for help"
        if info is not None and self.location.source in ("terminal", "unknown"):
            # No notebook names this conversation: it may be another shell's, from this folder.
            when = info.last_active_at[:16].replace("T", " ")
            head += f", last active {when} UTC; %cowork new starts a new one"
        untrusted = host.trust.untrusted_line()
        offers = [o.hint() for o in host.found.orphans if not o.writer_alive]
        offer = host.restarts.offer.text("%cowork rebuild") if host.restarts.offer else None
        messages = (untrusted, host.found.crash_message, host.found.lease_message, offer, *offers)
        messages += (host.found.tracked_archive, *host.found.storage_notes, *host.found.where_notes)
        notes = [wrap_words(m) for m in messages if m]
        return "\n".join([wrap_words(head), hint, *notes])

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
