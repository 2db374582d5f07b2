"""Loom's spans and metrics through the OpenTelemetry SDK (imported only when telemetry is on).

Names follow the GenAI semantic conventions, as DESIGN §16 pins them: ``invoke_agent loom``
per turn, ``chat MODEL`` per model call, ``execute_tool NAME`` per tool call,
``invoke_agent loom-subagent`` per attempt at a delegated subtask; the histograms
``gen_ai.client.token.usage`` and ``gen_ai.client.operation.duration``. Contents (the
prompt, the answer, a call's arguments and result) are set only with ``capture_content``,
redacted like the archive (``tools/output.py``) and clipped.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from loom_jupyter.messages import TextBlock, ToolUseBlock
from loom_jupyter.models.pricing import cost_usd
from loom_jupyter.telemetry.trace import AgentTrace
from loom_jupyter.tools.output import redact_secrets

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram, MeterProvider
    from opentelemetry.trace import Span, TracerProvider

    from loom_jupyter.engine.agent import AgentEvent, ModelCallDone, ModelCallFailed
    from loom_jupyter.engine.gate import ToolCallDone
    from loom_jupyter.messages import Usage
    from loom_jupyter.telemetry.config import TelemetryConfig

__all__ = ["CONTENT_MAX_CHARS", "OtelTracer"]

CONTENT_MAX_CHARS = 16_000
"""A captured content attribute at most (a collector may refuse large spans)."""
_PROVIDER = "anthropic"
_SCOPE = "loom_jupyter"


class OtelTracer:
    """Spans and metrics through the given providers (the SDK's, or an application's own)."""

    def __init__(
        self,
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider,
        *,
        capture_content: bool = False,
    ) -> None:
        self.tracer = tracer_provider.get_tracer(_SCOPE)
        meter = meter_provider.get_meter(_SCOPE)
        self.tokens: Histogram = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens per model call"
        )
        self.duration: Histogram = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Model call duration"
        )
        self.capture_content = capture_content
        self.providers = (tracer_provider, meter_provider)

    @classmethod
    def from_config(cls, config: TelemetryConfig) -> OtelTracer:
        """Providers exporting over OTLP/HTTP in batches (``export.py``)."""
        from loom_jupyter.telemetry.export import providers

        spans, metrics = providers(config)
        return cls(spans, metrics, capture_content=config.capture_content)

    @property
    def enabled(self) -> bool:
        """Always: this tracer records."""
        return True

    def flush(self, timeout_millis: int = 30_000) -> None:
        """Export what is queued now (a benchmark's or a test's end; shutdown does it too)."""
        spans, metrics = self.providers
        getattr(spans, "force_flush", lambda _: None)(timeout_millis)
        getattr(metrics, "force_flush", lambda _: None)(timeout_millis)

    def turn(
        self, *, session_id: str, notebook: str, front: str, approval: str, prompt: str
    ) -> AgentTrace:
        """The ``invoke_agent loom`` span of one turn."""
        attributes = {"loom.notebook": notebook, "loom.front": front}
        agent = self._agent("loom", session_id, attributes, approval, parent=None)
        agent.content("gen_ai.input.messages", _messages("user", prompt))
        return agent

    def delegation(
        self, *, task_id: str, session_id: str, notebook: str, goal: str, approval: str
    ) -> AgentTrace:
        """The ``invoke_agent loom`` span of one ``%delegate`` run."""
        attributes = {"loom.notebook": notebook, "loom.front": "delegate", "loom.task.id": task_id}
        agent = self._agent("loom", session_id, attributes, approval, parent=None)
        agent.content("gen_ai.input.messages", _messages("user", goal))
        return agent

    def _agent(
        self,
        name: str,
        session_id: str,
        attributes: dict[str, Any],
        approval: str,
        parent: Span | None,
    ) -> Agent:
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            f"invoke_agent {name}",
            context=context,
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.provider.name": _PROVIDER,
                "gen_ai.agent.name": name,
                "gen_ai.conversation.id": session_id,
                **attributes,
            },
        )
        return Agent(self, span, approval)


class Agent(AgentTrace):
    """One ``invoke_agent`` span and the model and tool calls under it."""

    def __init__(self, tracer: OtelTracer, span: Span, approval: str) -> None:
        self._tracer, self.span, self._approval = tracer, span, approval
        self._tools: dict[str, _Tool] = {}
        self._ended = False

    def content(self, key: str, value: str) -> None:
        """Set a content attribute, only with ``capture_content`` (redacted, clipped)."""
        if self._tracer.capture_content and value:
            self.span.set_attribute(key, _clean(value))

    def see(self, event: AgentEvent) -> None:
        """Model calls and tool calls of the loop become child spans."""
        kind = event.kind
        if kind == "model_call_done":
            self._chat_done(event)  # type: ignore[arg-type]
        elif kind == "model_call_failed":
            self._chat_failed(event)  # type: ignore[arg-type]
        elif kind in ("approval_needed", "tool_started"):
            tool = self._tool(event.call_id, event.name)  # type: ignore[union-attr]
            tool.asked = tool.asked or kind == "approval_needed"
            tool.started = tool.started or kind == "tool_started"
        elif kind == "tool_call_done":
            self._tool_done(event)  # type: ignore[arg-type]

    def chat(
        self, *, model: str, usage: Usage, latency_ms: float, stop_reason: str, purpose: str
    ) -> None:
        """A model call made outside the loop, now done."""
        span = self._chat_span(model, latency_ms)
        span.set_attribute("loom.purpose", purpose)
        self._chat_end(span, model, model, usage, stop_reason, latency_ms)

    def subagent(self, *, subtask_id: str, attempt: int, session_id: str) -> AgentTrace:
        """An attempt at a subtask: ``invoke_agent loom-subagent`` under this span."""
        attributes = {"loom.subtask.id": subtask_id, "loom.subtask.attempt": attempt}
        return self._tracer._agent(
            "loom-subagent", session_id, attributes, self._approval, parent=self.span
        )

    def end(self, *, answer: str = "", error: str = "", reason: str = "") -> None:
        """Close the span and any tool span left open (an interrupted call)."""
        if self._ended:
            return
        self._ended = True
        for tool in list(self._tools.values()):
            tool.span.set_status(Status(StatusCode.ERROR, "not finished"))
            tool.span.end()
        self._tools.clear()
        self.content("gen_ai.output.messages", _messages("assistant", answer))
        if reason:
            self.span.set_attribute("loom.end_reason", reason)
        if error:
            self.span.set_attribute("error.type", error)
            self.span.set_status(Status(StatusCode.ERROR, error))
        self.span.end()

    # -- model calls ----------------------------------------------------------

    def _chat_span(self, model: str, latency_ms: float) -> Span:
        started = time.time_ns() - int(latency_ms * 1_000_000)
        return self._tracer.tracer.start_span(
            f"chat {model}",
            context=trace.set_span_in_context(self.span),
            kind=SpanKind.CLIENT,
            start_time=started,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": _PROVIDER,
                "gen_ai.request.model": model,
            },
        )

    def _chat_done(self, done: ModelCallDone) -> None:
        span = self._chat_span(done.model, done.latency_ms)
        self._set_content(span, "gen_ai.output.messages", _output(done))
        self._chat_end(span, done.model, done.model, done.usage, done.stop_reason, done.latency_ms)

    def _chat_end(
        self, span: Span, request: str, response: str, usage: Usage, stop: str, ms: float
    ) -> None:
        span.set_attributes(
            {
                "gen_ai.response.model": response,
                "gen_ai.usage.input_tokens": usage.total_input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": usage.cache_read_input_tokens,
                "gen_ai.usage.cache_creation.input_tokens": usage.cache_creation_input_tokens,
                "gen_ai.response.finish_reasons": [stop],
                "loom.cost_usd": cost_usd(response, usage),
            }
        )
        span.end()
        base = _metric_attributes(request, response)
        tokens = self._tracer.tokens
        tokens.record(usage.total_input_tokens, {**base, "gen_ai.token.type": "input"})
        tokens.record(usage.output_tokens, {**base, "gen_ai.token.type": "output"})
        self._tracer.duration.record(ms / 1000.0, base)

    def _chat_failed(self, failed: ModelCallFailed) -> None:
        span = self._chat_span(failed.model, failed.latency_ms)
        error = type(failed.error).__name__
        span.set_attribute("error.type", error)
        span.set_status(Status(StatusCode.ERROR, str(failed.error)[:500]))
        span.end()
        attributes = {**_metric_attributes(failed.model, failed.model), "error.type": error}
        self._tracer.duration.record(failed.latency_ms / 1000.0, attributes)

    # -- tool calls -----------------------------------------------------------

    def _tool(self, call_id: str, name: str) -> _Tool:
        tool = self._tools.get(call_id)
        if tool is None:
            span = self._tracer.tracer.start_span(
                f"execute_tool {name}",
                context=trace.set_span_in_context(self.span),
                kind=SpanKind.INTERNAL,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": call_id,
                    "gen_ai.tool.type": "function",
                },
            )
            tool = self._tools[call_id] = _Tool(span)
        return tool

    def _tool_done(self, done: ToolCallDone) -> None:
        call, output = done.call, done.output
        tool = self._tools.pop(call.id, None) or self._tool_now(call)
        span = tool.span
        span.set_attribute("loom.approval", self._approval_word(tool))
        self._set_content(span, "gen_ai.tool.call.arguments", _json(call.input))
        self._set_content(span, "gen_ai.tool.call.result", output.text_content)
        if output.is_error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, output.summary[:500]))
        span.end()

    def _approval_word(self, tool: _Tool) -> str:
        """asked (the person said yes), denied (refused or not run), auto or allowed."""
        if not tool.started:
            return "denied"
        if tool.asked:
            return "asked"
        return "auto" if self._approval == "auto" else "allowed"

    def _tool_now(self, call: ToolUseBlock) -> _Tool:
        tool = self._tool(call.id, call.name)
        del self._tools[call.id]
        return tool

    def _set_content(self, span: Span, key: str, value: str) -> None:
        if self._tracer.capture_content and value:
            span.set_attribute(key, _clean(value))


class _Tool:
    def __init__(self, span: Span) -> None:
        self.span = span
        self.asked = False
        self.started = False


def _metric_attributes(request: str, response: str) -> dict[str, str]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": _PROVIDER,
        "gen_ai.request.model": request,
        "gen_ai.response.model": response,
    }


def _messages(role: str, text: str) -> str:
    if not text:
        return ""
    return _json([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _output(done: ModelCallDone) -> str:
    parts: list[dict[str, Any]] = []
    for block in done.blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "content": block.text})
        elif isinstance(block, ToolUseBlock):
            parts.append(
                {"type": "tool_call", "id": block.id, "name": block.name, "arguments": block.input}
            )
    message = {"role": "assistant", "parts": parts, "finish_reason": done.stop_reason}
    return _json([message]) if parts else ""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _clean(text: str) -> str:
    """Redacted like the archive, then clipped to :data:`CONTENT_MAX_CHARS`."""
    clean = redact_secrets(text)
    if len(clean) <= CONTENT_MAX_CHARS:
        return clean
    return clean[: CONTENT_MAX_CHARS - 1] + "…"
