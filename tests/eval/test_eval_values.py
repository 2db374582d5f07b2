"""The harness's values without kernels: task.yaml, the baseline comparison, the report."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.eval.compare import compare
from loom_jupyter.eval.measure import Tokens
from loom_jupyter.eval.report import html_report
from loom_jupyter.eval.results import RunResults, TrialResult, read_results, write_results
from loom_jupyter.eval.table import results_table, summary_lines
from loom_jupyter.eval.tasks import SuiteError, builtin_folder, load_suite

if TYPE_CHECKING:
    from pathlib import Path


def result(
    task: str,
    passed: bool,
    *,
    trial: int = 1,
    cost: float = 0.1,
    wall: float = 10.0,
    reason: str = "",
) -> TrialResult:
    return TrialResult(
        task=task,
        trial=trial,
        passed=passed,
        outcome="passed" if passed else "failed",
        reason=reason or ("the check passed" if passed else "the check raised NameError: x"),
        error=None if passed else "NameError: x",
        turns=1,
        tool_calls={"run_python": 2},
        tokens=Tokens(10, 5, 1, 2),
        cost_usd=cost,
        wall_s=wall,
        model="claude-<b>",
        loom_version="0.1.0",
    )


def run_of(*results: TrialResult) -> RunResults:
    return RunResults(
        suite="s",
        model=None,
        trials=1,
        loom_version="0.1.0",
        started_at="t0",
        finished_at="t1",
        results=results,
    )


def test_a_task_yaml_with_a_slip_is_named(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.yaml").write_text("name: t\nprompt: hi\ncheck: pass\nmagik: cowork\n")
    with pytest.raises(SuiteError, match=r"unknown key.*magik"):
        load_suite(tmp_path)
    (tmp_path / "t" / "task.yaml").write_text("name: t\nprompt: hi\ncheck: pass\nmagic: chat\n")
    with pytest.raises(SuiteError, match="`magic` must be one of cowork, delegate"):
        load_suite(tmp_path)
    with pytest.raises(SuiteError, match="no such folder"):
        load_suite(tmp_path / "missing")


def test_the_builtin_suite_parses_and_ships_its_data() -> None:
    tasks = load_suite("builtin")
    assert len(tasks) >= 18
    assert {t.magic for t in tasks} == {"cowork", "delegate"}
    assert any(t.restart_before for t in tasks)
    assert any(t.notebook for t in tasks)
    for task in tasks:
        for name in ("sales.csv", "customers.csv", "prices.csv"):
            if f"'{name}'" in " ".join(task.setup) + task.prompts[0]:
                assert (task.folder / name).is_file(), (task.name, name)
    assert builtin_folder().is_dir()


def test_a_baseline_comparison_counts_tasks_and_ratios() -> None:
    now = [
        result("a", True, cost=0.2, wall=5),
        result("b", False),
        result("c", True),
        result("d", True),
    ]
    then = [result("a", False, cost=0.1, wall=10), result("b", True), result("c", True)]
    comparison = compare(now, then)
    assert comparison.changes == {"a": "better", "b": "worse", "c": "same", "d": "new"}
    assert (comparison.better, comparison.worse, comparison.same) == (1, 1, 1)
    assert comparison.cost_ratio == pytest.approx(0.4 / 0.3)
    assert comparison.time_ratio == pytest.approx(25 / 30)
    table = results_table(now, comparison)
    assert "vs base" in table.splitlines()[0]
    assert "better" in table
    assert summary_lines(now, comparison)[1] == (
        "vs baseline: 1 better, 1 worse, 1 same · cost ×1.33 · time ×0.83"
    )


def test_results_round_trip_through_json(tmp_path: Path) -> None:
    run = run_of(result("a", True), result("b", False))
    write_results(tmp_path / "r.json", run)
    again = read_results(tmp_path / "r.json")
    assert again.results == run.results
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(SuiteError, match="not a RESULTS file"):
        read_results(tmp_path / "bad.json")


def test_the_report_escapes_every_text_and_draws_each_run() -> None:
    evil = '<img src=x onerror="alert(1)">'
    run = run_of(result(evil, False, reason=f"raised {evil}"), result("ok", True))
    base = run_of(result(evil, True, trial=1), result("ok", True, trial=1))
    page = html_report(run, base, compare(run.results, base.results))
    assert "<img" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "claude-&lt;b&gt;" in page
    assert page.count("<circle") == 2  # this run's trial and the baseline's
    assert "<script" not in page
    assert "://" not in page.replace("http://www.w3.org/2000/svg", "")
