"""Run a suite: each trial of each task in a fresh folder and a fresh real kernel.

A trial (:func:`run_trial`) copies the task's files into a temp folder beside an empty
notebook, starts a python3 kernel there with Loom loaded (``%load_ext loom_jupyter``), the
session's approval mode the task's, and archives under the trial's own folder; it runs the
setup cells, sends each prompt as a ``%%cowork`` (or ``%%delegate``) cell, then runs
``check`` in the same kernel. Whatever goes wrong ends the trial with an outcome and its
reason (:class:`~loom_jupyter.eval.results.TrialResult`); only Ctrl-C (``stop``) ends it
with no result. :func:`run_suite` runs ``jobs`` trials at once, each with its own kernel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter._version import __version__
from loom_jupyter.eval.kernel import EvalKernel, TaskCell
from loom_jupyter.eval.measure import find_archive, measure
from loom_jupyter.eval.page import NotebookPage
from loom_jupyter.eval.results import Outcome, TrialResult

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping, Sequence

    from loom_jupyter.eval.tasks import Task

__all__ = ["NOTEBOOK", "RunOptions", "kernel_env", "run_suite", "run_trial"]

NOTEBOOK = "notebook.ipynb"
_WAKE_S = 0.2
"""How often the waiting main thread wakes: Linux may hand Ctrl-C to a trial's thread, and
Python runs the handler (``KeyboardInterrupt``) only when the main thread next runs."""
_DROPPED = ("LOOM_APPROVAL", "LOOM_ARCHIVE_DIR", "KERNEL_LOOM_ARCHIVE_DIR", "JPY_SESSION_NAME")


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What every trial shares: ``--model`` and the environment the kernels start from."""

    model: str | None = None
    env: Mapping[str, str] | None = None  # default: this process's


@dataclass(frozen=True)
class _Ending:
    outcome: Outcome
    reason: str
    error: str | None = None


class _Stopped(Exception):
    """Ctrl-C: the trial ends with no result."""


def kernel_env(
    base: Mapping[str, str], *, notebook: Path, archive_dir: Path, task: Task, model: str | None
) -> dict[str, str]:
    """The kernel's environment: the person's (their key, their settings), with the task's
    approval, ``--model``, the notebook, and archives kept in the trial's folder."""
    env = {k: v for k, v in base.items() if k not in _DROPPED}
    env.update(
        JPY_SESSION_NAME=str(notebook),
        LOOM_APPROVAL=task.approval,
        LOOM_ARCHIVE_DIR=str(archive_dir),
    )
    if model:
        env["LOOM_MODEL"] = model
    return env


def run_trial(
    task: Task, trial: int, options: RunOptions, stop: threading.Event
) -> TrialResult | None:
    """One trial of ``task`` (``None`` when ``stop`` was set before it ended)."""
    started = time.monotonic()
    prefix = re.sub(r"[^A-Za-z0-9_.-]", "_", task.name[:40])
    with tempfile.TemporaryDirectory(prefix=f"loom-eval-{prefix}-") as temp:
        root = Path(temp)
        folder, archives = root / "work", root / "archive"
        notebook = _prepare(task, folder)
        env = kernel_env(
            os.environ if options.env is None else options.env,
            notebook=notebook,
            archive_dir=archives,
            task=task,
            model=options.model,
        )
        attempt = _Attempt(task, folder, env, started + task.timeout_s, stop, archives)
        try:
            ending = attempt.run()
        except _Stopped:
            return None
        measures = measure(find_archive(archives, NOTEBOOK))
    return TrialResult.of(
        measures=measures,
        task=task.name,
        trial=trial,
        passed=ending.outcome == "passed",
        outcome=ending.outcome,
        reason=ending.reason,
        error=ending.error,
        wall_s=round(time.monotonic() - started, 3),
        model=measures.model or options.model or "",
        loom_version=__version__,
    )


def run_suite(
    tasks: Sequence[Task],
    *,
    trials: int,
    jobs: int,
    options: RunOptions,
    stop: threading.Event,
    on_start: Callable[[Task, int], None] | None = None,
    on_done: Callable[[TrialResult], None] | None = None,
) -> list[TrialResult]:
    """Every trial of every task, ``jobs`` at a time; what finished, in suite order.

    Ctrl-C in the calling thread sets ``stop``: running trials end (their kernels are
    stopped), queued ones never start, and the finished ones are returned.
    """
    done: list[TrialResult] = []

    def one(task: Task, trial: int) -> TrialResult | None:
        if stop.is_set():
            return None
        if on_start is not None:
            on_start(task, trial)
        return run_trial(task, trial, options, stop)

    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="loom-eval")
    try:  # from the first submit: a Ctrl-C even then stops what has started
        pending: set[Future[TrialResult | None]] = set()
        for trial in range(1, trials + 1):
            pending.update(pool.submit(one, task, trial) for task in tasks)
        while pending:
            finished, pending = wait(pending, timeout=_WAKE_S, return_when=FIRST_COMPLETED)
            for future in finished:
                result = future.result()
                if result is not None:
                    done.append(result)
                    if on_done is not None:
                        on_done(result)
    except KeyboardInterrupt:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    order = {task.name: i for i, task in enumerate(tasks)}
    return sorted(done, key=lambda r: (order.get(r.task, 0), r.trial))


