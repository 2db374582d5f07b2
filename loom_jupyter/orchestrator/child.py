"""One attempt at a subtask: the ordinary tool-use loop in its own child session.

The child session's first user message holds the subtask description verbatim
(the pinned contract); every model message, tool call and result is written
through to the archive as it happens, exactly as a conversation's are, and its
final text is the subtask's result. A cancelled attempt archives its partial
answer and repairs unanswered tool calls before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from loom_jupyter.engine.agent import AgentLoop, LoopEnded, LoopFailed, ToolCallDone
from loom_jupyter.engine.cache_policy import CacheRhythm
from loom_jupyter.engine.context import ContextWindow, WindowConfig
from loom_jupyter.engine.events import TextDelta, ToolStarted, UsageEvent
from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.engine.state import SessionState
from loom_jupyter.messages import TextBlock, TurnDraft, Usage
from loom_jupyter.models.wire import server_tool_params
from loom_jupyter.session.shape import RequestShape
from loom_jupyter.session.turn import ActiveTurn
from loom_jupyter.session.turn_writer import TurnWriter
from loom_jupyter.telemetry import NOOP
from loom_jupyter.tools.approval import ApprovalPolicy
from loom_jupyter.tools.base import ToolContext

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.engine.agent import AgentEvent
    from loom_jupyter.models.base import Model, ModelEvent, ModelRequest
    from loom_jupyter.settings import Settings
    from loom_jupyter.telemetry import AgentTrace
    from loom_jupyter.tools.base import FileEffect, KernelBridge, VariableEffect
    from loom_jupyter.tools.registry import ToolRegistry

__all__ = ["ChildEnd", "ChildObserver", "ChildOutcome", "ChildRun"]

ChildEnd: TypeAlias = Literal["done", "incomplete", "failed"]
_END_KINDS: dict[str, ChildEnd] = {"iteration_limit": "incomplete", "protected_change": "failed"}
"""How a sub-agent's loop end counts for its subtask (a protected change undone: failed)."""

SUB_AGENT_RHYTHM = CacheRhythm(prior_weight=0.0)
"""A sub-agent's requests follow each other at machine speed and end with its subtask:
no pause to expect, so its history is cached for 5 minutes (1.25x, not the hour's 2x)."""

_SUBAGENT_NOTE = (
    "<subagent>You are a sub-agent doing one subtask of a larger delegated goal, in the "
    "person's live notebook kernel. Do the subtask with your tools, then end with a short "
    "report: what you did, the variables and files you created, and the facts that show the "
    "acceptance criteria are met. Do not ask questions: nobody can answer them.</subagent>"
)


class ChildObserver(Protocol):
    """What the orchestrator watches while a child runs (for progress and the budget)."""

    def on_activity(self) -> None:
        """The model's answer started arriving."""

    def on_tool(self, name: str) -> None:
        """A tool call is about to run."""

    def on_usage(self, usage: Usage, cost: float, model: str) -> None:
        """A model request on ``model`` finished with this usage (cost 0.0: unpriced)."""


@dataclass(frozen=True)
class ChildOutcome:
    """How one attempt ended; ``text`` is the final answer (the subtask's result)."""

    end: ChildEnd
    text: str
    message: str
    usage: Usage
    cost_usd: float
    effects: tuple[FileEffect | VariableEffect, ...]


class _Watched:
    """The model, telling the observer when a response starts (its first stream event).

    The API caches a prompt prefix once a response to it has started, so this is
    the moment staggered sub-agents may go: their requests then read that cache.
    """

    def __init__(self, model: Model, started: Callable[[], None]) -> None:
        self._model, self._started = model, started

    @property
    def name(self) -> str:
        return self._model.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for event in self._model.stream(request):
            self._started()
            yield event

    async def count_tokens(self, request: ModelRequest) -> int:
        return await self._model.count_tokens(request)


