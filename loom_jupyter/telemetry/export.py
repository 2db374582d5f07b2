"""Where spans and metrics go: the OTLP/HTTP exporters, batched off the threads of work.

The SDK's ``BatchSpanProcessor`` and ``PeriodicExportingMetricReader`` export on threads of
their own, so a turn only queues its spans. A collector that is down or slow costs the
turn nothing; its failures are told once (:class:`OneWarning`: one ``logging`` warning
until an export succeeds again), and the exporter's own per-batch error lines, logged while
Loom's exporters run, are kept out of the notebook. The standard ``OTEL_*`` variables
(headers, timeout, batch sizes, export interval, service name, resource attributes) apply.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from loom_jupyter._version import __version__

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from opentelemetry.sdk.metrics.export import MetricsData
    from opentelemetry.sdk.trace import ReadableSpan

    from loom_jupyter.telemetry.config import TelemetryConfig

__all__ = ["OneWarning", "QuietMetricExporter", "QuietSpanExporter", "providers", "resource"]

log = logging.getLogger("loom_jupyter.telemetry")
_EXPORTER_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    "opentelemetry.exporter.otlp.common.http",
)
_exporting = threading.local()


class _WhileExporting(logging.Filter):
    """Drops the exporter's records logged inside one of Loom's exports (on that thread)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_exporting, "active", False)


_FILTER = _WhileExporting()


class OneWarning:
    """Says once that the export failed, and again only after one has succeeded."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._told = False
        self._lock = threading.Lock()
        for name in _EXPORTER_LOGGERS:
            logging.getLogger(name).addFilter(_FILTER)

    @contextmanager
    def exporting(self) -> Iterator[None]:
        """Around one export: the exporter's own error lines are dropped."""
        _exporting.active = True
        try:
            yield
        finally:
            _exporting.active = False

    def result(self, ok: bool, what: str) -> None:
        """An export of ``what`` ended; the first failure after a success is told."""
        with self._lock:
            if ok:
                self._told = False
                return
            if self._told:
                return
            self._told = True
        log.warning(
            "Loom telemetry: the collector at %s did not take the %s; they are dropped until "
            "it does (the notebook is not affected). This is said once.",
            self.where,
            what,
        )


class QuietSpanExporter(SpanExporter):
    """An exporter whose failures end in :class:`OneWarning`, never in an exception."""

    def __init__(self, inner: SpanExporter, warning: OneWarning) -> None:
        self._inner, self._warning = inner, warning

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._warning.exporting():
            try:
                result = self._inner.export(spans)
            except Exception:
                result = SpanExportResult.FAILURE
        self._warning.result(result == SpanExportResult.SUCCESS, "spans")
        return result

    def shutdown(self) -> None:
        with self._warning.exporting():
            self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._inner.force_flush(timeout_millis)


class QuietMetricExporter(MetricExporter):
    """The metric exporter's counterpart of :class:`QuietSpanExporter`."""

    def __init__(self, inner: MetricExporter, warning: OneWarning) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self._inner, self._warning = inner, warning

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        with self._warning.exporting():
            try:
                result = self._inner.export(metrics_data, timeout_millis=timeout_millis)
            except Exception:
                result = MetricExportResult.FAILURE
        self._warning.result(result == MetricExportResult.SUCCESS, "metrics")
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        with self._warning.exporting():
            self._inner.shutdown(timeout_millis=timeout_millis)


def resource() -> Resource:
    """``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_SERVICE_NAME``, else ``service.name=loom``."""
    found = Resource.create({SERVICE_VERSION: __version__})
    if str(found.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        found = found.merge(Resource({SERVICE_NAME: "loom"}))
    return found


def providers(config: TelemetryConfig) -> tuple[TracerProvider, MeterProvider]:
    """The SDK's providers for ``config``: OTLP/HTTP, batched, quiet when the collector is down."""
    base = config.endpoint.rstrip("/") if config.endpoint else None
    headers = dict(config.headers) or None
    warning = OneWarning(base or "OTEL_EXPORTER_OTLP_ENDPOINT")
    spans = OTLPSpanExporter(endpoint=base and f"{base}/v1/traces", headers=headers)
    metrics = OTLPMetricExporter(endpoint=base and f"{base}/v1/metrics", headers=headers)
    found = resource()
    tracer_provider = TracerProvider(resource=found)
    tracer_provider.add_span_processor(BatchSpanProcessor(QuietSpanExporter(spans, warning)))
    reader = PeriodicExportingMetricReader(QuietMetricExporter(metrics, warning))
    return tracer_provider, MeterProvider(resource=found, metric_readers=[reader])