def _prepare(task: Task, folder: Path) -> Path:
    """The trial's folder: the task's files beside a notebook holding the setup cells."""
    folder.mkdir(parents=True)
    for path in task.files():
        if path.is_dir():
            shutil.copytree(path, folder / path.name)
        else:
            shutil.copy2(path, folder / path.name)
    notebook = folder / NOTEBOOK
    cells: list[dict[str, object]] = [
        {
            "cell_type": "code",
            "id": f"setup-{i}",
            "metadata": {},
            "source": source,
            "outputs": [],
            "execution_count": None,
        }
        for i, source in enumerate(task.notebook or task.setup)
    ]
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    notebook.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return notebook


class _Attempt:
    """The steps of one trial in its kernel; each returns an ending, or ``None`` to go on."""

    def __init__(
        self,
        task: Task,
        folder: Path,
        env: dict[str, str],
        deadline: float,
        stop: threading.Event,
        archives: Path,
    ) -> None:
        self.task, self.archives, self.stop = task, archives, stop
        self.page = NotebookPage.holding(task.notebook) if task.notebook is not None else None
        self.kernel = EvalKernel(
            folder,
            env,
            deadline=deadline,
            stop=stop,
            page=self.page,
            log=archives.parent / "kernel.log",
        )

    def run(self) -> _Ending:
        ended_badly = True
        try:
            ending = self._open() or self._turns() or self._check()
            ended_badly = ending.outcome in ("timeout", "kernel_died")
            return ending
        finally:
            self.kernel.shutdown(now=ended_badly or self.stop.is_set())

    def _open(self) -> _Ending | None:
        """Start the kernel, load Loom, open the page, run the setup cells."""
        ending = self._ended(self.kernel.start(), "the kernel's start")
        if ending is not None:
            return ending
        loaded = self.kernel.run("%load_ext loom_jupyter")
        if loaded.status == "error":
            return _Ending("harness_error", f"%load_ext loom_jupyter raised {loaded.error}")
        ending = self._ended(loaded, "%load_ext loom_jupyter")
        if ending is not None:
            return ending
        self.kernel.open_page()
        for number, code in enumerate(self.task.setup, 1):
            ran = self.kernel.run(code)
            if ran.status == "error":
                return _Ending("setup_failed", f"setup cell {number} raised {ran.error}")
            ending = self._ended(ran, f"setup cell {number}")
            if ending is not None:
                return ending
        return None

    def _turns(self) -> _Ending | None:
        for number, prompt in enumerate(self.task.prompts, 1):
            ending = self._before(number) or self._turn(number, prompt)
            if ending is not None:
                return ending
        return None

    def _before(self, number: int) -> _Ending | None:
        if number in self.task.restart_before:
            self.kernel.shutdown()
            ending = self._open()
            if ending is not None:
                return ending
        if number in self.task.new_session_before:
            return self._ended(self.kernel.run("%cowork new"), f"%cowork new before turn {number}")
        return None

    def _turn(self, number: int, prompt: str) -> _Ending | None:
        what = f"turn {number}"
        before = measure(find_archive(self.archives, NOTEBOOK)).requests
        ran = self.kernel.run(f"%%{self.task.magic}\n{prompt}")
        ending = self._ended(ran, what)
        if ending is not None:
            return ending
        if ran.refused:
            return _Ending("approval_refused", f"approval refused in {what}: {_asked(ran)}")
        after = measure(find_archive(self.archives, NOTEBOOK))
        if after.last_error is not None:
            return _Ending("api_error", f"API error in {what}: {after.last_error}")
        if after.requests == before:
            said = _last_line(ran.output) or ran.error or "no output"
            return _Ending("no_request", f"{what} sent no request: {said}")
        return None

    def _check(self) -> _Ending:
        if self.page is not None:
            cells = self.kernel.run(f"notebook_cells = {self.page.sources()!r}")
            ending = self._ended(cells, "the check")
            if ending is not None:
                return ending
        ran = self.kernel.run(self.task.check)
        if ran.status == "ok":
            return _Ending("passed", "the check passed")
        ending = self._ended(ran, "the check")
        if ending is not None:
            return ending
        return _Ending("failed", f"the check raised {ran.error}", ran.error)

    def _ended(self, ran: TaskCell, what: str) -> _Ending | None:
        """The trial's end when ``ran`` timed out, died or was stopped."""
        if ran.status == "stopped":
            raise _Stopped
        if ran.status == "timeout":
            return _Ending("timeout", f"timed out after {self.task.timeout_s:g} s in {what}")
        if ran.status == "dead":
            return _Ending("kernel_died", f"the kernel died in {what}")
        return None


def _asked(ran: TaskCell) -> str:
    """What the agent asked to do: the question shown above the stdin prompt, else the prompt."""
    shown = [line.strip() for line in ran.output.splitlines() if "wants to run" in line]
    prompt = ran.refused[0].strip()
    return (shown[0] if shown else prompt or "?")[:300]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