class ChildRun:
    """Runs one attempt in the child session ``session_id`` (already created)."""

    def __init__(
        self,
        *,
        archive: Archive,
        session_id: str,
        model: Model,
        tools: ToolRegistry,
        settings: Settings,
        kernel: KernelBridge,
        notebook_path: Path,
        observer: ChildObserver,
        policy: ApprovalPolicy | None = None,
        shape: RequestShape | None = None,
        trace: AgentTrace | None = None,
    ) -> None:
        self._trace = trace or NOOP.turn(
            session_id=session_id, notebook="", front="", approval="", prompt=""
        )  # the attempt's invoke_agent span (telemetry/): a no-op unless given
        self._shape = shape or RequestShape(SYSTEM_PROMPT, settings.max_output_tokens)
        self._window = ContextWindow(
            WindowConfig.from_settings(settings),
            system=self._shape.system,
            tools=tools.specs(),
            rhythm=SUB_AGENT_RHYTHM,
        )
        self._writer = TurnWriter(archive, self._window)
        self._writer.session_id = session_id
        watched = _Watched(model, observer.on_activity)
        self._loop = AgentLoop(
            model=watched,
            registry=tools,
            policy=policy or ApprovalPolicy("auto"),
            settings=settings,
        )
        self._ctx = ToolContext(
            notebook_dir=notebook_path.parent,
            settings=settings,
            kernel=kernel,
            notebook_path=notebook_path,
            archive=archive,
            session_id=session_id,
            skills=self._shape.skills,  # the parent's list, which the system prompt names
        )
        self._model, self._settings, self._observer = model, settings, observer
        self._effects: list[FileEffect | VariableEffect] = []

    async def run(self, message: str) -> ChildOutcome:
        """Archive ``message`` as the first user turn and run the loop to its end."""
        draft = TurnDraft(role="user", content=message, blocks=(TextBlock(message),))
        first = await self._writer.append(draft)
        turn = ActiveTurn(self._writer, SessionState(), first=first)
        agent = self._loop.run(self._request, replace(self._ctx, asked_at=first))
        try:
            async for event in agent:
                self._trace.see(event)
                if isinstance(event, LoopEnded | LoopFailed):
                    return self._ended(self._outcome(turn, event))
                self._observe(event)
                shown = await turn.record(event)
                if isinstance(shown, UsageEvent):
                    self._observer.on_usage(shown.usage, shown.cost_usd, shown.model)
        except asyncio.CancelledError:
            self._trace.end(error="cancelled")
            await asyncio.shield(self._abandon(turn))
            raise
        finally:
            self._trace.end()
            await agent.aclose()
        return ChildOutcome(
            "failed", "", "The sub-agent's loop ended early.", turn.usage, turn.cost, ()
        )

    def _ended(self, outcome: ChildOutcome) -> ChildOutcome:
        error = "" if outcome.end == "done" else outcome.end
        self._trace.end(answer=outcome.text, error=error, reason=outcome.end)
        return outcome

    def _request(self) -> ModelRequest:
        shape = self._shape
        request = self._window.build(
            model=self._model.name,
            state_text=_SUBAGENT_NOTE,
            max_tokens=shape.max_tokens,
            thinking=shape.thinking,
            effort=shape.effort,
        )
        server_tools = server_tool_params(self._settings)
        return replace(request, server_tools=server_tools) if server_tools else request

    def _observe(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            self._observer.on_activity()
        elif isinstance(event, ToolStarted):
            self._observer.on_tool(event.name)
        elif isinstance(event, ToolCallDone):
            if not event.output.is_error:
                self._effects.extend(event.output.effects)
        elif event.kind == "model_call_done":
            self._observer.on_activity()

    async def _abandon(self, turn: ActiveTurn) -> None:
        await turn.abandon()
        await self._writer.repair_dangling()

    def _outcome(self, turn: ActiveTurn, end: LoopEnded | LoopFailed) -> ChildOutcome:
        final = next((t for t in reversed(turn.texts) if t.strip()), "")
        effects = tuple(self._effects)
        if isinstance(end, LoopFailed):
            return ChildOutcome("failed", final, str(end.error), turn.usage, turn.cost, effects)
        kind = _END_KINDS.get(end.reason, "done")
        return ChildOutcome(kind, final, end.message, turn.usage, turn.cost, effects)
