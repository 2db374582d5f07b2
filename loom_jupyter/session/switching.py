"""SessionSwitches: which archived session a notebook's conversation writes to.

Resume, new, fork and end, and the lazy start on the first message. One switch at a time,
never while a turn or a delegation runs (every front's switch passes here: the magic, the
sidebar through the host, the CLI's host): the conversation says what runs
(``busy``), a switch refuses with :class:`SessionBusyError` naming it. One process writes a
session at a time: a switch takes the archive's lease of the session it goes to and gives
back the one it leaves; a lease taken from a dead writer is a crash to recover from.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from loom_jupyter.archive.liveness import kernel_process
from loom_jupyter.engine.cache_policy import MAX_GAPS
from loom_jupyter.engine.context import load_window_turns
from loom_jupyter.engine.state import SessionState
from loom_jupyter.errors import LoomError, SessionBusyError
from loom_jupyter.messages import TextBlock, TurnDraft
from loom_jupyter.session.lease import SessionLease
from loom_jupyter.session.record import utc_text
from loom_jupyter.session.recovery import KERNEL_DIED_RESULT, CrashRecovery

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from loom_jupyter.archive import SessionInfo
    from loom_jupyter.records import LeaseTakeover
    from loom_jupyter.session.environment import TurnEnvironment
    from loom_jupyter.session.record import ConversationRecord

__all__ = ["SessionSwitches"]


class SessionSwitches:
    """Moves one :class:`ConversationRecord` between archived sessions."""

    def __init__(
        self,
        record: ConversationRecord,
        environment: TurnEnvironment,
        *,
        busy: Callable[[], Awaitable[str | None]],
        stale_after: float,
    ) -> None:
        self.record = record
        self.environment = environment
        self.archive = record.archive
        self.lease = SessionLease(record.archive, record.owner, stale_after=stale_after)
        self.lock = asyncio.Lock()  # a switch, and a send or a note waiting for it to end
        self.recovered: CrashRecovery | None = None  # set when resume found a dead writer
        self._busy = busy

    @asynccontextmanager
    async def switch(self, action: str) -> AsyncIterator[None]:
        """One switch at a time, refused while something runs that it would split."""
        async with self.lock:
            running = await self._busy()
            if running is not None:
                raise SessionBusyError(running, action)
            yield

    async def resume(self, session_id: str) -> SessionInfo:
        """Switch to an archived session: lease, state and window back, dangling calls repaired."""
        async with self.switch("resume that session"):
            return await self._resume(session_id)

    async def new(self) -> None:
        """Leave the current session; the next message starts a new one."""
        async with self.switch("start a new session"):
            await self.release()
            self.record.go_lazy(self._model())

    async def fork(self, at_turn: int | None) -> SessionInfo:
        """Copy turns ``1..at_turn`` (all when ``None``) into a new session and switch to it."""
        async with self.switch("fork the session"):
            if self.record.session_id is None:
                raise LoomError("There is no conversation to fork yet: send a message first.")
            new_id = await self.archive.fork_session(self.record.session_id, at_turn)
            return await self._resume(new_id)

    async def end(self) -> None:
        """Mark the current session closed in the archive, then go lazy."""
        async with self.switch("close the session"):
            if self.record.session_id is not None:
                await self.archive.close_session(self.record.session_id)
            await self.release()
            self.record.go_lazy(self._model())

    async def ensure(self) -> str:
        """The archived session's id, the session row created if the record is lazy
        (call holding :attr:`lock`)."""
        record = self.record
        if record.session_id is None:
            sid = await self.archive.create_session(
                notebook_path=str(record.notebook_path), model=self._model()
            )
            await self.lease.take(sid)
            record.bind(
                sid, SessionState(kernel_session=kernel_process(record.owner)), self._model()
            )
            record.window.reset([], await self._pauses())
        return record.sid

    async def release(self) -> None:
        """Persist the state and give the lease back (the session stays active)."""
        if self.lease.lost is None:
            await self.record.persist()
        await self.lease.release()

    async def _resume(self, session_id: str) -> SessionInfo:
        record = self.record
        info = await self.archive.get_session(session_id)
        await self.release()
        record.go_lazy(self._model())  # the lease held elsewhere: lazy rather than half-switched
        takeover = await self.lease.take(session_id)
        if info.status != "active":
            await self.archive.reopen_session(session_id)
        record.bind(session_id, SessionState.from_json(info.session_state), self._model())
        budget = record.window.config.budget_tokens
        turns = await load_window_turns(self.archive, session_id, budget)
        record.window.reset(turns, await self._pauses())
        self.recovered = None
        if takeover is not None:
            self.recovered = await self._recover_crash(takeover)
        await record.repair_dangling()
        last = await self.archive.last_turn_number(session_id)  # a new kernel: variables gone
        process = kernel_process(record.owner)  # a reload of the extension is the same kernel
        record.state = replace(
            record.state, kernel_session=kernel_process(record.state.kernel_session)
        ).in_kernel(process, last_turn=last, at=utc_text())
        await record.check_kernel(self.environment.kernel)  # what the last kernel took, back
        await record.refresh()
        assert record.info is not None
        return record.info

    async def _recover_crash(self, takeover: LeaseTakeover) -> CrashRecovery:
        """The previous writer died: say so in the archive, the state and (via ``recovered``)
        the banner; tools it left running get a "the kernel died" result."""
        record = self.record
        last = await self.archive.last_turn_number(record.sid)
        tail = await self.archive.get_turns(record.sid, max(1, last - 20), last)
        recovery = CrashRecovery.inspect(tail, takeover)
        await record.repair_dangling(KERNEL_DIED_RESULT)
        if recovery.during_turn:
            note = recovery.model_note()
            draft = TurnDraft(role="system", content=note, blocks=(TextBlock(note),))
            last = await record.writer.append(draft)
        record.state = record.state.with_kernel_lost(last, "crash", recovery.died_at_text)
        return recovery

    async def _pauses(self) -> tuple[float, ...]:
        """The notebook's recent pauses between turns, for the cache TTL; a notebook with
        fewer than the rule remembers starts from the notebooks beside it."""
        from loom_jupyter.archive.project import neighbour_pauses

        own = await self.archive.recent_pauses(MAX_GAPS)
        if len(own) >= MAX_GAPS:
            return own
        return (*await neighbour_pauses(self.archive.path), *own)[-MAX_GAPS:]

    def _model(self) -> str:
        return self.environment.options.model.name
