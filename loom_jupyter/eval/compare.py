"""A run against a baseline run: per task better, worse or same, and the pairwise summary.

A task's score is its pass rate over its trials. It is ``better`` when this run's rate is
higher, ``worse`` when lower, ``same`` when equal; ``new`` when the baseline lacks it.
The cost and time ratios compare the tasks both runs have: this run's total over the
baseline's (``None`` when the baseline's is zero).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.eval.results import TrialResult

__all__ = ["Change", "Comparison", "TaskScore", "compare", "scores"]

Change = Literal["better", "worse", "same", "new"]


@dataclass(frozen=True)
class TaskScore:
    """One task's trials summed up."""

    task: str
    trials: int
    passed: int
    cost_usd: float
    wall_s: float

    @property
    def rate(self) -> float:
        return self.passed / self.trials if self.trials else 0.0


@dataclass(frozen=True)
class Comparison:
    """Each task's change, and the pairwise summary."""

    changes: dict[str, Change]
    better: int
    worse: int
    same: int
    cost_ratio: float | None
    time_ratio: float | None


def scores(results: Sequence[TrialResult]) -> dict[str, TaskScore]:
    """Each task's pass count, cost and time over its trials (in first-seen order)."""
    grouped: dict[str, list[TrialResult]] = {}
    for result in results:
        grouped.setdefault(result.task, []).append(result)
    return {
        task: TaskScore(
            task,
            len(trials),
            sum(t.passed for t in trials),
            sum(t.cost_usd for t in trials),
            sum(t.wall_s for t in trials),
        )
        for task, trials in grouped.items()
    }


def compare(run: Sequence[TrialResult], baseline: Sequence[TrialResult]) -> Comparison:
    """``run`` set against ``baseline``, task by task."""
    now, then = scores(run), scores(baseline)
    changes = {task: _change(score, then.get(task)) for task, score in now.items()}
    shared = [task for task in now if task in then]
    return Comparison(
        changes=changes,
        better=sum(c == "better" for c in changes.values()),
        worse=sum(c == "worse" for c in changes.values()),
        same=sum(c == "same" for c in changes.values()),
        cost_ratio=_ratio(
            sum(now[t].cost_usd for t in shared), sum(then[t].cost_usd for t in shared)
        ),
        time_ratio=_ratio(sum(now[t].wall_s for t in shared), sum(then[t].wall_s for t in shared)),
    )


def _change(now: TaskScore, then: TaskScore | None) -> Change:
    if then is None:
        return "new"
    if now.rate > then.rate:
        return "better"
    if now.rate < then.rate:
        return "worse"
    return "same"


def _ratio(now: float, then: float) -> float | None:
    return now / then if then > 0 else None
