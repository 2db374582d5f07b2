"""The sidebar hub: one conversation shared by cells and sidebars, driven on the engine loop.

Everything here runs on the engine loop thread (``KernelCowork.loop_thread``)
except :meth:`SidebarHub.publish_task` and :meth:`SidebarHub.notice`, which
any thread may call. Cell turns (``%cowork``) report their events through
:meth:`begin`/:meth:`publish`/:meth:`end`; sidebar turns run here as tasks.
One turn runs at a time; a message sent meanwhile is queued and runs next.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from typing_extensions import assert_never

from loom_jupyter.errors import LoomError
from loom_jupyter.jupyter.sidebar.bridge import CommLink, Peer
from loom_jupyter.jupyter.sidebar.events import Source, TurnMirror
from loom_jupyter.jupyter.sidebar.history import history_page, session_rows, session_summary
from loom_jupyter.jupyter.sidebar.protocol import (
    Approval,
    ApprovalClosed,
    CellProposal,
    Decision,
    History,
    NoticeMsg,
    QueueMsg,
    SearchResults,
    SessionChanged,
    SessionsMsg,
    Status,
    TaskView,
    TurnErrorMsg,
    Welcome,
    version_notice,
)
from loom_jupyter.jupyter.sidebar.queue import SendQueue
from loom_jupyter.jupyter.sidebar.replay import EventLog

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive
    from loom_jupyter.engine.events import ApprovalRequest, Event
    from loom_jupyter.jupyter.kernel.loop_thread import LoopThread
    from loom_jupyter.jupyter.notebook.relocate import Orphan
    from loom_jupyter.jupyter.sidebar.protocol import (
        Fork,
        Hello,
        Inbound,
        New,
        Outbound,
        Queued,
        Resume,
        Send,
    )
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["Handover", "SidebarHub"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Handover:
    """What one coworker's hub passes to the next (the notebook was renamed)."""

    link: CommLink | None
    log: EventLog
    tasks: dict[str, TaskView]


class HubHost(Protocol):
    """What the hub asks of the kernel's coworker (:class:`~loom_jupyter.jupyter.coworker.
    runtime.KernelCowork` is the one in a kernel)."""

    @property
    def loop_thread(self) -> LoopThread:
        """The engine loop's thread."""
        ...

    @property
    def orphans(self) -> list[Orphan]:
        """Conversations of vanished notebooks beside this one."""
        ...

    @property
    def archive(self) -> Archive:
        """The notebook's archive."""
        ...

    async def session_async(self) -> CoworkSession:
        """The conversation, awaited on the engine loop."""
        ...

    def session_now(self) -> CoworkSession:
        """The conversation, once opening is done."""
        ...

    async def sidebar_turn(self, text: str, client_id: str | None) -> None:
        """Run a sidebar message as a turn (the coworker's one turn driver)."""
        ...

    async def follow_notebook(self, path: str, server_root: str = "") -> None:
        """The front says where the notebook is now."""
        ...

    def panel_reset_soon(self) -> None:
        """Reload the panel (a sidebar switched sessions)."""
        ...


