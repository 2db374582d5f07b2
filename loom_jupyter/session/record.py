"""ConversationRecord: one conversation as the archive holds it, and its session state.

The session row (:attr:`~ConversationRecord.info`), the state sent with every request
(:attr:`~ConversationRecord.state`), the one :class:`TurnWriter` that appends its turns and
the window those turns enter. The turn (:mod:`.conversation`) and the switches
(:mod:`.switching`) change it only through here, so the state persisted in the archive is
always the state the next request sends.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from loom_jupyter.archive.liveness import kernel_process
from loom_jupyter.engine.context import INTERRUPTED_RESULT
from loom_jupyter.engine.events import StateChanged
from loom_jupyter.engine.state import OpenTask, SessionState
from loom_jupyter.errors import LoomError
from loom_jupyter.messages import TextBlock, TurnDraft
from loom_jupyter.records import FINISHED_TASK
from loom_jupyter.session.turn_writer import TurnWriter

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from loom_jupyter.archive import Archive, SessionInfo
    from loom_jupyter.engine.context import ContextWindow
    from loom_jupyter.tools.base import KernelBridge, VariableEffect

__all__ = ["ConversationRecord", "utc_text"]


class ConversationRecord:
    """The archived conversation of one notebook, as of its last write."""

    def __init__(
        self,
        archive: Archive,
        window: ContextWindow,
        *,
        notebook_path: Path,
        owner: str,
        model: str,
    ) -> None:
        self.archive = archive
        self.window = window
        self.notebook_path = notebook_path
        self.owner = owner
        self.writer = TurnWriter(archive, window, kernel_session=owner)
        self.state = SessionState(notebook=str(notebook_path), model=model)
        self.info: SessionInfo | None = None  # the session row as of the last turn

    @property
    def session_id(self) -> str | None:
        """The archived session's id; ``None`` while lazy."""
        return self.writer.session_id

    @property
    def sid(self) -> str:
        """The archived session's id (there is one)."""
        return self.writer.sid

    def bind(self, session_id: str, state: SessionState, model: str) -> None:
        """Write to ``session_id`` from now on, with ``state`` (given this notebook and model)."""
        self.writer.session_id = session_id
        self.state = replace(
            state, session_id=session_id, notebook=str(self.notebook_path), model=model
        )

    def go_lazy(self, model: str) -> None:
        """No session: the next message creates one."""
        self.state = SessionState(notebook=str(self.notebook_path), model=model)
        self.info, self.writer.session_id = None, None
        self.window.reset([])

    def snapshot(self) -> StateChanged:
        """A snapshot of the session for a panel."""
        info, state = self.info, self.state
        return StateChanged(
            session_id=state.session_id,
            title=info.title if info else "",
            turn_count=info.turn_count if info else 0,
            input_tokens=state.input_tokens,
            output_tokens=state.output_tokens,
            cost_usd=state.cost_usd,
            state_yaml=state.to_yaml(),
        )

    async def summary(self) -> str:
        """The state as YAML (a tool's ``session_summary``)."""
        return self.state.to_yaml()

    async def refresh(self) -> None:
        """Re-read the session row, fold totals and open tasks into the state, persist it."""
        sid = self.sid
        info = await self.archive.get_session(sid)
        tasks = [
            OpenTask(t.id, t.goal, t.status)
            for t in await self.archive.list_tasks(sid)
            if t.status not in FINISHED_TASK
        ]
        self.state = self.state.with_totals(
            turn_count=info.turn_count,
            input_tokens=info.input_tokens + info.cache_creation_tokens + info.cache_read_tokens,
            output_tokens=info.output_tokens,
            cost_usd=info.cost_usd,
        ).with_tasks(tasks)
        state_json = self.state.to_json()
        await self.archive.update_session(sid, session_state=state_json)
        self.info = replace(info, session_state=state_json)

    async def repair_dangling(self, reason: str = INTERRUPTED_RESULT) -> int:
        """Archive ``reason`` as the result of unanswered calls; returns the last turn (or 0)."""
        last = 0
        for last, call in await self.writer.repair_dangling(reason):
            self.state = self.state.with_tool_result(last, call.name, is_error=True, text=reason)
        return last

    async def note(self, text: str, effects: Sequence[VariableEffect] = ()) -> int:
        """Archive ``text`` as a ``system`` turn; ``effects`` are variables it made."""
        draft = TurnDraft(role="system", content=text, blocks=(TextBlock(text),))
        number = await self.writer.append(draft)
        self.state = self.state.with_variables(number, effects)
        await self.refresh()
        return number

    async def persist(self) -> None:
        """Write the state to the session row (a session being left)."""
        if self.session_id is not None:
            await self.archive.update_session(self.session_id, session_state=self.state.to_json())

    async def check_kernel(self, kernel: KernelBridge) -> SessionState:
        """Read the kernel's facts into the state (at load, before each request, when a
        sidebar opens): a new kernel process means a restart; of the variables the last
        kernel took, those in the namespace now were re-created and are not gone. The
        work is one lookup of at most the state's variables, whatever the archive holds."""
        process = kernel_process(self.owner)
        if self.session_id is not None and process and process != self.state.kernel_session:
            last = await self.archive.last_turn_number(self.session_id)
            self.state = self.state.in_kernel(process, last_turn=last, at=utc_text())
        lost = self.state.lost_names()
        if lost:
            try:
                present = await kernel.fingerprints(lost)
            except LoomError:  # the namespace cannot be read now: the last reading stays
                return self.state
            self.state = self.state.with_present(present)
        return self.state


def utc_text() -> str:
    """Now, as the session state writes times."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
