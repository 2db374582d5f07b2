"""The run for the terminal: a progress line while it runs, then a table (stdlib only).

On a terminal the progress bar redraws itself in place; elsewhere (a pipe, a CI log) each
finished trial gets a line of its own. Task names and reasons are made terminal-safe
(:func:`loom_jupyter.controls.visible`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, TextIO

from loom_jupyter.controls import visible
from loom_jupyter.eval.compare import scores

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.eval.compare import Comparison
    from loom_jupyter.eval.results import TrialResult

__all__ = ["EvalProgress", "results_table", "summary_lines"]

_BAR = 24


class EvalProgress:
    """Counts trials as they start and end, and shows it on ``out``."""

    def __init__(self, total: int, out: TextIO, *, live: bool) -> None:
        self.total, self.out, self.live = total, out, live
        self.started = self.done = self.passed = 0
        self._lock = threading.Lock()

    def start(self, task: str, trial: int) -> None:
        with self._lock:
            self.started += 1
            if self.live:
                self._draw(f"{task} #{trial}")

    def finish(self, result: TrialResult) -> None:
        with self._lock:
            self.done += 1
            self.passed += result.passed
            if self.live:
                self._draw(f"{result.task} #{result.trial}: {result.outcome}")
            else:
                mark = "PASS" if result.passed else "FAIL"
                line = f"[{self.done}/{self.total}] {mark} {result.task} #{result.trial}"
                print(visible(f"{line}: {result.reason} ({result.wall_s:.1f} s)"), file=self.out)
            self.out.flush()

    def close(self) -> None:
        if self.live:
            print(file=self.out, flush=True)

    def _draw(self, latest: str) -> None:
        filled = _BAR * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (_BAR - filled)
        running = self.started - self.done
        line = f"[{bar}] {self.done}/{self.total} done, {running} running, {self.passed} passed"
        print("\r\x1b[K" + visible(f"{line} · {latest}")[:160], end="", file=self.out)


def results_table(results: Sequence[TrialResult], comparison: Comparison | None = None) -> str:
    """One row per task: passes over trials, turns, tools, tokens, cost, time, and why the
    last failing trial failed; a ``vs base`` column with a baseline."""
    headers = ["task", "pass", "turns", "tools", "tokens in/out", "cost $", "time s", "why"]
    if comparison is not None:
        headers.insert(2, "vs base")
    rows = [_row(task, results, comparison) for task in scores(results)]
    return _aligned(headers, rows)


def _row(task: str, results: Sequence[TrialResult], comparison: Comparison | None) -> list[str]:
    trials = [r for r in results if r.task == task]
    failed = [r for r in trials if not r.passed]
    row = [
        task,
        f"{sum(r.passed for r in trials)}/{len(trials)}",
        str(sum(r.turns for r in trials)),
        str(sum(sum(r.tool_calls.values()) for r in trials)),
        f"{sum(r.tokens.input for r in trials)}/{sum(r.tokens.output for r in trials)}",
        f"{sum(r.cost_usd for r in trials):.4f}",
        f"{sum(r.wall_s for r in trials):.1f}",
        failed[-1].reason if failed else "",
    ]
    if comparison is not None:
        row.insert(2, comparison.changes.get(task, "new"))
    return row


def summary_lines(results: Sequence[TrialResult], comparison: Comparison | None) -> list[str]:
    """The run's totals, and with a baseline the pairwise summary."""
    passed = sum(r.passed for r in results)
    cost = sum(r.cost_usd for r in results)
    lines = [
        f"passed {passed}/{len(results)} trials · cost ${cost:.4f} · "
        f"time {sum(r.wall_s for r in results):.1f} s"
    ]
    if comparison is not None:
        lines.append(
            f"vs baseline: {comparison.better} better, {comparison.worse} worse, "
            f"{comparison.same} same · cost ×{_times(comparison.cost_ratio)} · "
            f"time ×{_times(comparison.time_ratio)}"
        )
    return lines


def _times(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}"


def _aligned(headers: list[str], rows: list[list[str]]) -> str:
    cells = [headers, *[[visible(c).replace("\n", " ") for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    widths[-1] = min(widths[-1], 70)
    lines = []
    for row in cells:
        parts = [
            _fit(c, w, left=i == 0 or i == len(row) - 1)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(parts).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fit(cell: str, width: int, *, left: bool) -> str:
    if len(cell) > width:
        cell = cell[: width - 1] + "…"
    return cell.ljust(width) if left else cell.rjust(width)
