"""One kernel's coworker: engine thread, archive, session, bridge and approver.

:class:`KernelCowork` is created by ``%load_ext`` and shared by every front in
the kernel. All archive and session work runs on the engine loop; the magics
call the blocking helpers here from the main thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from loom_jupyter.archive.liveness import this_process_owner
from loom_jupyter.errors import LeaseHeldError, LoomError
from loom_jupyter.jupyter.kernel.loop_thread import LoopThread
from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue
from loom_jupyter.jupyter.sidebar import TARGET

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from loom_jupyter.archive import Archive, SessionInfo
    from loom_jupyter.engine.events import Event
    from loom_jupyter.jupyter.cell.approval import StdinApprover
    from loom_jupyter.jupyter.cell.render import Renderer
    from loom_jupyter.jupyter.kernel.activity import CellActivity
    from loom_jupyter.jupyter.notebook.location import NotebookLocation
    from loom_jupyter.jupyter.notebook.relocate import Orphan
    from loom_jupyter.jupyter.panel.data import PanelData
    from loom_jupyter.jupyter.panel.widget import Panel
    from loom_jupyter.jupyter.sidebar.cellguard import CellGuard
    from loom_jupyter.jupyter.sidebar.events import Source
    from loom_jupyter.jupyter.sidebar.hub import SidebarHub
    from loom_jupyter.models.base import Model
    from loom_jupyter.session.conversation import CoworkSession
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.base import ExecutionResult

__all__ = ["LEASE_MESSAGE", "KernelCowork", "TurnOutcome", "missing_key_message"]

LEASE_MESSAGE = (
    "The latest session of this notebook is being written by another live kernel. "
    "This kernel starts a new session instead; once the other kernel is shut down, "
    "%cowork resume 1 continues the earlier one."
)

T = TypeVar("T")


@dataclass(frozen=True)
class TurnOutcome:
    """How a blocking turn ended, as seen by the magic."""

    interrupted: bool
    error: str | None = None


def missing_key_message() -> str | None:
    """The message shown when no API key is configured, else None."""
    if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        return None
    return (
        "No API key: set ANTHROPIC_API_KEY (for example %env ANTHROPIC_API_KEY=sk-ant-... "
        "in a cell, or in the environment before starting Jupyter), then run %cowork again."
    )


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
        self._model = model  # None: the Anthropic adapter built from settings
        self.location = location
        self.loop_thread = LoopThread()
        self.main = MainThreadQueue(_running_loop())
        self.approver: StdinApprover | None = None  # built with the session, off the main thread
        self.owner = owner or str(this_process_owner())  # a successor keeps its lease owner
        self.lease_message: str | None = None
        self.crash_message: str | None = None  # the previous kernel died holding the session
        self.panel: Panel | None = None
        self._renderer: Renderer | None = None
        self.resumed: SessionInfo | None = None  # the session resumed at load, if any
        self.resumed_prompts = 0  # how many messages the person sent in it
        self._archive: Archive | None = None
        self._session: CoworkSession | None = None
        self._opening: concurrent.futures.Future[None] | None = None
        self._peeked: concurrent.futures.Future[None] = concurrent.futures.Future()
        # Set when open() returns: the session's heavy imports then run on the engine
        # thread without slowing the rest of %load_ext on the main thread.
        self._loaded: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._hub: SidebarHub | None = None  # built on first use: %load_ext stays light
        self._hub_lock = threading.Lock()  # the main thread and the engine loop may both ask
        self._guard: CellGuard | None = None
        self.activity: CellActivity | None = None  # the person's cells between turns
        self.renamed_to: NotebookLocation | None = None  # the notebook's new name, to follow
        self.orphans: list[Orphan] = []  # conversations of vanished notebooks beside this one
        self.on_renamed: Callable[[], None] | None = None  # main thread: follow it when idle

    # lifecycle -------------------------------------------------------------
    #
    # Opening is split so that %load_ext stays quick: the archive is opened and
    # the latest session looked up first (enough for the banner); building the
    # session (agent, tools, context: the heavy imports) continues on the engine
    # thread after the load returns. Anything that needs the session waits for it.

    def open(self, *, attach_sidebar: bool = True) -> None:
        """Open the archive and start resuming the latest active session.

        ``attach_sidebar=False`` leaves the comm target alone: a predecessor hands
        its open sidebars over (:meth:`SidebarHub.hand_over`).
        """
        from loom_jupyter.jupyter.sidebar.cellguard import CellGuard

        self._guard = CellGuard(self.shell)  # before the bridge is built on the engine thread
        self._opening = self.loop_thread.submit(self._open())
        try:
            self.main.pump_until(_either(self._opening, self._peeked))
            if self._opening.done():
                self._opening.result()  # raise a failure to open the archive now
            self._watch_cells()
            if self.in_kernel and attach_sidebar:
                self._attach_sidebar()
        finally:
            self._loaded.set_result(None)

    async def follow_notebook(self, path: str, server_root: str = "") -> None:
        """The front says where the notebook is now (engine loop): follow a rename when idle."""
        from loom_jupyter.jupyter.notebook.relocate import renamed_location

        location = renamed_location(self.location, path, server_root)
        if location is None:
            return
        self.renamed_to = location  # following twice is harmless: the second finds it done
        if self.on_renamed is not None:
            self.main.post(self.on_renamed)

    @property
    def idle(self) -> bool:
        """No turn and no delegation is running (the archive may be swapped)."""
        from loom_jupyter.jupyter.delegation.front import delegations_running

        session = self._session
        return (session is None or not session.busy) and not delegations_running(self)

    def _watch_cells(self) -> None:
        """Follow the person's cells; the next turn is told what they ran (main thread)."""
        from loom_jupyter.jupyter.kernel.activity import CellActivity

        if self.activity is None and getattr(self.shell, "events", None) is not None:
            self.activity = CellActivity(self.shell)

    async def _note_activity(self, session: CoworkSession) -> None:
        """Archive the cells run since the last turn as a system note (engine loop)."""
        from loom_jupyter.jupyter.kernel.activity import activity_effects, activity_note

        runs = self.activity.take() if self.activity is not None else []
        note = activity_note(runs) if session.settings.notebook_activity else None
        if note:
            await session.append_note(note, activity_effects(runs))

    @property
    def sidebar(self) -> SidebarHub:
        """The kernel's sidebars: every open sidebar comm, the running turn's mirror."""
        with self._hub_lock:
            if self._hub is None:
                from loom_jupyter.jupyter.sidebar.hub import SidebarHub

                self._hub = SidebarHub(self)
            return self._hub

    def _attach_sidebar(self) -> None:
        """Accept sidebar comms (main thread); the hub takes the comm target over when the
        first sidebar opens (or when the session is built, whichever comes first)."""
        self.shell.kernel.comm_manager.register_target(TARGET, self._first_sidebar)

    def _first_sidebar(self, comm: Any, msg: dict[str, Any]) -> None:
        hub = self.sidebar
        if hub.link is None:
            hub.attach(self.shell.kernel)
        assert hub.link is not None
        hub.link.accept(comm, msg)

    async def _open(self) -> None:
        from loom_jupyter.archive import Archive, archive_path_for
        from loom_jupyter.settings import Settings

        settings = Settings.load(self.location.directory)
        path = archive_path_for(self.location.path)
        self._archive = await Archive.open(path, busy_timeout=settings.busy_timeout_seconds)
        self.resumed = (
            await self._archive.latest_active_session()
        )  # one archive per notebook: a moved notebook keeps its sessions
        held = self.resumed is not None and await self._archive.lease_is_held(
            self.resumed.id, self.owner, stale_after=settings.lease_stale_seconds
        )
        if held:  # decided before the banner is printed
            self.lease_message, self.resumed = LEASE_MESSAGE, None
        elif self.resumed is not None and self.resumed.lease_owner:
            self.crash_message = await _crash_line(self._archive, self.resumed)
        if self.resumed is not None:
            self.resumed_prompts = (await self._archive.prompt_counts([self.resumed.id]))[
                self.resumed.id
            ]
        if self.resumed is None and not held and not await self._archive.list_sessions(limit=1):
            from loom_jupyter.jupyter.notebook.relocate import find_orphans

            self.orphans = await find_orphans(self.location, settings.lease_stale_seconds)
        self._peeked.set_result(None)
        await asyncio.wrap_future(self._loaded)
        await self._open_session(settings, resume=not held)

    async def _open_session(self, settings: Settings, *, resume: bool) -> None:
        from loom_jupyter.jupyter.cell.approval import StdinApprover
        from loom_jupyter.jupyter.kernel.bridge import LiveKernelBridge
        from loom_jupyter.jupyter.sidebar.approvals import SharedApprover
        from loom_jupyter.session.conversation import CoworkSession

        assert self._archive is not None
        self.approver = StdinApprover(self.main)
        options: dict[str, Any] = {
            "notebook_path": self.location.path,
            "settings": settings,
            "kernel": self._bridge(LiveKernelBridge(self.shell, self.main, on_result=self._shown)),
            "approver": SharedApprover(self.approver, self.sidebar),
            "owner": self.owner,
            "model": self._model,
        }
        try:
            self._session = await CoworkSession.open(self._archive, resume=resume, **options)
        except LeaseHeldError:  # taken between the peek and now
            self._session = await CoworkSession.open(self._archive, resume=False, **options)
            self.lease_message, self.resumed = LEASE_MESSAGE, None
        from loom_jupyter.jupyter.delegation.front import attach_front

        await attach_front(self, self._session)  # delegate_task and %delegate, live progress

    def _bridge(self, live: Any) -> Any:
        """The KernelBridge: in a kernel, one that waits for the person's running cell."""
        from loom_jupyter.jupyter.sidebar.cellguard import GuardedBridge

        assert self._guard is not None  # made by open() before this runs
        return GuardedBridge(live, self.shell, self.main, self._guard, self.sidebar)

    def close(self) -> None:
        """Release the lease and close the archive; safe to call twice (atexit, unload)."""
        if not self.loop_thread.alive:
            return
        from loom_jupyter.jupyter.delegation.front import detach_front

        detach_front(self)
        if self._hub is not None:
            self._hub.detach()
        if self.in_kernel:  # the light target, when no sidebar opened (the hub may exist)
            manager = self.shell.kernel.comm_manager
            if manager.targets.get(TARGET) == self._first_sidebar:
                manager.unregister_target(TARGET, self._first_sidebar)
        if self._guard is not None:
            self._guard.close()
        if self.activity is not None:
            self.activity.close()
        try:
            if self._opening is not None:
                self._opening.result(timeout=30.0)
            self.loop_thread.run(self._close(), timeout=5.0)
        except (LoomError, concurrent.futures.TimeoutError, RuntimeError):
            pass  # shutting down: a stale lease expires on its own
        finally:
            self.loop_thread.stop()

    async def _close(self) -> None:
        try:
            if self._session is not None:
                await self._session.close()
        finally:  # a damaged archive refuses the lease release: still close the file
            if self._archive is not None:
                await self._archive.close()

    def _ready(self) -> None:
        """Wait (pumping) until the session is open; raise if opening failed."""
        opening = self._opening
        if opening is None:
            raise LoomError("loom is not loaded: run %load_ext loom_jupyter first")
        if not opening.done():
            self.main.pump_until(opening)
        opening.result()

    # access ------------------------------------------------------------------

    @property
    def session(self) -> CoworkSession:
        """The conversation (waits for the end of opening)."""
        self._ready()
        assert self._session is not None
        return self._session

    def session_now(self) -> CoworkSession:
        """The conversation, from the engine loop once opening is done."""
        if self._session is None:
            raise LoomError("loom is still opening this notebook's archive; try again")
        return self._session

    async def session_async(self) -> CoworkSession:
        """The conversation, awaited on the engine loop (opening may still run)."""
        if self._opening is not None and not self._opening.done():
            await asyncio.wrap_future(self._opening)
        return self.session_now()

    @property
    def archive(self) -> Archive:
        """The notebook's archive."""
        if self._archive is None:
            raise LoomError("loom is not loaded: run %load_ext loom_jupyter first")
        return self._archive

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
    def in_kernel(self) -> bool:
        """True inside ipykernel (rich output); False in a terminal shell."""
        return getattr(self.shell, "kernel", None) is not None

    def ensure_panel(self) -> Panel:
        """The kernel's live panel, created on first use."""
        from loom_jupyter.jupyter.panel.widget import Panel

        if self.panel is None:
            self.panel = Panel(self.shell, self.run(self._panel_data()))
        return self.panel

    def refresh_panel(self, *, tell_sidebars: bool = True) -> None:
        """Reload the panel from the archive (after resume, new, fork, delete); tell sidebars."""
        if self.panel is not None:
            self.panel.reset(self.run(self._panel_data()))
        if tell_sidebars:
            self.sidebar.session_switched()

    def panel_reset_soon(self) -> None:
        """Reload the panel from the engine loop (a sidebar switched sessions)."""
        if self.panel is None:
            return

        def reset(data: PanelData) -> None:
            if self.panel is not None:
                self.panel.reset(data)

        def settled(future: concurrent.futures.Future[PanelData]) -> None:
            if future.exception() is None:
                self.main.post(lambda: reset(future.result()))

        self.loop_thread.submit(self._panel_data()).add_done_callback(settled)

    async def _panel_data(self) -> PanelData:
        from loom_jupyter.jupyter.panel.data import PanelData

        session = self.session
        sid = session.session_id
        info = await self.archive.get_session(sid) if sid else None
        calls = await self.archive.model_calls(sid) if sid else []
        tasks = await self.archive.list_tasks(sid) if sid else []
        prompts = (await self.archive.prompt_counts([sid]))[sid] if sid else 0
        return PanelData.build(info, calls, tasks, session.state_event().state_yaml, prompts)

    def banner(self) -> str:
        """The notebook, the session resumed (or new), how to switch; wrapped at words."""
        from loom_jupyter.jupyter.cell.output import plural, shorten, wrap_words

        where = f"loom: {self.location.path.name}"
        if self.location.source == "terminal":
            where += f" (terminal; archive {self.archive.path})"
        info = self.resumed
        if info is None:
            head = f"{where} — new session"
        else:
            title = shorten(info.title or "(untitled)", 48)
            head = f"{where} — resumed “{title}” ({plural(self.resumed_prompts, 'prompt')})"
        hint = "%cowork sessions to switch · %cowork --help for help"
        offers = [o.hint() for o in self.orphans if not o.writer_alive]
        notes = [wrap_words(m) for m in (self.crash_message, self.lease_message, *offers) if m]
        return "\n".join([wrap_words(head), hint, *notes])

    # turns -------------------------------------------------------------------

    def send(self, text: str) -> TurnOutcome:
        """Run one turn, rendering it into the cell; returns when the turn ends."""
        _ = self.session  # waits for the end of opening (and raises if it failed)
        from loom_jupyter.jupyter.cell.render import make_renderer

        renderer = make_renderer(self.shell)
        assert self.approver is not None
        self._renderer = self.approver.renderer = renderer
        future = self.loop_thread.submit(self.turn("cell", text, None, self._sink(renderer)))
        try:
            self.main.pump_until(future, tick=renderer.tick)
        except KeyboardInterrupt:
            return self._interrupt(future, renderer)
        finally:
            renderer.tick()
        return TurnOutcome(interrupted=False, error=_error_of(future))

    async def turn(
        self, source: Source, text: str, client_id: str | None, show: Callable[[Event], None]
    ) -> None:
        """One turn from any front, the one driver (engine loop): the sidebars mirror it as
        it streams, ``show`` draws each event where it was asked for (the cell, or only the
        panel). A cell's turn ends here; a sidebar's is ended by the hub, which then starts
        the next queued message."""
        session = await self.session_async()
        self.sidebar.begin(source, text, client_id)  # raises while another turn runs
        try:
            if source == "sidebar":
                self._renderer = None  # figures of a sidebar turn are not drawn into a cell
            problem = missing_key_message() if session.settings.provider == "anthropic" else None
            if problem:
                from loom_jupyter.jupyter.sidebar.protocol import TurnErrorMsg

                self.sidebar.publish_message(TurnErrorMsg(None, problem, "MissingKeyError"))
                return
            await self._note_activity(session)
            async for event in session.send(text):
                show(event)
                await self.sidebar.publish(event)
        finally:
            if source == "cell":
                self.sidebar.end()

    async def sidebar_turn(self, text: str, client_id: str | None) -> None:
        """Run a sidebar message as a turn (engine loop); it shows in the sidebars and the
        panel, not in a cell."""
        await self.turn("sidebar", text, client_id, self._show_in_panel)

    def _show_in_panel(self, event: Event) -> None:
        if self.panel is not None:
            self.main.post(lambda: self._panel_apply(event))

    def _panel_apply(self, event: Event) -> None:
        if self.panel is not None:
            self.panel.apply(event)

    def _sink(self, renderer: Renderer) -> Callable[[Event], None]:
        def deliver(event: Event) -> None:
            self.main.post(lambda: self._render(renderer, event))

        return deliver

    def _render(self, renderer: Renderer, event: Event) -> None:
        renderer.on_event(event)
        if self.panel is not None:
            self.panel.apply(event)

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
        if self._renderer is not None:
            self._renderer.show_execution(code, result)


async def _crash_line(archive: Archive, info: SessionInfo) -> str:
    """What the dead kernel that still names itself ``info``'s writer left (for the banner)."""
    from loom_jupyter.records import LeaseTakeover
    from loom_jupyter.session.recovery import CrashRecovery

    last = info.turn_count
    tail = await archive.get_turns(info.id, max(1, last - 20), last)
    takeover = LeaseTakeover(owner=info.lease_owner or "", heartbeat=info.lease_heartbeat)
    return CrashRecovery.inspect(tail, takeover).banner()


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
