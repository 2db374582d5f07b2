"""Telemetry fixtures: the SDK's in-memory exporter and reader behind Loom's tracer, a session
on the fake Messages API (the real SDK on 127.0.0.1), and a session with an orchestrator."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from loom_jupyter import telemetry
from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.session.conversation import CoworkSession
from loom_jupyter.settings import Settings
from loom_jupyter.telemetry.otel import OtelTracer
from loom_jupyter.testing.fake_anthropic import FakeAnthropic
from loom_jupyter.tools.registry import default_registry

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.models.base import Model
    from loom_jupyter.tools.approval import Approver
    from loom_jupyter.tools.local_kernel import LocalKernel

OTEL_VARIABLES = (
    "LOOM_OTEL",
    "LOOM_TELEMETRY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_SDK_DISABLED",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
)


@pytest.fixture(autouse=True)
def _no_outside_telemetry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in OTEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield
    telemetry.use(None)


class Recorded:
    """What the tracer recorded: finished spans and metrics, in memory."""

    def __init__(self, *, capture_content: bool = False) -> None:
        self.spans_out = InMemorySpanExporter()
        self.metrics_in = InMemoryMetricReader()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.spans_out))
        meters = MeterProvider(metric_readers=[self.metrics_in])
        self.tracer = OtelTracer(provider, meters, capture_content=capture_content)
        telemetry.use(self.tracer)

    def spans(self) -> list[ReadableSpan]:
        return list(self.spans_out.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.startswith(prefix)]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        pid = parent.context.span_id
        found = [s for s in self.spans() if s.parent is not None and s.parent.span_id == pid]
        return sorted(found, key=lambda s: s.start_time or 0)

    def tree(self, root: ReadableSpan, depth: int = 0) -> list[str]:
        """``root`` and its descendants as indented names (start order)."""
        lines = ["  " * depth + root.name]
        for child in self.children(root):
            lines += self.tree(child, depth + 1)
        return lines

    def metric_points(self, name: str) -> list[Any]:
        data = self.metrics_in.get_metrics_data()
        points: list[Any] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        points += list(metric.data.data_points)
        return points


@pytest.fixture
def recorded() -> Recorded:
    return Recorded()


OpenSession = Callable[..., Awaitable[CoworkSession]]
FakeModel = Callable[[list[Any]], tuple[AnthropicModel, FakeAnthropic]]


@pytest.fixture
async def open_session(
    archive: Archive, notebook: Path, kernel: LocalKernel
) -> AsyncIterator[OpenSession]:
    """``await open_session(model, **settings)``: a session (auto approval unless given)."""
    opened: list[CoworkSession] = []

    async def factory(
        model: Model, *, approver: Approver | None = None, resume: bool = True, **settings: Any
    ) -> CoworkSession:
        settings.setdefault("approval", "auto")
        session = await CoworkSession.open(
            archive,
            notebook_path=notebook,
            settings=Settings(**settings),
            model=model,
            kernel=kernel,
            tools=default_registry(),
            approver=approver,
            resume=resume,
        )
        opened.append(session)
        return session

    yield factory
    for session in opened:
        await session.close()


@pytest.fixture
async def fake_model() -> AsyncIterator[FakeModel]:
    """``fake_model(script)``: the real SDK against the fake Messages API on 127.0.0.1."""
    import anthropic

    servers: list[FakeAnthropic] = []
    clients: list[Any] = []

    def make(script: list[Any]) -> tuple[AnthropicModel, FakeAnthropic]:
        server = FakeAnthropic(script, default="error").start()
        servers.append(server)
        key = "sk-ant-telemetry-tests-00000"
        client = anthropic.AsyncAnthropic(api_key=key, base_url=server.base_url)
        clients.append(client)
        return AnthropicModel(Settings(), client=client, retry_backoff_seconds=0.01), server

    yield make
    for client in clients:
        await client.close()
    for server in servers:
        server.stop()
