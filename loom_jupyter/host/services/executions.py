"""The kernel's executions as the host keeps them (issue 21): every cell of the person's
and every piece of the agent's code archived, and where a variable came from.

:class:`ExecutionLog` is the host's part for it: records come from any thread (the cell
hooks, the kernel bridge) and are written on the engine thread, stamped with this kernel's
run, the session and the turn the agent was answering; secrets never reach the archive.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.archive import Archive
    from loom_jupyter.host.runtime.loop_thread import LoopThread
    from loom_jupyter.lineage import ExecutionRecord, VariableTrace
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["ExecutionLog"]


class ExecutionLog:
    """Archives executions and answers provenance from them."""

    def __init__(
        self,
        loop_thread: LoopThread,
        archive: Callable[[], Archive | None],
        session: Callable[[], CoworkSession | None],
    ) -> None:
        self._loop_thread = loop_thread
        self._archive = archive
        self._session = session
        self.kernel_run = uuid.uuid4().hex  # this kernel's run, on its execution records

    def record(self, record: ExecutionRecord) -> None:
        """Archive one execution, from any thread; dropped before the archive opens."""
        if self._archive() is None or not self._loop_thread.alive:
            return
        from loom_jupyter.tools.output import redact_secrets

        session = self._session()
        answering = session.answering if session is not None else None
        agents = record.source != "cell" and record.turn is None  # stamped with its turn
        stamped = replace(
            record,
            turn=answering if agents else record.turn,
            code=redact_secrets(record.code),  # secrets never reach the archive
            error=redact_secrets(record.error) if record.error else record.error,
            kernel_run=self.kernel_run,
            session_id=session.session_id if session is not None else None,
        )
        self._loop_thread.submit(self._write(stamped))

    async def _write(self, record: ExecutionRecord) -> None:
        archive = self._archive()
        if archive is not None:
            try:
                await archive.record_execution(record)
            except LoomError:  # a busy or closed archive loses a record, never a cell
                return

    async def all(self) -> list[ExecutionRecord]:
        """The archived executions, oldest first (engine thread)."""
        archive = self._archive()
        return await archive.executions() if archive is not None else []

    async def trace(self, name: str) -> VariableTrace:
        """Where ``name`` came from, by the archived executions (engine thread)."""
        from loom_jupyter.lineage import trace

        return trace(await self.all(), name)
