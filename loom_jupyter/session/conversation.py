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

:class:`CoworkSession` is the turn and the switches; the rest it holds by concern:
:class:`~loom_jupyter.session.options.SessionOptions` (:attr:`~CoworkSession.options`:
model, thinking, effort, approval, the model list),
:class:`~loom_jupyter.session.request.RequestAssembly` (how a request is put together),
:class:`~loom_jupyter.session.servers.SessionServers` (:attr:`~CoworkSession.servers`: the
MCP lifecycle) and :class:`~loom_jupyter.session.folder_trust.SessionTrust`
(:attr:`~CoworkSession.folder`: the folder's trust as the session applies it).
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing, asynccontextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.archive.liveness import kernel_process, this_process_owner
from loom_jupyter.engine.agent import (
    AgentEvent,
    AgentLoop,
    LoopEnded,
    LoopFailed,
)
from loom_jupyter.engine.cache_policy import MAX_GAPS
from loom_jupyter.engine.context import (
    INTERRUPTED_RESULT,
    ContextWindow,
    WindowConfig,
    load_window_turns,
)
from loom_jupyter.engine.events import (
    Event,
    Notice,
    StateChanged,
    TurnDone,
    TurnEndReason,
    TurnError,
    TurnStarted,
)
from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.engine.state import OpenTask, SessionState
from loom_jupyter.errors import ArchiveError, LoomError, SessionBusyError
from loom_jupyter.messages import (
    ContentBlock,
    ImageBlock,
    TextBlock,
    TurnDraft,
)
from loom_jupyter.models.catalog import model_info
from loom_jupyter.records import FINISHED_TASK
from loom_jupyter.session.folder_trust import SessionTrust
from loom_jupyter.session.instructions import Instructions, ProjectInstructions
from loom_jupyter.session.lease import SessionLease
from loom_jupyter.session.options import SessionOptions, default_model
from loom_jupyter.session.recovery import KERNEL_DIED_RESULT, CrashRecovery
from loom_jupyter.session.request import RequestAssembly
from loom_jupyter.session.servers import SessionServers
from loom_jupyter.session.turn import ActiveTurn, partial_interval
from loom_jupyter.session.turn_writer import TurnWriter
from loom_jupyter.tools.approval import ApprovalPolicy, Approver
from loom_jupyter.tools.base import KernelBridge, ToolContext
from loom_jupyter.tools.output import REDACTED, redact_secrets
from loom_jupyter.trust import FolderTrust, TrustAnswer, TrustDecision, folder_trust, load_settings

if TYPE_CHECKING:
    import os
    from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence

    from loom_jupyter.archive import Archive, SessionInfo
    from loom_jupyter.mcp.servers import McpServers, ServerStatus
    from loom_jupyter.models.base import Model, ModelRequest
    from loom_jupyter.readers import ProjectReader
    from loom_jupyter.records import LeaseTakeover
    from loom_jupyter.session.shape import RequestShape
    from loom_jupyter.settings import EffortLevel, Settings
    from loom_jupyter.tools.base import Delegator, NotebookDocument, VariableEffect
    from loom_jupyter.tools.registry import ToolRegistry

__all__ = ["CoworkSession"]


class _Interrupted(Exception):
    """The person interrupted the turn (``CoworkSession.interrupt``)."""


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
        self.kernel = kernel
        self.tools = tools
        self.owner = owner
        self._window = ContextWindow(
            WindowConfig.from_settings(settings, model_info(model.name)),
            system=SYSTEM_PROMPT,
            tools=tools.specs(),
        )
        self.options = SessionOptions(settings, model, policy, self._window)
        self._state = SessionState(notebook=str(notebook_path), model=model.name)
        self._info: SessionInfo | None = None
        self._writer = TurnWriter(archive, self._window, kernel_session=owner)
        self._lease = SessionLease(archive, owner, stale_after=settings.lease_stale_seconds)
        self._running = False
        self._answered = False  # the running turn has yielded its TurnDone or TurnError
        self._turn_over = asyncio.Event()  # set while no turn runs
        self._turn_over.set()
        self._switching = asyncio.Lock()  # a switch, and a send waiting for it to end
        self._busy_probes: list[Callable[[], str | None]] = []
        self.answering: int | None = None  # the person's message the running turn answers
        self._step: asyncio.Future[AgentEvent] | None = None
        self._interrupt_requested = False
        self.recovered: CrashRecovery | None = None  # set when resume found a dead writer
        self.delegator: Delegator | None = None  # set by loom_jupyter.orchestrator.attach
        self.document: NotebookDocument | None = None  # the live notebook (set by the host)
        self._instructions = ProjectInstructions(
            notebook_path, max_chars=settings.instructions_max_chars
        )
        self._requests = RequestAssembly(self._window, self.options, self._instructions)
        self.servers = SessionServers(tools, self._window)  # loom.yaml's: open loads them
        self.folder = SessionTrust(notebook_path, self.options, self._instructions, self.servers)
        self._turn_options: tuple[bool, EffortLevel | None] = (False, None)  # its thinking

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
        session.trust = trust or folder_trust(path)
        session._instructions.bind(session.trust)
        session.servers.load(settings, cwd=path.parent, trusted=session.trust.trusted)
        if resume:
            latest = await archive.latest_active_session()  # the archive is this notebook's alone
            if latest is not None:
                await session.resume(latest.id)
        return session

    # -- what fronts read -----------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The archived session's id; ``None`` until the first message."""
        return self._writer.session_id

    @property
    def info(self) -> SessionInfo | None:
        """The session's archive row as of the last turn (``None`` while lazy)."""
        return self._info

    @property
    def state(self) -> SessionState:
        """The session state sent with every request."""
        return self._state

    @property
    def settings(self) -> Settings:
        """The settings in force (:attr:`options`: a magic, the folder's trust change them)."""
        return self.options.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.options.settings = settings

    @property
    def model(self) -> Model:
        """The model the next request goes to (:meth:`SessionOptions.set_model`)."""
        return self.options.model

    @property
    def policy(self) -> ApprovalPolicy:
        """The approval policy (:meth:`SessionOptions.set_approval`)."""
        return self.options.policy

    @property
    def mcp(self) -> McpServers | None:
        """loom.yaml's MCP servers (``None``: it names none); :attr:`servers` runs them."""
        return self.servers.servers

    @property
    def trust(self) -> FolderTrust | None:
        """The folder's trust as last checked (:attr:`folder`)."""
        return self.folder.current

    @trust.setter
    def trust(self, trust: FolderTrust | None) -> None:
        self.folder.current = trust

    @property
    def trust_told(self) -> str | None:
        """The untrusted folder's digest once the person was told (by a banner or a turn)."""
        return self.folder.told

    @trust_told.setter
    def trust_told(self, digest: str | None) -> None:
        self.folder.told = digest

    @property
    def window(self) -> ContextWindow:
        """The context window (read-only use: tests, panels, benchmarks)."""
        return self._window

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
        async with self._switching:
            pass

    def running_now(self) -> str | None:
        """What runs that a session switch must not split (``"A turn"``), else ``None``."""
        if self._running:
            return "A turn"
        return next((what for probe in self._busy_probes if (what := probe())), None)

    def cache_note(self) -> str:
        """How long the prompt cache keeps the conversation now, and why."""
        return self._window.rhythm.describe(self._window.history_ttl)

    def state_event(self) -> StateChanged:
        """A snapshot of the session for a panel."""
        info, state = self._info, self._state
        return StateChanged(
            session_id=state.session_id,
            title=info.title if info else "",
            turn_count=info.turn_count if info else 0,
            input_tokens=state.input_tokens,
            output_tokens=state.output_tokens,
            cost_usd=state.cost_usd,
            state_yaml=state.to_yaml(),
        )

    # -- a turn ---------------------------------------------------------------

    async def send(self, text: str, *, images: Sequence[ImageBlock] = ()) -> AsyncIterator[Event]:
        """Send the person's message; yield the turn's events, ending in TurnDone or TurnError.

        A session switch in progress ends first (the turn then belongs to the new session)."""
        async with self._switching:  # free: taken and given back without a pause
            if self._running:
                raise LoomError(
                    "A turn is already running in this session; wait for it or interrupt it first."
                )
            self._running, self._interrupt_requested, self._answered = True, False, False
            self._turn_over.clear()
        try:
            # Closing send() (a front that stops iterating) closes the turn at once, so its
            # partial answer is archived before anything else can happen on this session.
            async with aclosing(self._turn(text, images)) as turn:
                async for event in turn:
                    if event.kind in ("turn_done", "turn_error"):
                        self._answered = True
                    yield event
        finally:
            self._running, self.answering = False, None
            self._turn_over.set()

    def interrupt(self) -> bool:
        """Stop the running turn; ``send`` then ends with ``TurnDone(stop_reason="interrupted")``.

        Call on the session's loop. Returns whether a turn was running.
        """
        if not self._running:
            return False
        self._interrupt_requested = True
        if self._step is not None:
            self._step.cancel()
        return True

    async def _turn(self, text: str, images: Sequence[ImageBlock]) -> AsyncGenerator[Event, None]:
        if self._lease.lost is not None:
            yield TurnError(str(self._lease.lost), "LeaseHeldError")
            return
        clean = redact_secrets(text)
        if clean != text:  # every front's prompt passes here: one place keeps keys out
            yield Notice(SECRET_IN_PROMPT, "warning")
            text = clean
        try:
            sid = await self._ensure_session()
            blocks: tuple[ContentBlock, ...] = (TextBlock(text), *images)
            first = await self._writer.append(TurnDraft(role="user", content=text, blocks=blocks))
        except LoomError as error:
            yield TurnError(str(error), type(error).__name__)
            return
        self._state = self._state.with_user_message(first, text)
        self.answering = first  # the agent's executions are recorded under it
        yield TurnStarted(sid, first)
        for notice in await self.folder.check():  # a trust decision or an edit, once a turn
            yield Notice(notice, "warning")
        for notice in self._requests.load_instructions():  # edits are picked up once a turn
            yield Notice(notice, "warning")
        for notice in await self.servers.start():  # the first turn starts the MCP servers
            yield Notice(notice, "warning")
        save_every = partial_interval(self.settings, self.archive.journal_mode)
        turn = ActiveTurn(self._writer, self._state, first=first, save_every=save_every)
        self._turn_options = self.options.request_options()  # fixed for the whole tool loop
        loop = AgentLoop(
            model=self.model, registry=self.tools, policy=self.policy, settings=self.settings
        )
        agent = loop.run(self._request, self.tool_context(sid, first))
        try:
            async for event in self._steps(agent):
                async for public in self._archive_step(turn, event):
                    yield public
        except _Interrupted:
            await asyncio.shield(self._abandon(turn))
            async for public in self._finish(turn, LoopEnded("interrupted", _INTERRUPTED)):
                yield public
        except ArchiveError as error:
            yield TurnError(_archive_failed(error), type(error).__name__, first, turn.last)
        except (asyncio.CancelledError, GeneratorExit):
            await asyncio.shield(self._abandon(turn))
            raise

    async def _archive_step(self, turn: ActiveTurn, event: AgentEvent) -> AsyncIterator[Event]:
        """Archive one agent step through ``turn``; the loop's end closes the turn."""
        if isinstance(event, LoopEnded | LoopFailed):
            async for public in self._finish(turn, event):
                yield public
            return
        shown = await turn.record(event)
        self._state = turn.state
        if shown is not None:
            yield shown

    async def _steps(
        self, agent: AsyncGenerator[AgentEvent, None]
    ) -> AsyncGenerator[AgentEvent, None]:
        """The agent's events, each pulled in its own task so ``interrupt`` can cancel it."""
        try:
            while True:
                if self._interrupt_requested:  # asked while the last event was being archived
                    raise _Interrupted
                self._step = asyncio.ensure_future(agent.__anext__())
                try:
                    event = await self._step
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if self._interrupt_requested:
                        raise _Interrupted from None
                    raise
                finally:
                    self._step = None
                yield event
        finally:
            await agent.aclose()

    async def _finish(self, turn: ActiveTurn, end: LoopEnded | LoopFailed) -> AsyncIterator[Event]:
        await self._refresh()
        yield self.state_event()
        if isinstance(end, LoopFailed):
            error = end.error
            yield TurnError(str(error), type(error).__name__, turn.first, turn.last)
            return
        reason: TurnEndReason = end.reason
        yield TurnDone(reason, turn.first, turn.last, turn.text, turn.usage, turn.cost, end.message)

    async def _abandon(self, turn: ActiveTurn) -> None:
        """Archive what an interrupted turn leaves: its partial answer and unfinished calls."""
        await turn.abandon()
        self._state = turn.state
        turn.last = await self._repair_dangling() or turn.last
        await self._refresh()

    async def _repair_dangling(self, reason: str = INTERRUPTED_RESULT) -> int:
        """Archive ``interrupted`` results for unanswered calls; returns the last turn (or 0)."""
        last = 0
        for last, call in await self._writer.repair_dangling(reason):
            self._state = self._state.with_tool_result(last, call.name, is_error=True, text=reason)
        return last

    async def _refresh(self) -> None:
        """Re-read the session row, fold totals and open tasks into the state, persist it."""
        sid = self._sid
        info = await self.archive.get_session(sid)
        tasks = [
            OpenTask(t.id, t.goal, t.status)
            for t in await self.archive.list_tasks(sid)
            if t.status not in FINISHED_TASK
        ]
        self._state = self._state.with_totals(
            turn_count=info.turn_count,
            input_tokens=info.input_tokens + info.cache_creation_tokens + info.cache_read_tokens,
            output_tokens=info.output_tokens,
            cost_usd=info.cost_usd,
        ).with_tasks(tasks)
        state_json = self._state.to_json()
        await self.archive.update_session(sid, session_state=state_json)
        self._info = replace(info, session_state=state_json)

    # -- sessions -------------------------------------------------------------

    @asynccontextmanager
    async def _switch(self, action: str) -> AsyncIterator[None]:
        """One switch at a time, never while a turn or a delegation runs (every front's
        switch passes here: the magic, the sidebar through the host, the CLI's host)."""
        async with self._switching:
            if self._running and self._answered:  # its answer is out: it is only being put away
                await self._turn_over.wait()
            running = self.running_now()
            if running is not None:
                raise SessionBusyError(running, action)
            yield

    async def resume(self, session_id: str) -> SessionInfo:
        """Switch to an archived session: lease, state and window back, dangling calls repaired.

        Raises :class:`SessionBusyError` while a turn or a delegation runs."""
        async with self._switch("resume that session"):
            return await self._resume(session_id)

    async def _resume(self, session_id: str) -> SessionInfo:
        info = await self.archive.get_session(session_id)
        await self._release()
        self._go_lazy()  # if the lease is held elsewhere, stay lazy rather than half-switched
        takeover = await self._lease.take(session_id)
        self._writer.session_id = session_id
        if info.status != "active":
            await self.archive.reopen_session(session_id)
        restored = SessionState.from_json(info.session_state)
        self._state = _with_identity(restored, session_id, self.notebook_path, self.model.name)
        budget = self._window.config.budget_tokens
        turns = await load_window_turns(self.archive, session_id, budget)
        self._window.reset(turns, await self._pauses())
        self.recovered = None
        if takeover is not None:
            self.recovered = await self._recover_crash(takeover)
        await self._repair_dangling()
        last = await self.archive.last_turn_number(session_id)  # a new kernel: variables gone
        kernel = kernel_process(self.owner)  # a reload of the extension is the same kernel
        self._state = replace(
            self._state, kernel_session=kernel_process(self._state.kernel_session)
        ).in_kernel(kernel, last_turn=last, at=_utc_text())
        await self.check_kernel()  # of what the last kernel took, what exists again
        await self._refresh()
        assert self._info is not None
        return self._info

    async def _recover_crash(self, takeover: LeaseTakeover) -> CrashRecovery:
        """The previous writer died: say so in the archive, the state and (via ``recovered``)
        the banner; tools it left running get a "the kernel died" result."""
        last = await self.archive.last_turn_number(self._sid)
        tail = await self.archive.get_turns(self._sid, max(1, last - 20), last)
        recovery = CrashRecovery.inspect(tail, takeover)
        await self._repair_dangling(KERNEL_DIED_RESULT)
        if recovery.during_turn:
            note = recovery.model_note()
            draft = TurnDraft(role="system", content=note, blocks=(TextBlock(note),))
            last = await self._writer.append(draft)
        self._state = self._state.with_kernel_lost(last, "crash", recovery.died_at_text)
        return recovery

    async def new(self) -> None:
        """Leave the current session; the next message starts a new one.

        Raises :class:`SessionBusyError` while a turn or a delegation runs."""
        async with self._switch("start a new session"):
            await self._release()
            self._go_lazy()

    async def fork(self, at_turn: int | None = None) -> SessionInfo:
        """Copy turns ``1..at_turn`` (all by default) into a new session and switch to it.

        Raises :class:`SessionBusyError` while a turn or a delegation runs."""
        async with self._switch("fork the session"):
            if self.session_id is None:
                raise LoomError("There is no conversation to fork yet: send a message first.")
            new_id = await self.archive.fork_session(self.session_id, at_turn)
            return await self._resume(new_id)

    async def end(self) -> None:
        """Mark the current session closed in the archive, then go lazy.

        Raises :class:`SessionBusyError` while a turn or a delegation runs."""
        async with self._switch("close the session"):
            if self.session_id is not None:
                await self.archive.close_session(self.session_id)
            await self._release()
            self._go_lazy()

    async def close(self) -> None:
        """Stop the heartbeat and release the lease (the session stays active in the archive);
        stop the MCP servers."""
        try:
            await self._release()
        finally:
            await self.servers.close()

    async def ensure_session_id(self) -> str:
        """The archived session's id, creating the session row if it is still lazy."""
        async with self._switching:  # after a switch in progress, in the session it made
            return await self._ensure_session()

    async def append_note(self, text: str, effects: Sequence[VariableEffect] = ()) -> int:
        """Archive ``text`` as a ``system`` turn the next request sees (a delegation's digest,
        the person's cells); ``effects`` are variables it reports made, live from then on.

        Call between turns: a note must not land between a tool call and its result. A
        session switch in progress ends first (the note goes to the session it makes current).
        """
        async with self._switching:
            await self._ensure_session()
            draft = TurnDraft(role="system", content=text, blocks=(TextBlock(text),))
            number = await self._writer.append(draft)
            self._state = self._state.with_variables(number, effects)
            await self._refresh()
            return number

    async def _ensure_session(self) -> str:
        if self.session_id is None:
            sid = await self.archive.create_session(
                notebook_path=str(self.notebook_path), model=self.model.name
            )
            await self._lease.take(sid)
            self._writer.session_id = sid
            fresh = SessionState(kernel_session=kernel_process(self.owner))
            self._state = _with_identity(fresh, sid, self.notebook_path, self.model.name)
            self._window.reset([], await self._pauses())
        return self._sid

    async def _pauses(self) -> tuple[float, ...]:
        """The notebook's recent pauses between turns, for the cache TTL; a notebook with
        fewer than the rule remembers starts from the notebooks beside it."""
        from loom_jupyter.archive.project import neighbour_pauses

        own = await self.archive.recent_pauses(MAX_GAPS)
        if len(own) >= MAX_GAPS:
            return own
        return (*await neighbour_pauses(self.archive.path), *own)[-MAX_GAPS:]

    async def _release(self) -> None:
        sid = self.session_id
        if sid is not None and self._lease.lost is None:
            await self.archive.update_session(sid, session_state=self._state.to_json())
        await self._lease.release()

    def _go_lazy(self) -> None:
        self._state = SessionState(notebook=str(self.notebook_path), model=self.model.name)
        self._info, self._writer.session_id = None, None
        self._window.reset([])

    # -- folder trust (DESIGN §12) ----------------------------------------------

    async def trust_folder(
        self, decision: TrustDecision, *, shown: str | None = None, with_approval: bool = False
    ) -> TrustAnswer:
        """Record the person's decision about the folder as it was shown to them (``shown``:
        the digest of that view; a folder that changed since is not recorded); in force
        from the next turn (at once when no turn runs)."""
        answer = self.folder.decide(decision, shown=shown, with_approval=with_approval)
        if answer.recorded and not self._running:
            await self.folder.apply(answer.trust)
        return answer

    # -- project instructions -------------------------------------------------

    async def project_instructions(self) -> Instructions:
        """The project instructions as the next turn sends them (``%cowork instructions``)."""
        if not self._running:
            await self.folder.refresh()
        return self._instructions.current()

    # -- MCP servers ----------------------------------------------------------

    async def mcp_status(self, *, restart: str | None = None) -> tuple[ServerStatus, ...]:
        """The MCP servers, started first if they were not (``%cowork mcp``); ``restart``
        starts that one again. Between turns their tools join the next request."""
        if self.mcp is None:
            return ()
        if not self._running:
            await self.folder.refresh()  # trusted since the last turn: its servers may start
        return await self.servers.status(restart=restart, attach=not self._running)

    # -- helpers --------------------------------------------------------------

    @property
    def _sid(self) -> str:
        return self._writer.sid

    async def _request(self) -> ModelRequest:
        await self.check_kernel()  # the state's kernel facts as they are now
        return self._requests.build(self._state, *self._turn_options)

    async def check_kernel(self) -> SessionState:
        """Read the kernel's facts into the state (at load, before each request, when a
        sidebar opens): a new kernel process means a restart; of the variables the last
        kernel took, those in the namespace now were re-created and are not gone. The
        work is one lookup of at most the state's variables, whatever the archive holds."""
        kernel = kernel_process(self.owner)
        if self.session_id is not None and kernel and kernel != self._state.kernel_session:
            last = await self.archive.last_turn_number(self.session_id)
            self._state = self._state.in_kernel(kernel, last_turn=last, at=_utc_text())
        lost = self._state.lost_names()
        if lost:
            try:
                present = await self.kernel.fingerprints(lost)
            except LoomError:  # the namespace cannot be read now: the last reading stays
                return self._state
            self._state = self._state.with_present(present)
        return self._state

    async def request_shape(self) -> RequestShape:
        """How a delegation's sub-agents ask: this session's system prompt (project
        instructions included, as they are now), max tokens, thinking and effort."""
        return self._requests.shape()

    def tool_context(self, session_id: str, asked_at: int) -> ToolContext:
        """What a tool call answering turn ``asked_at`` may use (any caller's: the gate)."""
        return ToolContext(
            notebook_dir=self.notebook_path.parent,
            settings=self.settings,
            kernel=self.kernel,
            notebook_path=self.notebook_path,
            archive=self.archive,
            session_id=session_id,
            session_summary=self._summary,
            delegator=self.delegator,
            project=_project_reader(self.notebook_path, self.settings),
            asked_at=asked_at,
            document=self.document,
            approval_mode=self.policy.mode,
            executions=self.archive,
        )

    async def _summary(self) -> str:
        return self._state.to_yaml()


def _absolute(path: str | os.PathLike[str]) -> Path:
    # A sync helper: pathlib's absolute() touches the filesystem (cwd), fine outside the loop.
    return Path(path).expanduser().absolute()


SECRET_IN_PROMPT = (
    f"Your message holds a secret (an API key, or the value of a secret environment variable); "
    f"it was replaced by {REDACTED} and is not sent to the model or archived."
)
_INTERRUPTED = "Interrupted. The partial answer is archived; send a message to continue."


def _with_identity(state: SessionState, sid: str, notebook: Path, model: str) -> SessionState:
    return replace(state, session_id=sid, notebook=str(notebook), model=model)


def _archive_failed(error: ArchiveError) -> str:
    return (
        f"The turn stopped because the archive could not be written: {error} "
        "Everything before this point is saved; fix the problem and send the message again."
    )


def _utc_text() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _project_reader(notebook: Path, settings: Settings) -> ProjectReader:
    """Every notebook archive of the notebook's project, read-only (recall scope all_notebooks)."""
    from loom_jupyter.archive.project import ProjectArchives, project_root

    return ProjectArchives(project_root(notebook), busy_timeout=settings.busy_timeout_seconds)


def _default_kernel() -> KernelBridge:
    from loom_jupyter.tools.local_kernel import LocalKernel

    return LocalKernel()


def _default_tools() -> ToolRegistry:
    from loom_jupyter.tools.registry import default_registry

    return default_registry()