class SidebarHub:
    """The kernel side of every sidebar of one kernel."""

    def __init__(self, cowork: HubHost) -> None:
        self._cw = cowork
        self.log = EventLog()
        self.queue = SendQueue()
        self.link: CommLink | None = None
        self.mirror: TurnMirror | None = None  # the running turn, cell or sidebar
        self.state = Status("idle")
        self._approvals: dict[str, asyncio.Future[Decision | None]] = {}
        self._tasks: dict[str, TaskView] = {}
        self._running: asyncio.Task[None] | None = None

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        return self._cw.loop_thread.loop

    # -- lifecycle (main thread) ---------------------------------------------------

    def attach(self, kernel: Any) -> None:
        """Register the comm target on ``kernel``."""
        self.link = CommLink(kernel, self._loop, self.handle, self._reject)
        self.link.register()

    def detach(self) -> None:
        """Unregister the comm target and close the open comms (also at interpreter exit)."""
        link, self.link = self.link, None
        if link is not None:
            try:
                link.unregister()
            except Exception:  # the kernel is going away: nothing left to tidy
                _log.debug("unregistering the sidebar comm target failed", exc_info=True)

    def release(self) -> Handover:
        """Let go of the open sidebars, the event log and the task views (main thread), for a
        successor to :meth:`take`; closing this hub then leaves the comms open."""
        link, self.link = self.link, None
        return Handover(link, self.log, dict(self._tasks))

    def take(self, handover: Handover) -> None:
        """Serve a predecessor's sidebars: the fronts stay connected and see no restart."""
        self.log, self._tasks = handover.log, handover.tasks
        if handover.link is not None:
            handover.link.rebind(self._loop, self.handle, self._reject)
            self.link = handover.link

    @property
    def has_fronts(self) -> bool:
        """Whether a sidebar is open."""
        return self.link is not None and bool(self.link.peers)

    # -- any thread -------------------------------------------------------------------

    def publish_task(self, task: TaskView) -> None:
        """Delegation progress (a full snapshot of ``task``), from any thread."""
        self._loop.call_soon_threadsafe(self._task, task)

    def notice(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None:
        """A notice to every sidebar, from any thread."""
        self._loop.call_soon_threadsafe(self._broadcast, NoticeMsg(message, level))

    def session_switched(self) -> None:
        """A cell resumed, forked or started a session: tell the sidebars (any thread)."""
        asyncio.run_coroutine_threadsafe(self._session_changed(), self._loop)

    # -- sending ----------------------------------------------------------------------------

    def _broadcast(self, message: Outbound, turn: int | None = None) -> None:
        if isinstance(message, Status):
            self.state = message
        data = self.log.record(message, turn)
        if self.mirror is not None:
            self.mirror.keep(data)
        if self.link is not None:
            self.link.broadcast(data)

    def _reply(self, peer: Peer, message: Outbound) -> None:
        if self.link is not None:
            self.link.send(peer, self.log.reply(message))

    def _reject(self, peer: Peer, problem: str) -> None:
        self._reply(peer, NoticeMsg(f"loom: bad sidebar message ({problem})", "error"))

    def _task(self, task: TaskView) -> None:
        self._tasks[task.task_id] = task
        self._broadcast(task)

    # -- turns --------------------------------------------------------------------------------

    def begin(self, source: Source, text: str, client_id: str | None) -> TurnMirror:
        """A turn starts (engine loop); LoomError while another one runs."""
        if self.mirror is not None:
            who = "the sidebar" if self.mirror.source == "sidebar" else "a cell"
            raise LoomError(f"A turn started from {who} is running; wait for it or stop it.")
        session = self._cw.session_now()
        self.mirror = TurnMirror(
            source,
            text,
            client_id,
            cost_before=session.state.cost_usd,
            context_budget=session.window.config.budget_tokens,
        )
        return self.mirror

    async def publish(self, event: Event) -> None:
        """Fan one engine event of the running turn out to the sidebars."""
        mirror = self.mirror
        if mirror is None:
            return
        for message in mirror.messages(event):
            self._broadcast(message, mirror.turn)

    def publish_message(self, message: Outbound) -> None:
        """Broadcast one message of the running turn (engine loop)."""
        self._broadcast(message, self.mirror.turn if self.mirror else None)

    def end(self) -> None:
        """The running turn is over: run the next queued message."""
        mirror, self.mirror = self.mirror, None
        if mirror is not None and self.state.state != "idle":
            self._broadcast(Status("idle"), mirror.turn)
        self._start_next()

    def sidebar_turn(self) -> bool:
        """Whether the running turn came from the sidebar."""
        return self.mirror is not None and self.mirror.source == "sidebar"

    def _start_next(self) -> None:
        if self.mirror is not None or (self._running is not None and not self._running.done()):
            return
        item = self.queue.pop()
        if item is None:
            return
        self._broadcast(QueueMsg(self.queue.items()))
        self._running = asyncio.ensure_future(self._sidebar_turn(item))

    async def _sidebar_turn(self, item: Queued) -> None:
        try:
            await self._cw.sidebar_turn(item.text, item.client_id)
        except LoomError as exc:
            turn = self.mirror.turn if self.mirror else None
            self._broadcast(TurnErrorMsg(turn, str(exc), type(exc).__name__), turn)
        except Exception as exc:  # never lose the queue to an unexpected failure
            _log.exception("sidebar turn failed")
            self._broadcast(TurnErrorMsg(None, f"{type(exc).__name__}: {exc}", "InternalError"))
        finally:
            self._running = None  # this task is ending: the next message may start
            self.end()

    # -- approvals --------------------------------------------------------------------------

    async def ask(self, request_id: str, request: ApprovalRequest) -> Decision | None:
        """Ask every open sidebar; None when none is open (or all closed meanwhile)."""
        if not self.has_fronts:
            return None
        inputs = dict(request.input)
        if self.mirror is not None and request.call_id:
            self.mirror.inputs[request.call_id] = inputs
        future: asyncio.Future[Decision | None] = self._loop.create_future()
        self._approvals[request_id] = future
        turn = self.mirror.turn if self.mirror else None
        message = Approval(request_id, request.tool_name, inputs, request.detail, request.summary)
        self._broadcast(message, turn)
        try:
            return await future
        finally:
            self._approvals.pop(request_id, None)
            if not future.done():  # the turn was stopped while asking
                self._broadcast(ApprovalClosed(request_id, "deny", "timeout"), turn)

    def close_approval(
        self, request_id: str, decision: Decision, by: Literal["sidebar", "stdin"]
    ) -> None:
        """Tell the sidebars an approval is settled (``by`` sidebar or stdin)."""
        future = self._approvals.pop(request_id, None)
        if future is not None and not future.done():
            future.cancel()
        turn = self.mirror.turn if self.mirror else None
        self._broadcast(ApprovalClosed(request_id, decision, by), turn)

    # -- bridge hooks ---------------------------------------------------------------------------

    def waiting_for_cell(self, waiting: bool) -> None:
        """Code waits for the person's running cell (engine loop)."""
        state = Status("waiting-cell", "waiting for your cell to finish")
        turn = self.mirror.turn if self.mirror else None
        self._broadcast(state if waiting else Status("thinking"), turn)

    def propose_cell(self, source: str) -> None:
        """A sidebar turn's insert_cell: the sidebar inserts the cell."""
        self._broadcast(CellProposal(source), self.mirror.turn if self.mirror else None)

    # -- inbound messages ------------------------------------------------------------------------

    async def handle(self, peer: Peer, message: Inbound) -> None:
        """Act on one message from a sidebar (engine loop); failures become notices."""
        try:
            await self._dispatch(peer, message)
        except LoomError as exc:
            self._reply(peer, NoticeMsg(str(exc), "error"))
        except Exception as exc:
            _log.exception("sidebar message failed")
            self._reply(peer, NoticeMsg(f"loom: {type(exc).__name__}: {exc}", "error"))

    async def _dispatch(self, peer: Peer, m: Inbound) -> None:
        if peer.protocol is not None and m.type != "hello":  # it was told why, once more
            raise LoomError(version_notice(peer.protocol))
        if m.type == "hello":
            await self._hello(peer, m)
        elif m.type == "send":
            await self._send(m)
        elif m.type == "cancel_queued":
            if self.queue.cancel(m.client_id):
                self._broadcast(QueueMsg(self.queue.items()))
        elif m.type == "stop":
            await self._stop()
        elif m.type == "approve":
            self._approve(peer, m.request_id, m.decision)
        elif m.type == "load_more":
            items, more = await history_page(self._cw.archive, await self._sid(), m.before_turn)
            self._reply(peer, History(items, more))
        elif m.type == "sessions":
            await self._sessions(peer)
        elif m.type == "resume" or m.type == "new" or m.type == "fork":
            await self._switch(m)
        elif m.type == "search":
            await self._search(peer, m.query)
        elif m.type == "set_notebook":
            await self._cw.follow_notebook(m.path, m.server_root)
        else:
            assert_never(m)

    async def _hello(self, peer: Peer, hello: Hello) -> None:
        peer.ready = False  # a re-sync: nothing else until it is caught up
        peer.protocol = None if hello.understood else hello.protocol
        if peer.protocol is not None:  # never a half-served chat: the notice, nothing else
            self._reply(peer, NoticeMsg(version_notice(peer.protocol), "error"))
            return
        await self._cw.follow_notebook(hello.notebook_path, hello.server_root)  # renamed since?
        if hello.since_seq is not None:
            missed = self.log.since(hello.since_seq, hello.kernel_session)
            if missed is not None and self.link is not None:
                for data in missed:
                    self.link.send(peer, data)
                peer.ready = True
                return
        if hello.kernel_session not in (None, self.log.kernel_session):
            self._reply(peer, NoticeMsg("Kernel restarted — history intact.", "info"))
        await self._welcome(peer)

    async def _welcome(self, peer: Peer) -> None:
        session = await self._cw.session_async()
        for _ in range(3):  # a turn that starts or ends while the page is read: read again
            running = self.mirror
            before = running.turn if running is not None and running.turn else None
            items, more = await history_page(self._cw.archive, session.session_id, before)
            summary = await self._summary(session)
            if self.mirror is running:
                break
        welcome = Welcome(
            session=summary,
            history=items,
            more_before=more,
            busy=running is not None,
            state=self.state,
            queue=self.queue.items(),
            subshells=_supports_subshells(self.link),
            tasks=tuple(self._tasks.values()),
        )
        self._reply(peer, welcome)
        if running is not None and self.link is not None:
            for data in list(running.sent):
                self.link.send(peer, data)
        if session.session_id is None:  # nothing said here yet: offer a vanished notebook's
            for orphan in self._cw.orphans:
                if not orphan.writer_alive:
                    self._reply(peer, NoticeMsg(f"{orphan.hint()} (Run it in a cell.)", "info"))
        peer.ready = True  # no await since the snapshot: nothing was missed in between

    async def _send(self, m: Send) -> None:
        if not m.text.strip():  # nothing to ask: never archived as a prompt
            raise LoomError("loom: an empty message is not sent.")
        if not self.queue.accept(m.client_id):
            return  # a resend of a message already accepted
        self.queue.push(m.client_id, m.text)
        if self.mirror is not None or (self._running is not None and not self._running.done()):
            self._broadcast(QueueMsg(self.queue.items()))
            self._broadcast(Status("queued", f"{len(self.queue.items())} message(s) waiting"))
            return
        self._start_next()

    async def _stop(self) -> None:
        session = await self._cw.session_async()
        if not session.interrupt() and self._running is not None and not self._running.done():
            self._running.cancel()  # stopped before the session started the turn
        cancel = getattr(session.delegator, "cancel", None)
        if cancel is not None:
            cancel()  # Stop also cancels every running delegated subtask (%delegate cells, --bg)

    def _approve(self, peer: Peer, request_id: str, decision: Decision) -> None:
        future = self._approvals.get(request_id)
        if future is None or future.done():
            self._reply(peer, NoticeMsg("That approval was already answered.", "info"))
            return
        future.set_result(decision)

    async def _sid(self) -> str | None:
        return (await self._cw.session_async()).session_id

    async def _summary(self, session: CoworkSession) -> Any:
        sid = session.session_id
        info = await self._cw.archive.get_session(sid) if sid else None
        return await session_summary(self._cw.archive, info, session.policy.mode)

    async def _sessions(self, peer: Peer) -> None:
        listed = await self._cw.archive.list_sessions(delegated=False)
        rows = await session_rows(self._cw.archive, listed, await self._sid())
        self._reply(peer, SessionsMsg(rows))

    async def _switch(self, m: Resume | New | Fork) -> None:
        from loom_jupyter.archive.refs import resolve_session_ref

        if self.mirror is not None:
            raise LoomError("A turn is running: stop it or wait before switching sessions.")
        session = await self._cw.session_async()
        if m.type == "resume":
            listed = await self._cw.archive.list_sessions(delegated=False)
            await session.resume(resolve_session_ref(listed, m.session).id)
        elif m.type == "fork":
            await session.fork(at_turn=m.at_turn)
        else:
            await session.new()
        await self._session_changed()
        self._cw.panel_reset_soon()

    async def followed(self, message: str, *, switched: bool) -> None:
        """The conversation followed the notebook's new name: say so (after the session,
        when it changed, so the front's rebuilt view keeps the notice)."""
        if switched:
            await self._session_changed()
        self._broadcast(NoticeMsg(message, "info"))

    async def _session_changed(self) -> None:
        session = await self._cw.session_async()
        items, more = await history_page(self._cw.archive, session.session_id, None)
        self._broadcast(SessionChanged(await self._summary(session), items, more))

    async def _search(self, peer: Peer, query: str) -> None:
        """Turns that say it (exact phrase, then all words, then some), in every session."""
        from loom_jupyter.archive.readable import search_for_people
        from loom_jupyter.query import clip_query

        clipped = clip_query(query)
        query = clipped.text
        matches = await search_for_people(self._cw.archive, query, limit=20)
        rows = tuple(
            {
                "session_id": m.turn.session_id,
                "turn": m.turn.turn_number,
                "role": m.turn.tool_name or m.turn.role,
                "snippet": _snippet(m.turn.content),
                "match": m.kind,
            }
            for m in matches
        )
        self._reply(peer, SearchResults(query, rows))
        if clipped.note:
            self._reply(peer, NoticeMsg(f"The search is long: {clipped.note} of it.", "info"))


def _snippet(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _supports_subshells(link: CommLink | None) -> bool:
    kernel = link.kernel if link is not None else None
    return bool(getattr(kernel, "_supports_kernel_subshells", False))
