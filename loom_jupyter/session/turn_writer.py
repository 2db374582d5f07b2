"""Write-through of one session's turns: the archive first, then the in-memory window.

Every turn gets its token count before it is archived, and enters the context
window only once the archive has committed it (so the window never holds
anything the archive does not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.engine.context import INTERRUPTED_RESULT
from loom_jupyter.engine.tokens import turn_tokens
from loom_jupyter.errors import LoomError
from loom_jupyter.messages import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, Turn

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.archive import Archive
    from loom_jupyter.engine.context import ContextWindow
    from loom_jupyter.messages import ContentBlock, TurnRole, TurnStatus, Usage

__all__ = ["TurnWriter"]


class TurnWriter:
    """Appends turns and ledger rows for the current session."""

    def __init__(self, archive: Archive, window: ContextWindow) -> None:
        self.archive = archive
        self.window = window
        self.session_id: str | None = None

    @property
    def sid(self) -> str:
        """The current session's id (a session must exist)."""
        if self.session_id is None:
            raise LoomError("No session yet: send a message first.")
        return self.session_id

    async def append(
        self,
        role: TurnRole,
        content: str,
        blocks: Sequence[ContentBlock],
        status: TurnStatus = "complete",
        *,
        tool_call: ToolUseBlock | None = None,
        is_error: bool = False,
    ) -> int:
        """Archive one turn, then put it in the window; returns its number."""
        tokens = turn_tokens(content, blocks)
        name = tool_call.name if tool_call else None
        call_id = tool_call.id if tool_call else None
        tool_input = dict(tool_call.input) if tool_call else None
        number = await self.archive.append_turn(
            self.sid,
            role=role,
            content=content,
            blocks=blocks,
            tool_name=name,
            tool_call_id=call_id,
            tool_input=tool_input,
            is_error=is_error,
            token_count=tokens,
            status=status,
        )
        turn = Turn(
            self.sid,
            number,
            role,
            content,
            tuple(blocks),
            tool_name=name,
            tool_call_id=call_id,
            tool_input=tool_input,
            is_error=is_error,
            token_count=tokens,
            status=status,
        )
        self.window.append(turn)
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
        return await self.append("tool", text, (result,), status, tool_call=call, is_error=is_error)

    async def repair_dangling(self) -> list[tuple[int, ToolUseBlock]]:
        """Archive an ``interrupted`` result for each unanswered call of the last assistant turn."""
        repaired = []
        for call in self.window.dangling_tool_calls():
            content = (TextBlock(INTERRUPTED_RESULT),)
            number = await self.tool_result(
                call, content, INTERRUPTED_RESULT, is_error=True, status="interrupted"
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
