"""StepPuller: a turn's agent events, each pulled so that an interrupt can stop it at once."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from loom_jupyter.engine.agent import AgentEvent

__all__ = ["Interrupted", "StepPuller"]


class Interrupted(Exception):
    """The person interrupted the turn (:meth:`StepPuller.interrupt`)."""


class StepPuller:
    """Pulls each of the agent's events in its own task, which :meth:`interrupt` cancels."""

    def __init__(self) -> None:
        self.requested = False  # an interrupt was asked for during this turn
        self._step: asyncio.Future[AgentEvent] | None = None

    def interrupt(self) -> None:
        """Stop the turn: the step running now is cancelled, the next one never starts."""
        self.requested = True
        if self._step is not None:
            self._step.cancel()

    async def steps(
        self, agent: AsyncGenerator[AgentEvent, None]
    ) -> AsyncGenerator[AgentEvent, None]:
        """The agent's events; raises :class:`Interrupted` once an interrupt was asked for."""
        try:
            while True:
                if self.requested:  # asked while the last event was being archived
                    raise Interrupted
                self._step = asyncio.ensure_future(agent.__anext__())
                try:
                    event = await self._step
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if self.requested:
                        raise Interrupted from None
                    raise
                finally:
                    self._step = None
                yield event
        finally:
            await agent.aclose()
