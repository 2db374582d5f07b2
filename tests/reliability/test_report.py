"""docs/reliability.md is exactly what the generator renders from the suite's tables."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from . import report
from .report import PAGE, render

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_the_reliability_page_is_current() -> None:
    assert PAGE.is_file(), "run: python -m tests.reliability.report"
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/reliability.md is stale: run `python -m tests.reliability.report` and commit it"
    )


def test_kill_trials_without_results_say_not_measured_yet(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(report, "KILL_TRIALS", tmp_path / "missing.json")
    assert "Kill -9 trials: not measured yet" in report.render()


def test_kill_trials_rows_become_a_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    results = tmp_path / "kill_trials.json"
    results.write_text(json.dumps({"rows": [["kill -9 trials", "10"]], "trials": []}))
    monkeypatch.setattr(report, "KILL_TRIALS", results)
    assert "| kill -9 trials | 10 |" in report.render()
