"""`loom-jupyter eval` end to end: real kernels, the real CLI, the fake Messages API."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from .conftest import run_eval, write_task

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

SUITE = {
    "a-pass": """
        name: a-pass
        setup: ["base = 6"]
        prompt: "TASK:pass set answer"
        check: "assert answer == 42"
        timeout_s: 240
    """,
    "b-fail": """
        name: b-fail <script>alert(1)</script>
        prompt: "TASK:fail set answer"
        check: "assert answer == 42"
        timeout_s: 240
    """,
    "c-timeout": """
        name: c-timeout
        setup: ["import time; time.sleep(600)"]
        prompt: "TASK:pass never sent"
        check: "pass"
        timeout_s: 12
    """,
    "d-die": """
        name: d-die
        prompt: "TASK:die please"
        check: "pass"
        timeout_s: 240
    """,
    "e-apierror": """
        name: e-apierror
        prompt: "TASK:apierror hello"
        check: "pass"
        timeout_s: 240
    """,
    "f-refuse": """
        name: f-refuse
        prompt: "TASK:refuse set answer"
        approval: ask
        check: "pass"
        timeout_s: 240
    """,
    "g-edit": """
        name: g-edit
        notebook: ["x = 1", "y = x + 1"]
        setup: ["x = 1"]
        prompt:
          - "TASK:edit the second cell"
        check: "assert notebook_cells == ['x = 1', 'y = x + 2'], notebook_cells"
        timeout_s: 240
    """,
}
FAIL_NAME = "b-fail <script>alert(1)</script>"


def baseline(path: Path) -> None:
    """An earlier run: a-pass failed then (now better), b-fail passed (now worse)."""

    def result(task: str, passed: bool, cost: float) -> dict[str, object]:
        return {
            "task": task,
            "trial": 1,
            "passed": passed,
            "outcome": "passed" if passed else "failed",
            "reason": "",
            "error": None,
            "turns": 1,
            "tool_calls": {},
            "cost_usd": cost,
            "tokens": {"input": 1, "output": 1, "cache_read": 0, "cache_write": 0},
            "wall_s": 10.0,
            "model": "claude-sonnet-5-5",
            "loom_version": "0.0.1",
        }

    results = [result("a-pass", False, 0.01), result(FAIL_NAME, True, 0.01)]
    results += [result(name, False, 0.01) for name in ("c-timeout", "d-die", "e-apierror")]
    data = {
        "format": "loom-eval-results/1",
        "suite": "old",
        "model": None,
        "trials": 1,
        "loom_version": "0.0.1",
        "started_at": "",
        "finished_at": "",
        "results": results,
    }
    path.write_text(json.dumps(data))


def test_a_scripted_suite_ends_every_task_with_its_outcome(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    for folder, yaml in SUITE.items():
        write_task(suite, folder, yaml)
    out, old, page = tmp_path / "results.json", tmp_path / "old.json", tmp_path / "report.html"
    baseline(old)

    done = run_eval(
        fake,
        tmp_path,
        str(suite),
        "--jobs",
        "2",
        "--out",
        str(out),
        "--baseline",
        str(old),
        "--html",
        str(page),
    )

    assert done.returncode == 1, done.stderr  # some failed
    run = json.loads(out.read_text())
    assert run["format"] == "loom-eval-results/1"
    assert run["interrupted"] is False
    by_task = {r["task"]: r for r in run["results"]}
    assert {name: r["outcome"] for name, r in by_task.items()} == {
        "a-pass": "passed",
        FAIL_NAME: "failed",
        "c-timeout": "timeout",
        "d-die": "kernel_died",
        "e-apierror": "api_error",
        "f-refuse": "approval_refused",
        "g-edit": "passed",
    }
    passed = by_task["a-pass"]
    assert passed["passed"] is True
    assert passed["error"] is None
    assert passed["turns"] == 1
    assert passed["tool_calls"] == {"run_python": 1}
    assert passed["tokens"]["input"] > 0
    assert passed["tokens"]["output"] > 0
    assert set(passed["tokens"]) == {"input", "output", "cache_read", "cache_write"}
    assert passed["cost_usd"] > 0
    assert passed["wall_s"] > 0
    assert passed["model"] == "claude-sonnet-5-5"
    assert passed["loom_version"]
    assert by_task[FAIL_NAME]["error"].startswith("NameError")
    assert "12 s" in by_task["c-timeout"]["reason"]
    assert "scripted bad request" in by_task["e-apierror"]["reason"]
    assert "run_python" in by_task["f-refuse"]["reason"]
    assert by_task["g-edit"]["tool_calls"] == {"edit_cell": 1}
    assert all(r["reason"] for r in run["results"])

    assert "vs base" in done.stdout
    assert "a-pass" in done.stdout
    assert "vs baseline: 1 better, 1 worse, 3 same" in done.stdout
    assert "[7/7]" in done.stderr  # the progress, one line per trial off a terminal

    report = page.read_text()
    assert "<script" not in report
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in report
    assert "<svg" in report
    assert "<circle" in report
    assert "http://" not in report.replace('xmlns="http://www.w3.org/2000/svg"', "")
