"""Telemetry benchmark: the per-turn cost of OpenTelemetry on and off (DESIGN §16).

Run ``python benchmarks/telemetry_bench.py`` (about a minute) or ``--quick`` (CI: a few
turns each). Each turn is a real session turn in-process: the real anthropic SDK against
the fake Messages API on 127.0.0.1, one ``run_python`` call and two model calls, archived
to a real SQLite file. Modes:

- ``off``: the default (``NOOP``: no OpenTelemetry module is imported);
- ``on, batched``: the SDK's ``BatchSpanProcessor`` and metric reader, the export discarded
  (the cost a turn pays to make and queue its spans);
- ``on, collector down``: the shipped OTLP/HTTP export to a closed 127.0.0.1 port (the turn
  must not pay for the dead collector);
- ``on, contents``: ``capture_content`` on (prompt, answers, arguments, results redacted).

Goal: ``on`` costs a turn under 2 ms more than ``off`` at the median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import (  # noqa: E402
    BatchSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

from loom_jupyter import telemetry  # noqa: E402
from loom_jupyter.archive import Archive  # noqa: E402
from loom_jupyter.archive.paths import archive_path_for  # noqa: E402
from loom_jupyter.models.anthropic import AnthropicModel  # noqa: E402
from loom_jupyter.session.conversation import CoworkSession  # noqa: E402
from loom_jupyter.settings import Settings  # noqa: E402
from loom_jupyter.telemetry.config import TelemetryConfig  # noqa: E402
from loom_jupyter.telemetry.otel import OtelTracer  # noqa: E402
from loom_jupyter.testing.fake_anthropic import FakeAnthropic  # noqa: E402
from loom_jupyter.tools.local_kernel import LocalKernel  # noqa: E402
from loom_jupyter.tools.registry import default_registry  # noqa: E402


class _Discard(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _batched(capture: bool) -> OtelTracer:
    spans = TracerProvider()
    spans.add_span_processor(BatchSpanProcessor(_Discard()))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return OtelTracer(spans, meters, capture_content=capture)


def _down() -> OtelTracer:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return OtelTracer.from_config(TelemetryConfig("config", f"http://127.0.0.1:{port}"))


def _reply(body: dict[str, Any]) -> Any:
    # The turn's newest user messages (the tool results, then the session state's block).
    tail = []
    for message in reversed(body["messages"]):
        if message["role"] != "user":
            break
        tail.extend(message["content"] if isinstance(message["content"], list) else [])
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in tail):
        return "n is 42."
    return {
        "content": [
            "Checking.",
            {"type": "tool_use", "name": "run_python", "input": {"code": "n = 6 * 7"}},
        ]
    }


async def _turns(tracer: Any, turns: int, folder: Path) -> list[float]:
    import anthropic

    telemetry.use(tracer)
    server = FakeAnthropic([], responder=_reply, default="error").start()
    client = anthropic.AsyncAnthropic(api_key="sk-ant-bench-000000000", base_url=server.base_url)
    notebook = folder / "bench.ipynb"
    notebook.write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    times: list[float] = []
    try:
        async with Archive.open(archive_path_for(notebook)) as archive:
            session = await CoworkSession.open(
                archive,
                notebook_path=notebook,
                settings=Settings(approval="auto"),
                model=AnthropicModel(Settings(), client=client),
                kernel=LocalKernel(),
                tools=default_registry(),
            )
            for index in range(turns + 1):
                started = time.perf_counter()
                async for _ in session.send(f"what is n? ({index})", front="cell"):
                    pass
                if index:  # the first turn warms caches and imports
                    times.append((time.perf_counter() - started) * 1000)
            await session.close()
    finally:
        await client.close()
        server.stop()
        telemetry.use(None)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few turns per mode (CI)")
    args = parser.parse_args()
    turns = 5 if args.quick else 40
    os.environ.setdefault("OTEL_EXPORTER_OTLP_TIMEOUT", "2")
    modes = [
        ("off", lambda: telemetry.NOOP),
        ("on, batched", lambda: _batched(False)),
        ("on, collector down", _down),
        ("on, contents", lambda: _batched(True)),
    ]
    rows = []
    for name, make in modes:
        with tempfile.TemporaryDirectory() as folder:
            times = asyncio.run(_turns(make(), turns, Path(folder)))
        rows.append((name, statistics.median(times), sorted(times)[int(len(times) * 0.95) - 1]))
    base = rows[0][1]
    print(f"Telemetry per-turn cost ({turns} turns per mode, 2 model calls + 1 tool call each)")
    print(f"{'mode':<22}{'median ms':>11}{'p95 ms':>9}{'vs off':>10}")
    for name, median, p95 in rows:
        print(f"{name:<22}{median:>11.2f}{p95:>9.2f}{median - base:>+10.2f}")


if __name__ == "__main__":
    main()
