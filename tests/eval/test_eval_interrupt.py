"""Ctrl-C during `loom-jupyter eval`: what finished is written, the rest is dropped, the
kernels are stopped and the command exits 130."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import cli_env, eval_command, write_task

if TYPE_CHECKING:
    from collections.abc import Callable

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


def test_ctrl_c_handed_to_a_trials_thread_still_stops_the_suite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Linux may give a process's SIGINT to any thread that does not block it: the main
    thread, waiting for trials, still turns it into a stop while the trial runs."""
    from loom_jupyter.eval import runner
    from loom_jupyter.eval.tasks import Task

    started, ended = threading.Event(), threading.Event()
    trial_thread: list[int] = []
    saw_stop: list[bool] = []

    def trial(task: Task, number: int, options: object, stop: threading.Event) -> None:
        trial_thread.append(threading.get_ident())
        started.set()
        saw_stop.append(stop.wait(60))  # a stalled model call that only Ctrl-C ends
        ended.set()

    monkeypatch.setattr(runner, "run_trial", trial)

    def press_ctrl_c() -> None:
        started.wait(60)
        signal.pthread_kill(trial_thread[0], signal.SIGINT)

    task = Task(name="stalled", folder=Path(), prompts=("go",), check="pass")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.run_suite(
                [task], trials=1, jobs=1, options=runner.RunOptions(), stop=threading.Event()
            )
    finally:
        presser.join()
        signal.signal(signal.SIGINT, previous)
    ended.wait(90)  # a Ctrl-C inside pool.submit leaves the thread unjoined: it ends by itself
    assert saw_stop == [True]


def test_a_command_a_test_starts_hears_ctrl_c_even_when_the_suite_runs_in_the_background() -> None:
    """A suite started with SIGINT ignored (``nohup pytest ... &``) still starts children
    that turn Ctrl-C into ``KeyboardInterrupt`` (tests/conftest.py), as the Ctrl-C tests
    above need: the child below is started the way they start ``loom-jupyter eval``."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert shown.stdout.strip() == "True", shown
