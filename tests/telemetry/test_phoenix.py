"""One %delegate run exported over OTLP/HTTP to a real backend on 127.0.0.1 — Arize Phoenix
(``phoenix serve``, from the ``[test]`` extra) — and read back through its REST API."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter import telemetry
from loom_jupyter.models.scripted import ScriptedModel
from loom_jupyter.orchestrator import attach
from loom_jupyter.telemetry.config import TelemetryConfig
from loom_jupyter.telemetry.otel import OtelTracer

from .test_delegation import _route

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import OpenSession

STARTUP_SECONDS = 300  # its database migrations take a minute on a loaded 2-core machine


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``phoenix serve`` on free 127.0.0.1 ports in a temp dir; its base URL."""
    folder = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_WORKING_DIR": str(folder),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (folder / "phoenix.log").open("w")
    command = [sys.executable, "-m", "phoenix.server.main", "serve"]
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert server.poll() is None, (folder / "phoenix.log").read_text()[-3000:]
            try:
                _get(f"{base}/v1/projects")
                break
            except OSError:
                assert time.monotonic() < deadline, "phoenix did not start in time"
                time.sleep(1)
        yield base
    finally:
        server.terminate()
        server.wait(30)
        log.close()


def _spans(base: str, wanted: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while True:
        found = _get(f"{base}/v1/projects/default/spans?limit=1000")["data"]
        if len(found) >= wanted or time.monotonic() > deadline:
            return list(found)
        time.sleep(0.5)


async def test_a_delegation_reaches_phoenix_as_one_trace(
    phoenix: str, open_session: OpenSession, tmp_path: Path
) -> None:
    tracer = OtelTracer.from_config(TelemetryConfig("config", phoenix))
    telemetry.use(tracer)
    session = await open_session(ScriptedModel(_route), delegate_stagger=False)
    outcome = await attach(session).start("Add up some numbers")
    assert outcome.status == "passed"
    tracer.flush(30_000)

    spans = _spans(phoenix, 12)
    names = sorted(s["name"] for s in spans)
    assert names.count("invoke_agent loom") == 1
    assert names.count("invoke_agent loom-subagent") == 2
    assert names.count("execute_tool run_python") == 2
    assert names.count("chat scripted") == 7
    by_id = {s["context"]["span_id"]: s for s in spans}
    (root,) = [s for s in spans if not s.get("parent_id")]
    assert root["name"] == "invoke_agent loom"
    assert root["attributes"]["loom.task.id"] == outcome.task_id
    assert len({s["context"]["trace_id"] for s in spans}) == 1  # one trace
    for span in spans:
        if span["name"].startswith("execute_tool"):
            assert by_id[span["parent_id"]]["name"] == "invoke_agent loom-subagent"
            assert span["attributes"]["gen_ai.tool.name"] == "run_python"
    chats = [s for s in spans if s["name"].startswith("chat")]
    assert all(s["attributes"]["gen_ai.operation.name"] == "chat" for s in chats)
    assert all("gen_ai.usage.output_tokens" in s["attributes"] for s in chats)
