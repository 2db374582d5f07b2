"""Telemetry is off by default: no span, no OpenTelemetry module; and when it is on."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

from loom_jupyter.settings import Settings, TelemetrySettings
from loom_jupyter.telemetry import NOOP, telemetry_config, tracer_for
from loom_jupyter.telemetry.config import TelemetryConfig

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

PERSON = Settings(telemetry=TelemetrySettings(endpoint="http://person:4318"))
POLICY = TelemetrySettings(endpoint="http://hub:4318", headers=(("x-team", "data"),))


def test_off_unless_an_endpoint_is_set() -> None:
    assert tracer_for(Settings()) is NOOP
    assert not telemetry_config(Settings(), env={}).enabled
    only_endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert not telemetry_config(Settings(), env=only_endpoint).enabled  # LOOM_OTEL=1 too
    assert telemetry_config(Settings(), env={**only_endpoint, "LOOM_OTEL": "1"}) == (
        TelemetryConfig("env")
    )


def test_the_policy_wins_and_otel_sdk_disabled_wins_over_all() -> None:
    assert telemetry_config(PERSON, env={}).endpoint == "http://person:4318"
    ruled = telemetry_config(PERSON, managed=POLICY, env={})
    assert (ruled.source, ruled.endpoint) == ("policy", "http://hub:4318")
    assert ruled.headers == POLICY.headers
    person_captures = Settings(telemetry=TelemetrySettings("http://p", capture_content=True))
    assert telemetry_config(person_captures, env={}).capture_content
    no_content = TelemetrySettings(capture_content=False)
    assert not telemetry_config(person_captures, managed=no_content, env={}).capture_content
    assert not telemetry_config(PERSON, managed=POLICY, env={"OTEL_SDK_DISABLED": "true"}).enabled


def test_a_project_never_sets_the_telemetry_endpoint() -> None:
    loaded = Settings.load(None, project={"telemetry": TelemetrySettings("http://evil:4318")})
    assert loaded.telemetry is None


PROBE = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from loom_jupyter.archive import Archive
    from loom_jupyter.archive.paths import archive_path_for
    from loom_jupyter.models.scripted import ScriptedModel, text, tool_call
    from loom_jupyter.session.conversation import CoworkSession
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.local_kernel import LocalKernel
    from loom_jupyter.tools.registry import default_registry

    async def main():
        notebook = Path(sys.argv[1])
        model = ScriptedModel([tool_call("run_python", {"code": "x = 1"}), text("done")])
        async with Archive.open(archive_path_for(notebook)) as archive:
            session = await CoworkSession.open(
                archive, notebook_path=notebook, settings=Settings(approval="auto"),
                model=model, kernel=LocalKernel(), tools=default_registry(),
            )
            events = [e async for e in session.send("set x", front="cell")]
            assert events[-1].kind == "turn_done", events[-1]
            await session.close()

    asyncio.run(main())
    print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
    """
)


def test_a_turn_with_telemetry_off_imports_no_opentelemetry_module(tmp_path: Path) -> None:
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(notebook)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_managed_policy_files_turn_it_on_for_every_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no ``managed=`` given, the seams' ``tracer_for`` reads the policy files: a hub's
    ``telemetry.endpoint`` in ``{sys.prefix}/etc/loom/managed.yaml`` sends every turn there."""
    import loom_jupyter.telemetry as telemetry

    root = tmp_path / "env"
    (root / "etc" / "loom").mkdir(parents=True)
    (root / "etc" / "loom" / "managed.yaml").write_text(
        "telemetry: {endpoint: http://hub-collector:4318, capture_content: false}\n"
    )
    monkeypatch.setattr(sys, "prefix", str(root))
    expected = telemetry_config(Settings(), managed=TelemetrySettings("http://hub-collector:4318"))
    assert (expected.source, expected.endpoint) == ("policy", "http://hub-collector:4318")
    built = object()
    monkeypatch.setitem(telemetry._built, expected, built)  # type: ignore[arg-type]

    assert tracer_for(Settings()) is built  # the policy's collector, not NOOP
    (root / "etc" / "loom" / "managed.yaml").write_text("approval: ask\n")
    assert tracer_for(Settings()) is NOOP  # the policy no longer names one
