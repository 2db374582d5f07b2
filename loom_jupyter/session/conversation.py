"""CoworkSession: the agent loop, the archive, the session state and the window, together.

This is the one place that writes a conversation to the archive, and it writes
through: the user's message before the model is asked, each assistant message
(exact blocks) before its tools run, each tool result before the next request,
a ``model_calls`` row per request, and the partial answer when a stream is
interrupted (``interrupted``) or fails (``partial``). Fronts only render the
events :meth:`CoworkSession.send` yields (see ``/docs`` and
:mod:`loom_jupyter.engine.events`).

A session row is created lazily on the first message. One process writes a
session at a time: the session holds the archive's lease and renews it with a
heartbeat task while it is open. A switch (resume, new, fork, end) never splits a turn:
it is refused while a turn or a delegation runs (:class:`SessionBusyError`).

:class:`CoworkSession` is the conversation: its turns, switches and notes, the one archive
writer. What a turn works in (settings, model and policy, the folder's trust, the project
instructions, MCP servers, the kernel, the tools, the live notebook) is its
:class:`~loom_jupyter.session.environment.TurnEnvironment` (:attr:`~CoworkSession.environment`),
which the agent loop and every other caller of the tool pipeline receive.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.archive.liveness import this_process_owner
from loom_jupyter.engine.context import (
    ContextWindow,
    WindowConfig,
)
from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.errors import LoomError
from loom_jupyter.models.catalog import model_info
from loom_jupyter.session.environment import TurnEnvironment
from loom_jupyter.session.options import default_model
from loom_jupyter.session.record import ConversationRecord
from loom_jupyter.session.switching import SessionSwitches
from loom_jupyter.session.turn_run import TurnRun
from loom_jupyter.tools.approval import ApprovalPolicy, Approver
from loom_jupyter.trust import FolderTrust, TrustAnswer, TrustDecision, folder_trust, load_settings

if TYPE_CHECKING:
    import os
    from collections.abc import AsyncIterator, Callable, Sequence

    from loom_jupyter.archive import Archive, SessionInfo
    from loom_jupyter.engine.events import (
        Event,
        StateChanged,
    )
    from loom_jupyter.engine.state import SessionState
    from loom_jupyter.mcp.servers import McpServers, ServerStatus
    from loom_jupyter.messages import (
        ImageBlock,
    )
    from loom_jupyter.models.base import Model
    from loom_jupyter.session.instructions import Instructions
    from loom_jupyter.session.recovery import CrashRecovery
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.base import KernelBridge, ToolContext, VariableEffect
    from loom_jupyter.tools.registry import ToolRegistry

__all__ = ["CoworkSession"]


class CoworkSession:
    """One notebook's conversation with the agent. Build with :meth:`open`."""

    def __init__(
        self,
        archive: Archive,
        *,
        notebook_path: Path,
        settings: Settings,
        model: Model,
        kernel: KernelBridge,
        tools: ToolRegistry,
        policy: ApprovalPolicy,
        owner: str,
    ) -> None:
        self.archive = archive
        self.notebook_path = notebook_path
        self.owner = owner
        window = ContextWindow(
            WindowConfig.from_settings(settings, model_info(model.name)),
            system=SYSTEM_PROMPT,
            tools=tools.specs(),
        )
        self.environment = TurnEnvironment(
            archive,
            notebook_path=notebook_path,
            settings=settings,
            model=model,
            kernel=kernel,
            tools=tools,
            policy=policy,
            window=window,
        )
        self.record = ConversationRecord(
            archive, window, notebook_path=notebook_path, owner=owner, model=model.name
        )
        self.switches = SessionSwitches(
            self.record,
            self.environment,
            busy=self._busy_for_switch,
            stale_after=settings.lease_stale_seconds,
        )
        self._running = False
        self._answered = False  # the running turn has yielded its TurnDone or TurnError
        self._turn_over = asyncio.Event()  # set while no turn runs
        self._turn_over.set()
        self._busy_probes: list[Callable[[], str | None]] = []
        self.answering: int | None = None  # the person's message the running turn answers
        self._run: TurnRun | None = None  # the turn running or last run

    @classmethod
    async def open(
        cls,
        archive: Archive,
        *,
        notebook_path: str | os.PathLike[str],
        settings: Settings | None = None,
        model: Model | None = None,
        kernel: KernelBridge | None = None,
        tools: ToolRegistry | None = None,
        approver: Approver | None = None,
        owner: str | None = None,
        resume: bool = True,
        trust: FolderTrust | None = None,
    ) -> CoworkSession:
        """A session for the notebook: its latest active session resumed, else a lazy one.

        Without ``settings`` they are loaded with the folder's trust (``trust``, else read
        from the person's trust store). Raises :class:`LeaseHeldError` when that session is
        written by another live process (open again with ``resume=False`` to start a new one).
        """
        path = _absolute(notebook_path)
        if settings is None:
            settings, trust = load_settings(path)
        session = cls(
            archive,
            notebook_path=path,
            settings=settings,
            model=model or default_model(settings),
            kernel=kernel or _default_kernel(),
            tools=tools or _default_tools(),
            policy=ApprovalPolicy.from_settings(settings, approver=approver),
            owner=owner or str(this_process_owner()),
        )
        session.environment.bind(trust or folder_trust(path))
        if resume:
            latest = await archive.latest_active_session()  # the archive is this notebook's alone
            if latest is not None:
                await session.resume(latest.id)
        return session

    # -- what fronts read -----------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The archived session's id; ``None`` until the first message."""
        return self.record.session_id

    @property
    def info(self) -> SessionInfo | None:
        """The session's archive row as of the last turn (``None`` while lazy)."""
        return self.record.info

    @property
    def state(self) -> SessionState:
        """The session state sent with every request."""
        return self.record.state

    @property
    def recovered(self) -> CrashRecovery | None:
        """What the last resume found of a writer that died (``None``: it ended cleanly)."""
        return self.switches.recovered

    @property
    def settings(self) -> Settings:
        """The settings in force (:attr:`environment`: a magic, the folder's trust change them)."""
        return self.environment.settings

    @property
    def model(self) -> Model:
        """The model the next request goes to (:meth:`SessionOptions.set_model`)."""
        return self.environment.options.model

    @property
    def policy(self) -> ApprovalPolicy:
        """The approval policy (:meth:`SessionOptions.set_approval`)."""
        return self.environment.policy

    @property
    def kernel(self) -> KernelBridge:
        """The kernel the tools run in."""
        return self.environment.kernel

    @property
    def mcp(self) -> McpServers | None:
        """loom.yaml's MCP servers (``None``: it names none)."""
        return self.environment.mcp

    @property
    def window(self) -> ContextWindow:
        """The context window (read-only use: tests, panels, benchmarks)."""
        return self.record.window

    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self._running

    def add_busy_probe(self, probe: Callable[[], str | None]) -> None:
        """Have switches also ask ``probe`` what runs (a delegation, a turn a front has
        begun but not yet sent): while it names something, ``resume``, ``new``, ``fork`` and
        ``end`` raise :class:`SessionBusyError` with its words. Who runs it tells the session
        (the orchestrator, the host), so this layer imports none of them."""
        self._busy_probes.append(probe)

    async def settled(self) -> None:
        """Wait for a session switch in progress to end (a read of the session list then
        sees the session it made)."""
        async with self.switches.lock:
            pass

    def running_now(self) -> str | None:
        """What runs that a session switch must not split (``"A turn"``), else ``None``."""
        if self._running:
            return "A turn"
        return next((what for probe in self._busy_probes if (what := probe())), None)

    async def _busy_for_switch(self) -> str | None:
        if self._running and self._answered:  # its answer is out: it is only being put away
            await self._turn_over.wait()
        return self.running_now()

    def cache_note(self) -> str:
        """How long the prompt cache keeps the conversation now, and why."""
        window = self.record.window
        return window.rhythm.describe(window.history_ttl)

    def state_event(self) -> StateChanged:
        """A snapshot of the session for a panel."""
        return self.record.snapshot()

    # -- a turn ---------------------------------------------------------------

    async def send(
        self, text: str, *, images: Sequence[ImageBlock] = (), front: str = ""
    ) -> AsyncIterator[Event]:
        """Send the person's message; yield the turn's events, ending in TurnDone or TurnError.
        ``front``: where it was typed (``cell``, ``sidebar``), for the turn's telemetry span.

        A session switch in progress ends first (the turn then belongs to the new session)."""
        async with self.switches.lock:  # free: taken and given back without a pause
            if self._running:
                raise LoomError(
                    "A turn is already running in this session; wait for it or interrupt it first."
                )
            self._running, self._answered = True, False
            run = TurnRun(
                self.record, self.environment, self.switches, answering=self._answer, front=front
            )
            self._run = run
            self._turn_over.clear()
        try:
            # Closing send() (a front that stops iterating) closes the turn at once, so its
            # partial answer is archived before anything else can happen on this session.
            async with aclosing(run.events(text, images)) as turn:
                async for event in turn:
                    if event.kind in ("turn_done", "turn_error"):
                        self._answered = True
                    yield event
        finally:
            self._running, self.answering = False, None
            self._turn_over.set()

    def _answer(self, first: int) -> None:
        self.answering = first

    def interrupt(self) -> bool:
        """Stop the running turn; ``send`` then ends with ``TurnDone(stop_reason="interrupted")``.

        Call on the session's loop. Returns whether a turn was running.
        """
        if not self._running or self._run is None:
            return False
        self._run.puller.interrupt()
        return True

    def tool_context(self, session_id: str, asked_at: int) -> ToolContext:
        """What a tool call answering turn ``asked_at`` may use (any caller's: the gate)."""
        return self.environment.tool_context(session_id, asked_at, self.record.summary)

    async def check_kernel(self) -> SessionState:
        """Read the kernel's facts into the state (:meth:`ConversationRecord.check_kernel`)."""
        return await self.record.check_kernel(self.environment.kernel)

    # -- sessions (:class:`SessionSwitches`; each raises SessionBusyError while a turn or a
    # delegation runs) ----------------------------------------------------------

    async def resume(self, session_id: str) -> SessionInfo:
        """Switch to an archived session: lease, state and window back, dangling calls repaired."""
        return await self.switches.resume(session_id)

    async def new(self) -> None:
        """Leave the current session; the next message starts a new one."""
        await self.switches.new()

    async def fork(self, at_turn: int | None = None) -> SessionInfo:
        """Copy turns ``1..at_turn`` (all by default) into a new session and switch to it."""
        return await self.switches.fork(at_turn)

    async def end(self) -> None:
        """Mark the current session closed in the archive, then go lazy."""
        await self.switches.end()

    async def close(self) -> None:
        """Stop the heartbeat and release the lease (the session stays active in the archive);
        stop the MCP servers."""
        try:
            await self.switches.release()
        finally:
            await self.environment.close()

    async def ensure_session_id(self) -> str:
        """The archived session's id, creating the session row if it is still lazy."""
        async with self.switches.lock:  # after a switch in progress, in the session it made
            return await self.switches.ensure()

    async def append_note(self, text: str, effects: Sequence[VariableEffect] = ()) -> int:
        """Archive ``text`` as a ``system`` turn the next request sees (a delegation's digest,
        the person's cells); ``effects`` are variables it reports made, live from then on.

        Call between turns: a note must not land between a tool call and its result. A
        session switch in progress ends first (the note goes to the session it makes current).
        """
        async with self.switches.lock:
            await self.switches.ensure()
            return await self.record.note(text, effects)

    # -- the environment between turns ----------------------------------------

    async def trust_folder(
        self, decision: TrustDecision, *, shown: str | None = None, with_approval: bool = False
    ) -> TrustAnswer:
        """Record the person's decision about the folder as it was shown to them (``shown``:
        that view's digest; a folder that changed since is not recorded); in force from the
        next turn (at once when no turn runs)."""
        env = self.environment
        return await env.trust_folder(
            decision, shown=shown, with_approval=with_approval, running=self._running
        )

    async def project_instructions(self) -> Instructions:
        """The project instructions as the next turn sends them (``%cowork instructions``)."""
        return await self.environment.project_instructions(running=self._running)

    async def mcp_status(self, *, restart: str | None = None) -> tuple[ServerStatus, ...]:
        """The MCP servers, started first if they were not (``%cowork mcp``); ``restart``
        starts that one again. Between turns their tools join the next request."""
        return await self.environment.mcp_status(restart=restart, running=self._running)


def _absolute(path: str | os.PathLike[str]) -> Path:
    # A sync helper: pathlib's absolute() touches the filesystem (cwd), fine outside the loop.
    return Path(path).expanduser().absolute()


def _default_kernel() -> KernelBridge:
    from loom_jupyter.tools.local_kernel import LocalKernel

    return LocalKernel()


def _default_tools() -> ToolRegistry:
    from loom_jupyter.tools.registry import default_registry

    return default_registry()
