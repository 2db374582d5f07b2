"""The turn floor of one kernel: one turn at a time, the queue behind it, Stop, approvals.

Everything here runs on the engine loop except :meth:`TurnFloor.publish_task` and
:meth:`TurnFloor.notice`, which any thread may call. A turn from any front
:meth:`~TurnFloor.begin`\\ s, publishes its engine events and :meth:`~TurnFloor.end`\\ s;
a message sent while a turn runs waits in the queue and runs next. Whatever happens
is published once, numbered, to every subscriber (:mod:`loom_jupyter.host.runtime.stream`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.errors import LoomError
from loom_jupyter.host.runtime.mirror import TurnMirror
from loom_jupyter.host.runtime.queue import SendQueue
from loom_jupyter.host.runtime.replay import EventLog
from loom_jupyter.host.runtime.stream import HostMessage, Subscriber, TurnEvent, fan_out
from loom_jupyter.host.wire.protocol import (
    Approval,
    ApprovalClosed,
    CellProposal,
    Decision,
    NoticeMsg,
    QueueMsg,
    Status,
    TaskView,
    TurnErrorMsg,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from loom_jupyter.engine.events import ApprovalRequest, Event
    from loom_jupyter.host.runtime.mirror import Source
    from loom_jupyter.host.wire.protocol import Outbound, Queued
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["FloorState", "TurnFloor"]

_log = logging.getLogger(__name__)


_WHO = {"sidebar": "the sidebar", "cell": "a cell", "outside": "an outside agent's call"}


class FloorState:
    """What a successor floor takes over (the notebook was renamed): the numbered log and
    the delegation task views, so open sidebars see no restart."""

    def __init__(self, log: EventLog, tasks: dict[str, TaskView]) -> None:
        self.log = log
        self.tasks = tasks


class TurnFloor:
    """One turn at a time, for every front of one kernel."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        session: Callable[[], CoworkSession],
        run_queued: Callable[[str, str | None], Awaitable[None]],
    ) -> None:
        self._loop = loop
        self._session = session
        self._run_queued = run_queued
        self.log = EventLog()
        self.queue = SendQueue()
        self.mirror: TurnMirror | None = None  # the running turn, cell or sidebar
        self.state = Status("idle")
        self.tasks: dict[str, TaskView] = {}
        self.subscribers: list[Subscriber] = []
        self._can_ask: Callable[[], bool] = lambda: False  # is a front open that answers?
        self._approvals: dict[str, asyncio.Future[Decision | None]] = {}
        self._running: asyncio.Task[None] | None = None
        self._idle: list[asyncio.Future[None]] = []  # outside calls waiting for the floor
        self.stop_outside: Callable[[], object] | None = None  # Stop, for an outside call
        self.outside_seen: list[str] = []  # outside calls since the last turn, for its note

    def release(self) -> FloorState:
        """What a successor takes over."""
        return FloorState(self.log, dict(self.tasks))

    def take(self, state: FloorState) -> None:
        """Continue a predecessor's numbering and task views."""
        self.log, self.tasks = state.log, state.tasks

    # -- publishing -------------------------------------------------------------------

    def broadcast(self, message: Outbound, turn: int | None = None) -> None:
        """Number ``message`` and give it to every subscriber (engine loop)."""
        fan_out(self.subscribers, HostMessage(message, self._record(message, turn)))

    def _record(self, message: Outbound, turn: int | None) -> dict[str, Any]:
        if isinstance(message, Status):
            self.state = message
        data = self.log.record(message, turn)
        if self.mirror is not None:
            self.mirror.keep(data)
        return data

    def publish_message(self, message: Outbound) -> None:
        """Broadcast one message of the running turn (engine loop)."""
        self.broadcast(message, self.turn)

    async def publish(self, event: Event) -> None:
        """One engine event of the running turn, to every subscriber."""
        mirror = self.mirror
        if mirror is None:
            return
        sent = tuple(self._record(message, mirror.turn) for message in mirror.messages(event))
        fan_out(self.subscribers, TurnEvent(event, mirror.source, sent))

    def publish_task(self, task: TaskView) -> None:
        """Delegation progress (a full snapshot of ``task``), from any thread."""
        self._loop.call_soon_threadsafe(self._task, task)

    def notice(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None:
        """A notice to every front, from any thread."""
        self._loop.call_soon_threadsafe(self.broadcast, NoticeMsg(message, level))

    def _task(self, task: TaskView) -> None:
        self.tasks[task.task_id] = task
        self.broadcast(task)

    @property
    def turn(self) -> int | None:
        """The running turn's number, once the session gave it one."""
        return self.mirror.turn if self.mirror is not None else None

    # -- turns ----------------------------------------------------------------------------

    def begin(self, source: Source, text: str, client_id: str | None) -> TurnMirror:
        """A turn starts (engine loop); LoomError while another one runs."""
        if self.mirror is not None:
            who = _WHO[self.mirror.source]
            raise LoomError(f"A turn started from {who} is running; wait for it or stop it.")
        session = self._session()
        self.mirror = TurnMirror(
            source,
            text,
            client_id,
            cost_before=session.state.cost_usd,
            context_budget=session.window.config.budget_tokens,
        )
        return self.mirror

    def end(self) -> None:
        """The running turn is over: run the next queued message."""
        mirror, self.mirror = self.mirror, None
        if mirror is not None and self.state.state != "idle":
            self.broadcast(Status("idle"), mirror.turn)
        self._start_next()
        if not self.busy:
            waiting, self._idle = self._idle, []
            for future in waiting:
                if not future.done():
                    future.set_result(None)

    async def until_idle(self, timeout: float) -> bool:
        """Wait (engine loop) until no turn runs or starts; False when ``timeout`` seconds
        passed first. An outside agent's call takes the floor right after, with no await in
        between, so it never overtakes a turn that was waiting."""
        deadline = self._loop.time() + timeout
        while self.busy:
            left = deadline - self._loop.time()
            if left <= 0:
                return False
            future: asyncio.Future[None] = self._loop.create_future()
            self._idle.append(future)
            try:
                await asyncio.wait_for(future, left)
            except TimeoutError:
                return not self.busy
        return True

    @property
    def busy(self) -> bool:
        """A turn runs or a queued message is starting."""
        return self.mirror is not None or (self._running is not None and not self._running.done())

    @property
    def answering(self) -> bool:
        """Busy with a turn that has not given its answer yet (a turn whose TurnDone is out
        is only being put away: a session switch waits for it rather than being refused)."""
        return self.busy and not (self.mirror is not None and self.mirror.answered)

    def sidebar_turn(self) -> bool:
        """Whether the running turn came from the sidebar."""
        return self.mirror is not None and self.mirror.source == "sidebar"

    def outside_turn(self) -> bool:
        """Whether an outside agent's call holds the floor (DESIGN §14): its approvals are
        asked in the open sidebars only."""
        return self.mirror is not None and self.mirror.source == "outside"

    def submit(self, text: str, client_id: str) -> None:
        """A message to run as a turn: now, or after the queue (a resend is ignored)."""
        if not text.strip():  # nothing to ask: never archived as a prompt
            raise LoomError("loom: an empty message is not sent.")
        if not self.queue.accept(client_id):
            return  # a resend of a message already accepted
        self.queue.push(client_id, text)
        if self.busy:
            self.broadcast(QueueMsg(self.queue.items()))
            self.broadcast(Status("queued", f"{len(self.queue.items())} message(s) waiting"))
            return
        self._start_next()

    def cancel_queued(self, client_id: str) -> None:
        """Take a waiting message out of the queue."""
        if self.queue.cancel(client_id):
            self.broadcast(QueueMsg(self.queue.items()))

    def ask_through(self, fronts_open: Callable[[], bool]) -> None:
        """Whether a front that answers approvals is open now (the pages' hub says)."""
        self._can_ask = fronts_open

    def can_ask(self) -> bool:
        """A front that answers approvals is open."""
        return self._can_ask()

    def stop(self) -> None:
        """Stop the running turn (or outside agent's call) and every delegated subtask."""
        if self.outside_turn() and self.stop_outside is not None:
            self.stop_outside()
        session = self._session()
        if not session.interrupt() and self._running is not None and not self._running.done():
            self._running.cancel()  # stopped before the session started the turn
        cancel = getattr(session.environment.delegator, "cancel", None)
        if cancel is not None:
            cancel()  # Stop also cancels every running delegated subtask (%delegate cells, --bg)

    def _start_next(self) -> None:
        if self.busy:
            return
        item = self.queue.pop()
        if item is None:
            return
        self.broadcast(QueueMsg(self.queue.items()))
        self._running = asyncio.ensure_future(self._queued_turn(item))

    async def _queued_turn(self, item: Queued) -> None:
        try:
            await self._run_queued(item.text, item.client_id)
        except LoomError as exc:
            error = TurnErrorMsg(self.turn, str(exc), type(exc).__name__, self._unsent(item))
            self.broadcast(error, self.turn)
        except Exception as exc:  # never lose the queue to an unexpected failure
            _log.exception("a queued turn failed")
            message = f"{type(exc).__name__}: {exc}"
            self.broadcast(TurnErrorMsg(None, message, "InternalError", self._unsent(item)))
        finally:
            self._running = None  # this task is ending: the next message may start
            self.end()

    def _unsent(self, item: Queued) -> str | None:
        """``item``'s client id while it has not become a turn (its page takes it back)."""
        return item.client_id if self.turn is None else None

    # -- approvals ------------------------------------------------------------------------

    async def ask(self, request_id: str, request: ApprovalRequest) -> Decision | None:
        """Ask every open front that answers; None when none is open (or all closed)."""
        if not self._can_ask():
            return None
        inputs = dict(request.input)
        if self.mirror is not None and request.call_id:
            self.mirror.inputs[request.call_id] = inputs
        future: asyncio.Future[Decision | None] = self._loop.create_future()
        self._approvals[request_id] = future
        turn = self.turn
        summary = request.summary
        if self.outside_turn() and self.mirror is not None:  # the person sees who asks
            summary = f"{self.mirror.text} asks: {summary}"
        message = Approval(
            request_id,
            request.tool_name,
            inputs,
            request.detail,
            summary,
            request.always,
            request.question,
        )
        self.broadcast(message, turn)
        try:
            return await future
        finally:
            unsettled = self._approvals.pop(request_id, None) is not None  # none closed it
            if unsettled and (not future.done() or future.cancelled()):  # stopped while asking
                self.broadcast(ApprovalClosed(request_id, "deny", "timeout"), turn)

    def answer(self, request_id: str, decision: Decision) -> bool:
        """A front's answer; False when the question was already settled."""
        future = self._approvals.get(request_id)
        if future is None or future.done():
            return False
        future.set_result(decision)
        return True

    def close_approval(
        self, request_id: str, decision: Decision, by: Literal["sidebar", "stdin"]
    ) -> None:
        """Tell every front an approval is settled (``by`` sidebar or stdin)."""
        future = self._approvals.pop(request_id, None)
        if future is not None and not future.done():
            future.cancel()
        self.broadcast(ApprovalClosed(request_id, decision, by), self.turn)

    # -- the kernel bridge's hooks ----------------------------------------------------------

    def waiting_for_cell(self, waiting: bool) -> None:
        """Code waits for the person's running cell (engine loop)."""
        state = Status("waiting-cell", "waiting for your cell to finish")
        self.broadcast(state if waiting else Status("thinking"), self.turn)

    def propose_cell(self, source: str) -> None:
        """A sidebar turn's insert_cell: the sidebar inserts the cell."""
        self.broadcast(CellProposal(source), self.turn)
