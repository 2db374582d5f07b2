"""``loom-jupyter eval SUITE``: run a suite of notebook tasks and print (and write) results.

The flags are DESIGN §17's. Exit status: 0 when every trial passed, 1 when some failed,
2 on a usage problem (no such suite, a bad task.yaml or baseline), 130 after Ctrl-C (the
trials that finished are written to ``--out`` first).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter._version import __version__
from loom_jupyter.controls import visible

if TYPE_CHECKING:
    from loom_jupyter.eval.results import RunResults, TrialResult
    from loom_jupyter.eval.tasks import Task

__all__ = ["add_eval", "run_eval"]

ABOUT = (
    "Measure Loom on notebook tasks: each task in a fresh folder and a fresh real kernel with "
    "Loom loaded — its setup cells run, its prompts sent as %%cowork (or %%delegate) turns, "
    "then its check run in the same kernel. Prints a table (with a progress bar while it "
    "runs) and writes RESULTS (JSON): per task and trial passed, the check's error, turns, "
    "tool calls by name, tokens, cost, wall time, model, read from each task's archive. "
    "A timeout, a dead kernel, an API error or a refused approval ends that task with its "
    "reason; the run goes on."
)
EXAMPLES = """examples:
  loom-jupyter eval builtin                       the suite shipped with Loom
  loom-jupyter eval my-tasks/ --trials 3 --jobs 2 --out today.json
  loom-jupyter eval my-tasks/ --model claude-opus-5-5 --baseline today.json --html report.html

a task is a folder holding task.yaml (its other files are copied beside the notebook):
  name: clean-sales
  setup: ["import pandas as pd", "df = pd.read_csv('sales.csv')"]
  prompt: "Drop the test rows and save the result as df_clean"   # or a list: one turn each
  magic: cowork                      # cowork | delegate
  approval: auto                     # auto | ask | read-only (nobody answers: ask means no)
  check: "assert len(df_clean) == 97 and (df_clean.region != 'TEST').all()"
  timeout_s: 300
extensions: restart_before: [2] (restart the kernel before turn 2), new_session_before: [2]
(%cowork new before turn 2), notebook: ["cell", ...] (a page holds these cells: the cell
tools work, and the check sees notebook_cells)
"""


def add_eval(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``eval`` subcommand."""
    sub = commands.add_parser(
        "eval",
        help="run a suite of notebook tasks against Loom and compare runs",
        description=ABOUT,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.add_argument("suite", metavar="SUITE", help="a folder of task folders, or `builtin`")
    sub.add_argument("--model", metavar="ID", help="the model (default: your Loom setting)")
    sub.add_argument(
        "--trials", type=_positive, default=1, metavar="N", help="runs of each task (default 1)"
    )
    sub.add_argument(
        "--jobs",
        type=_positive,
        default=1,
        metavar="N",
        help="tasks run at once, each in its own kernel (default 1)",
    )
    sub.add_argument("--out", metavar="RESULTS", help="write RESULTS (JSON) here")
    sub.add_argument(
        "--baseline",
        metavar="RESULTS",
        help="an earlier RESULTS: each task better/worse/same, and cost and time ratios",
    )
    sub.add_argument(
        "--html", metavar="PATH", help="write a self-contained report with a pass-rate/cost plot"
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def run_eval(args: argparse.Namespace) -> int:
    """Run the suite; the exit status."""
    from loom_jupyter.eval.results import read_results
    from loom_jupyter.eval.tasks import SuiteError, load_suite

    try:
        tasks = load_suite(args.suite)
        baseline = read_results(Path(args.baseline)) if args.baseline else None
    except SuiteError as error:
        print(f"loom-jupyter eval: {visible(str(error))}", file=sys.stderr)
        return 2
    started = _now()
    results, interrupted = _run(tasks, args)
    run = _results(args, started, results, interrupted)
    _report(run, baseline, args)
    if interrupted:
        return 130
    return 0 if results and all(r.passed for r in results) else 1


def _run(tasks: list[Task], args: argparse.Namespace) -> tuple[list[TrialResult], bool]:
    from loom_jupyter.eval.runner import RunOptions, run_suite
    from loom_jupyter.eval.table import EvalProgress

    progress = EvalProgress(len(tasks) * args.trials, sys.stderr, live=sys.stderr.isatty())
    finished: list[TrialResult] = []
    stop = threading.Event()

    def done(result: TrialResult) -> None:
        finished.append(result)
        progress.finish(result)

    try:
        results = run_suite(
            tasks,
            trials=args.trials,
            jobs=args.jobs,
            options=RunOptions(model=args.model),
            stop=stop,
            on_start=lambda task, trial: progress.start(task.name, trial),
            on_done=done,
        )
    except KeyboardInterrupt:
        progress.close()
        print("loom-jupyter eval: interrupted; keeping the trials that finished", file=sys.stderr)
        return finished, True
    progress.close()
    return results, False


def _results(
    args: argparse.Namespace, started: str, results: list[TrialResult], interrupted: bool
) -> RunResults:
    from loom_jupyter.eval.results import RunResults

    return RunResults(
        suite=str(args.suite),
        model=args.model,
        trials=args.trials,
        loom_version=__version__,
        started_at=started,
        finished_at=_now(),
        interrupted=interrupted,
        results=tuple(results),
    )


def _report(run: RunResults, baseline: RunResults | None, args: argparse.Namespace) -> None:
    from loom_jupyter.eval.compare import compare
    from loom_jupyter.eval.report import html_report
    from loom_jupyter.eval.results import write_results
    from loom_jupyter.eval.table import results_table, summary_lines

    comparison = compare(run.results, baseline.results) if baseline is not None else None
    if run.results:
        print(results_table(run.results, comparison))
    for line in summary_lines(run.results, comparison):
        print(line)
    if args.out:
        write_results(Path(args.out), run)
        print(f"RESULTS written to {visible(args.out)}")
    if args.html:
        Path(args.html).write_text(html_report(run, baseline, comparison), encoding="utf-8")
        print(f"report written to {visible(args.html)}")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
