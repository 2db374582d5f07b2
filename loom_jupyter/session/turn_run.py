"""TurnRun: one turn of a conversation, from the person's message to the agent's answer.

The message is archived before the model is asked (secrets replaced first: every front's
prompt passes here); the environment gets ready (trust, instructions, MCP servers); the
agent loop runs with the environment's tools and policy, and each of its steps is archived
through an :class:`ActiveTurn` before the next. An interrupt (:class:`StepPuller`) or a
front that stops listening archives what the turn leaves: the partial answer and an
``interrupted`` result for each unfinished call.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import TYPE_CHECKING

from loom_jupyter.engine.agent import LoopEnded, LoopFailed
from loom_jupyter.engine.events import Notice, TurnDone, TurnError, TurnStarted
from loom_jupyter.errors import ArchiveError, LoomError
from loom_jupyter.messages import TextBlock, TurnDraft
from loom_jupyter.session.steps import Interrupted, StepPuller
from loom_jupyter.session.turn import ActiveTurn, partial_interval
from loom_jupyter.telemetry import tracer_for
from loom_jupyter.tools.output import REDACTED, redact_secrets

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence

    from loom_jupyter.engine.agent import AgentEvent
    from loom_jupyter.engine.events import Event, TurnEndReason
    from loom_jupyter.messages import ContentBlock, ImageBlock
    from loom_jupyter.models.base import ModelRequest
    from loom_jupyter.session.environment import TurnEnvironment
    from loom_jupyter.session.record import ConversationRecord
    from loom_jupyter.session.switching import SessionSwitches
    from loom_jupyter.settings import EffortLevel
    from loom_jupyter.telemetry import AgentTrace

__all__ = ["SECRET_IN_PROMPT", "TurnRun"]

SECRET_IN_PROMPT = (
    f"Your message holds a secret (an API key, or the value of a secret environment variable); "
    f"it was replaced by {REDACTED} and is not sent to the model or archived."
)
_INTERRUPTED = "Interrupted. The partial answer is archived; send a message to continue."


class TurnRun:
    """Runs one turn against a conversation's record, in its environment."""

    def __init__(
        self,
        record: ConversationRecord,
        environment: TurnEnvironment,
        switches: SessionSwitches,
        *,
        answering: Callable[[int], None],
        front: str = "",
    ) -> None:
        self.record = record
        self.environment = environment
        self.switches = switches
        self.puller = StepPuller()
        self._answering = answering  # told the person's message once it is archived
        self._options: tuple[bool, EffortLevel | None] = (False, None)  # thinking, effort
        self._front, self._prompt = front, ""  # what the turn's span says (telemetry/)

    async def events(self, text: str, images: Sequence[ImageBlock]) -> AsyncGenerator[Event, None]:
        """The turn's events, ending in ``TurnDone`` or ``TurnError``."""
        record, lost = self.record, self.switches.lease.lost
        if lost is not None:
            yield TurnError(str(lost), "LeaseHeldError")
            return
        clean = redact_secrets(text)
        if clean != text:  # every front's prompt passes here: one place keeps keys out
            yield Notice(SECRET_IN_PROMPT, "warning")
            text = clean
        self._prompt = text
        try:
            sid = await self.switches.ensure()
            blocks: tuple[ContentBlock, ...] = (TextBlock(text), *images)
            first = await record.writer.append(TurnDraft(role="user", content=text, blocks=blocks))
        except LoomError as error:
            yield TurnError(str(error), type(error).__name__)
            return
        record.state = record.state.with_user_message(first, text)
        self._answering(first)  # the agent's executions are recorded under it
        yield TurnStarted(sid, first)
        for notice in await self.environment.prepare():
            yield Notice(notice, "warning")
        async with aclosing(self._loop(sid, first)) as loop:  # closed with this one
            async for event in loop:
                yield event

    async def _loop(self, sid: str, first: int) -> AsyncGenerator[Event, None]:
        env = self.environment
        save_every = partial_interval(env.settings, self.record.archive.journal_mode)
        turn = ActiveTurn(self.record.writer, self.record.state, first=first, save_every=save_every)
        self._options = env.options.request_options()  # fixed for the whole tool loop
        context = env.tool_context(sid, first, self.record.summary)
        agent = env.agent_loop().run(self._request, context)
        trace = self._trace(sid)
        try:
            async for event in self.puller.steps(agent):
                trace.see(event)
                async for public in self._archive_step(turn, event, trace):
                    yield public
        except Interrupted:
            await asyncio.shield(self._abandon(turn))
            end = LoopEnded("interrupted", _INTERRUPTED)
            async for public in self._finish(turn, end, trace):
                yield public
        except ArchiveError as error:
            trace.end(error=type(error).__name__)
            yield TurnError(_archive_failed(error), type(error).__name__, first, turn.last)
        except (asyncio.CancelledError, GeneratorExit):
            trace.end(reason="interrupted")
            await asyncio.shield(self._abandon(turn))
            raise
        finally:
            trace.end()  # a span is ended once: this closes one no path above closed

    def _trace(self, sid: str) -> AgentTrace:
        env = self.environment
        return tracer_for(env.settings).turn(
            session_id=sid,
            notebook=str(env.notebook_path),
            front=self._front,
            approval=env.policy.mode,
            prompt=self._prompt,
        )

    async def _archive_step(
        self, turn: ActiveTurn, event: AgentEvent, trace: AgentTrace
    ) -> AsyncIterator[Event]:
        """Archive one agent step through ``turn``; the loop's end closes the turn."""
        if isinstance(event, LoopEnded | LoopFailed):
            async for public in self._finish(turn, event, trace):
                yield public
            return
        shown = await turn.record(event)
        self.record.state = turn.state
        if shown is not None:
            yield shown

    async def _finish(
        self, turn: ActiveTurn, end: LoopEnded | LoopFailed, trace: AgentTrace
    ) -> AsyncIterator[Event]:
        if isinstance(end, LoopFailed):
            trace.end(answer=turn.text, error=type(end.error).__name__)
        else:
            trace.end(answer=turn.text, reason=end.reason)
        await self.record.refresh()
        yield self.record.snapshot()
        if isinstance(end, LoopFailed):
            error = end.error
            yield TurnError(str(error), type(error).__name__, turn.first, turn.last)
            return
        reason: TurnEndReason = end.reason
        yield TurnDone(reason, turn.first, turn.last, turn.text, turn.usage, turn.cost, end.message)

    async def _abandon(self, turn: ActiveTurn) -> None:
        """Archive what an interrupted turn leaves: its partial answer and unfinished calls."""
        await turn.abandon()
        self.record.state = turn.state
        turn.last = await self.record.repair_dangling() or turn.last
        await self.record.refresh()

    async def _request(self) -> ModelRequest:
        await self.record.check_kernel(self.environment.kernel)  # the kernel's facts now
        return self.environment.requests.build(self.record.state, *self._options)


def _archive_failed(error: ArchiveError) -> str:
    return (
        f"The turn stopped because the archive could not be written: {error} "
        "Everything before this point is saved; fix the problem and send the message again."
    )
