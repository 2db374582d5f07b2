"""A dead collector costs a turn nothing and gives one warning, never an error in a cell."""

from __future__ import annotations

import logging
import socket
from typing import TYPE_CHECKING

from loom_jupyter import telemetry
from loom_jupyter.models.scripted import ScriptedModel, text, tool_call
from loom_jupyter.telemetry.config import TelemetryConfig
from loom_jupyter.telemetry.otel import OtelTracer

if TYPE_CHECKING:
    import pytest

    from .conftest import OpenSession


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _said(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "loom_jupyter.telemetry"]


async def test_the_turn_completes_and_the_failure_is_said_once(
    open_session: OpenSession, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # seconds: the retries end soon
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")  # batches leave at flush only
    config = TelemetryConfig("config", f"http://127.0.0.1:{_closed_port()}")
    tracer = OtelTracer.from_config(config)
    telemetry.use(tracer)
    replies = [tool_call("run_python", {"code": "x = 1"}), text("done")] * 2
    session = await open_session(ScriptedModel(replies))
    caplog.set_level(logging.DEBUG)
    for message in ("set x", "again"):
        before = len(_said(caplog))
        events = [e async for e in session.send(message, front="cell")]
        assert events[-1].kind == "turn_done"
        assert len(_said(caplog)) == before  # the turn did not wait for the collector
        tracer.flush(10_000)  # the batch goes out now (on the SDK's thread) and fails
    said = _said(caplog)
    assert len(said) == 1
    assert "did not take" in said[0].getMessage()
    assert said[0].levelno == logging.WARNING
    exporter_lines = [r for r in caplog.records if r.name.startswith("opentelemetry")]
    assert exporter_lines == []  # the exporter's own error lines stay out of the notebook
    tracer.providers[0].shutdown()  # type: ignore[attr-defined]
    tracer.providers[1].shutdown()  # type: ignore[attr-defined]
