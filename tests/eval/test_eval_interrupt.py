"""Ctrl-C during `loom-jupyter eval`: what finished is written, the rest is dropped, the
kernels are stopped and the command exits 130."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from typing import TYPE_CHECKING

import pytest

from .conftest import cli_env, eval_command, write_task

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel


def until(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    """Wait for ``condition`` (polled), failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "waited too long"
        time.sleep(0.05)


def test_ctrl_c_writes_the_trials_that_finished(fake: FakeAnthropic, tmp_path: Path) -> None:
    suite, out = tmp_path / "suite", tmp_path / "partial.json"
    write_task(
        suite, "quick", 'name: quick\nprompt: "TASK:pass go"\ncheck: "assert answer == 42"\n'
    )
    write_task(suite, "stuck", 'name: stuck\nprompt: "TASK:hold go"\ncheck: "pass"\n')
    process = subprocess.Popen(
        eval_command(str(suite), "--jobs", "2", "--out", str(out)),
        env=cli_env(fake, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        lines = iter(process.stderr.readline, "")
        first = next(line for line in lines if "[1/2]" in line)  # one line per finished trial
        assert "PASS quick" in first, first
        until(lambda: fake.held("block") == 1)  # the other one streams, held by the fake
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        fake.release("block")
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr
    run = json.loads(out.read_text())
    assert run["interrupted"] is True
    assert [(r["task"], r["outcome"]) for r in run["results"]] == [("quick", "passed")]
    assert "quick" in stdout
