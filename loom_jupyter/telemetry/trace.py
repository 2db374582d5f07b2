"""The interface the turn, the sub-agents and delegations talk to, and its no-op.

Each seam holds one :class:`AgentTrace` (an ``invoke_agent`` span) and shows it the agent
loop's own typed events (:meth:`AgentTrace.see`): the model calls and tool calls become its
``chat`` and ``execute_tool`` children from what the loop already reports (usage, latency,
whether the person was asked). With telemetry off every method is a no-op and no
OpenTelemetry module is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from loom_jupyter.engine.agent import AgentEvent
    from loom_jupyter.messages import Usage

__all__ = ["NOOP", "AgentTrace", "NoTrace", "NoTracer", "Tracer"]


class AgentTrace(Protocol):
    """One ``invoke_agent`` span: a turn, a delegation, or one attempt at a subtask."""

    def see(self, event: AgentEvent) -> None:
        """An event of the agent loop: model calls and tool calls become child spans."""

    def chat(
        self, *, model: str, usage: Usage, latency_ms: float, stop_reason: str, purpose: str
    ) -> None:
        """A model call made outside the loop (a delegation's plan, a verdict), now done."""

    def subagent(self, *, subtask_id: str, attempt: int, session_id: str) -> AgentTrace:
        """A child ``invoke_agent`` span: a sub-agent's attempt at a subtask."""

    def end(self, *, answer: str = "", error: str = "", reason: str = "") -> None:
        """Close the span (``error``: why it failed; ``reason``: how it ended)."""


class Tracer(Protocol):
    """Starts the top spans; ``NOOP`` when telemetry is off."""

    @property
    def enabled(self) -> bool:
        """Whether spans are recorded."""

    def turn(
        self, *, session_id: str, notebook: str, front: str, approval: str, prompt: str
    ) -> AgentTrace:
        """The ``invoke_agent loom`` span of one turn (``prompt`` kept only with contents)."""

    def delegation(
        self, *, task_id: str, session_id: str, notebook: str, goal: str, approval: str
    ) -> AgentTrace:
        """The ``invoke_agent loom`` span of one ``%delegate`` run."""


class NoTrace:
    """Records nothing."""

    def see(self, event: AgentEvent) -> None:
        """Nothing."""

    def chat(
        self, *, model: str, usage: Usage, latency_ms: float, stop_reason: str, purpose: str
    ) -> None:
        """Nothing."""

    def subagent(self, *, subtask_id: str, attempt: int, session_id: str) -> AgentTrace:
        """Itself."""
        return self

    def end(self, *, answer: str = "", error: str = "", reason: str = "") -> None:
        """Nothing."""


class NoTracer:
    """Telemetry off: every span is :class:`NoTrace`."""

    _trace = NoTrace()

    @property
    def enabled(self) -> bool:
        """Never."""
        return False

    def turn(
        self, *, session_id: str, notebook: str, front: str, approval: str, prompt: str
    ) -> AgentTrace:
        """A span that records nothing."""
        return self._trace

    def delegation(
        self, *, task_id: str, session_id: str, notebook: str, goal: str, approval: str
    ) -> AgentTrace:
        """A span that records nothing."""
        return self._trace


NOOP: Tracer = NoTracer()
