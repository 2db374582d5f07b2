"""Write-through of one session's turns: the archive first, then the in-memory window.

Every turn gets its token count before it is archived, and enters the context
window only once the archive has committed it (so the window never holds
anything the archive does not).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from loom_jupyter.engine.context import INTERRUPTED_RESULT
from loom_jupyter.engine.tokens import turn_tokens
from loom_jupyter.errors import LoomError
from loom_jupyter.messages import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, TurnDraft

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive
    from loom_jupyter.engine.context import ContextWindow
    from loom_jupyter.messages import TurnStatus, Usage

__all__ = ["TurnWriter"]


class TurnWriter:
    """Appends turns and ledger rows for the current session."""

    def __init__(self, archive: Archive, window: ContextWindow, kernel_session: str = "") -> None:
        self.archive = archive
        self.window = window
        self.session_id: str | None = None
        self.kernel_session = kernel_session or None  # recorded on every turn written

    @property
    def sid(self) -> str:
        """The current session's id (a session must exist)."""
        if self.session_id is None:
            raise LoomError("No session yet: send a message first.")
        return self.session_id

    async def append(self, turn: TurnDraft) -> int:
        """Archive one turn, then put it in the window; returns its number."""
        turn = self._stamped(turn)
        number = await self.archive.append_turn(self.sid, turn)
        self.window.append(turn.archived(self.sid, number))
        return number

    def _stamped(self, turn: TurnDraft) -> TurnDraft:
        """With its token count and the kernel session that wrote it."""
        tokens = turn_tokens(turn.content, turn.blocks)
        kernel = turn.kernel_session or self.kernel_session
        return replace(turn, token_count=tokens, kernel_session=kernel)

    async def start_partial(self, text: str) -> int:
        """Archive the first text of a streaming answer as a ``partial`` turn (not in the window).

        :meth:`save_partial` rewrites it as more streams; :meth:`finish_partial`
        turns it into the finished message and only then puts it in the window.
        """
        return await self.archive.append_turn(self.sid, self._stamped(_partial(text)))

    async def save_partial(self, number: int, text: str) -> None:
        """Rewrite the streaming answer's row with the text shown so far."""
        await self.archive.update_turn(self.sid, number, _partial(text))

    async def finish_partial(self, number: int, turn: TurnDraft) -> int:
        """Make the streaming row ``number`` the finished ``turn``, then put it in the window."""
        turn = self._stamped(turn)
        await self.archive.update_turn(self.sid, number, turn)
        self.window.append(turn.archived(self.sid, number))
        return number

    async def tool_result(
        self,
        call: ToolUseBlock,
        content: tuple[TextBlock | ImageBlock, ...],
        text: str,
        *,
        is_error: bool,
        status: TurnStatus = "complete",
    ) -> int:
        """Archive the result of ``call`` as a ``tool`` turn."""
        result = ToolResultBlock(call.id, content, is_error)
        return await self.append(
            TurnDraft(
                role="tool",
                content=text,
                blocks=(result,),
                tool_name=call.name,
                tool_call_id=call.id,
                tool_input=dict(call.input),
                is_error=is_error,
                status=status,
            )
        )

    async def repair_dangling(
        self, reason: str = INTERRUPTED_RESULT
    ) -> list[tuple[int, ToolUseBlock]]:
        """Archive an ``interrupted`` result for each unanswered call of the last assistant turn."""
        repaired = []
        for call in self.window.dangling_tool_calls():
            content = (TextBlock(reason),)
            number = await self.tool_result(
                call, content, reason, is_error=True, status="interrupted"
            )
            repaired.append((number, call))
        return repaired

    async def model_call(
        self,
        *,
        model: str,
        usage: Usage,
        stop_reason: str | None,
        latency_ms: float,
        turn_number: int,
        cost_usd: float = 0.0,
        error: str | None = None,
    ) -> None:
        """One row of the ``model_calls`` ledger."""
        await self.archive.record_model_call(
            self.sid,
            model=model,
            usage=usage,
            stop_reason=stop_reason,
            latency_ms=latency_ms,
            error=error,
            cost_usd=cost_usd,
            turn_number=turn_number,
        )


def _partial(text: str) -> TurnDraft:
    return TurnDraft(role="assistant", content=text, blocks=(TextBlock(text),), status="partial")
