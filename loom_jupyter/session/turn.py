"""One turn in progress: what it has archived so far, and the archiving of each agent step.

Write-through, step by step: an assistant message (exact blocks) before its tools
run, each tool result before the next request, a ``model_calls`` row per request.
While an answer streams, the text shown so far is kept in a ``partial`` row that
is rewritten at most every ``save_every`` seconds, so a kernel killed mid-answer
loses at most about that much of what the person saw; the finished message
replaces it in place. On a rollback-journal archive (a network or virtual filesystem,
``archive/journal.py``) every commit costs round trips and fsyncs, so the row is rewritten
less often there (:func:`partial_interval`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from typing_extensions import assert_never

from loom_jupyter.engine.agent import ModelCallDone, ModelCallFailed, StepEvent, ToolCallDone
from loom_jupyter.engine.events import (
    ApprovalNeeded,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolDraft,
    ToolFinished,
    ToolStarted,
    UsageEvent,
)
from loom_jupyter.messages import TextBlock, TurnDraft, Usage, blocks_text, sources_markdown

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.engine.events import Event
    from loom_jupyter.engine.state import SessionState
    from loom_jupyter.messages import TurnStatus
    from loom_jupyter.session.turn_writer import TurnWriter
    from loom_jupyter.settings import Settings

__all__ = ["ROLLBACK_PARTIAL_SECONDS", "ActiveTurn", "partial_interval"]

ROLLBACK_PARTIAL_SECONDS = 5.0
"""How often the streaming ``partial`` row is rewritten on a rollback-journal archive,
unless ``partial_save_seconds`` was set."""


def partial_interval(settings: Settings, journal: str | None) -> float:
    """Seconds between rewrites of the ``partial`` row: ``partial_save_seconds``; on the
    rollback journal (``journal`` ``delete``) at least :data:`ROLLBACK_PARTIAL_SECONDS`
    unless the person set it."""
    seconds = settings.partial_save_seconds
    if journal == "delete" and "partial_save_seconds" not in settings.explicit:
        return max(seconds, ROLLBACK_PARTIAL_SECONDS)
    return seconds


@dataclass
class _Streaming:
    """The answer streaming now and the archive row that keeps it (``None`` until text)."""

    pieces: list[str] = field(default_factory=list)
    row: int | None = None
    saved_at: float = 0.0

    @property
    def text(self) -> str:
        return "".join(self.pieces)


class ActiveTurn:
    """The archive side of one turn, from the user's message to the loop's end."""

    def __init__(
        self,
        writer: TurnWriter,
        state: SessionState,
        *,
        first: int,
        save_every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.writer = writer
        self.state = state
        self.first = self.last = first
        self.texts: list[str] = []
        self.usage = Usage()
        self.cost = 0.0
        self._save_every = save_every
        self._clock = clock
        self._streaming = _Streaming()

    @property
    def text(self) -> str:
        """The turn's answer so far (every message's text)."""
        return "\n".join(t for t in self.texts if t)

    async def record(self, event: StepEvent) -> Event | None:
        """Archive a step (write-through); returns what fronts should see, if anything."""
        match event:
            case TextDelta():
                await self._stream(event.text)
                return event
            case ThinkingDelta() | ToolDraft() | ToolStarted() | ApprovalNeeded() | Notice():
                return event  # thinking is archived whole, signature included, with its message
            case ModelCallDone():
                return await self._message(event)
            case ModelCallFailed():
                await self._failure(event)
                return None
            case ToolCallDone():
                return await self._tool(event)
            case _:
                assert_never(event)

    async def abandon(self) -> None:
        """Keep what an interrupted step leaves: the streamed text, as ``interrupted``."""
        partial = self._streaming.text
        if partial:
            await self._keep(partial, "interrupted")

    async def _stream(self, text: str) -> None:
        streaming, now = self._streaming, self._clock()
        streaming.pieces.append(text)
        if streaming.row is None:
            streaming.row = await self.writer.start_partial(streaming.text)
            streaming.saved_at = now
        elif now - streaming.saved_at >= self._save_every:
            await self.writer.save_partial(streaming.row, streaming.text)
            streaming.saved_at = now

    async def _message(self, event: ModelCallDone) -> UsageEvent:
        text = blocks_text(event.blocks) + sources_markdown(event.blocks)  # as it was shown
        await self._settle(TurnDraft(role="assistant", content=text, blocks=event.blocks))
        self.texts.append(text)
        cost = _cost(event.model, event.usage)
        self.usage, self.cost = self.usage + event.usage, self.cost + cost
        await self.writer.model_call(
            model=event.model,
            usage=event.usage,
            stop_reason=event.stop_reason,
            latency_ms=event.latency_ms,
            cost_usd=cost,
            turn_number=self.last,
        )
        return UsageEvent(event.usage, cost, event.model)

    async def _failure(self, event: ModelCallFailed) -> None:
        if event.partial_text:
            await self._keep(event.partial_text, "partial")
        self._streaming = _Streaming()
        await self.writer.model_call(
            model=event.model,
            usage=Usage(),
            stop_reason=None,
            latency_ms=event.latency_ms,
            error=f"{type(event.error).__name__}: {event.error}",
            turn_number=self.last,
        )

    async def _tool(self, event: ToolCallDone) -> ToolFinished:
        call, output = event.call, event.output
        self.last = await self.writer.tool_result(
            call, output.content, output.text_content, is_error=output.is_error
        )
        self.state = self.state.with_tool_result(
            self.last,
            call.name,
            is_error=output.is_error,
            text=output.text_content,
            effects=output.effects,
        )
        summary = output.summary or _first_line(output.text_content)
        return ToolFinished(
            call.id,
            call.name,
            summary,
            output.is_error,
            self.last,
            input=dict(call.input),
            result=output.text_content,
        )

    async def _keep(self, text: str, status: TurnStatus) -> None:
        blocks = (TextBlock(text),)
        await self._settle(TurnDraft(role="assistant", content=text, blocks=blocks, status=status))
        self.texts.append(text)

    async def _settle(self, message: TurnDraft) -> None:
        """Archive a whole message: in the streaming row if there is one, else a new turn."""
        row = self._streaming.row
        if row is None:
            self.last = await self.writer.append(message)
        else:
            self.last = await self.writer.finish_partial(row, message)
        self._streaming = _Streaming()


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:100]


def _cost(model: str, usage: Usage) -> float:
    from loom_jupyter.models.pricing import cost_usd

    return cost_usd(model, usage)
