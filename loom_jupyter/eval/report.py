"""``--html``: one self-contained page (no script, no network) with a plot of pass rate
against cost per run, drawn as inline SVG, and the results' table.

Each run is a point: this run's trials (trial 1, 2, ...: one pass over the suite each)
and, with a baseline, the baseline's. Every text that came from a task, a model or an
error is escaped (:func:`html.escape`).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from loom_jupyter.eval.compare import scores

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.eval.compare import Comparison
    from loom_jupyter.eval.results import RunResults, TrialResult

__all__ = ["Point", "html_report", "run_points"]

Point = tuple[str, float, float]  # label, cost per run ($), pass rate (0..1)
_W, _H, _PAD = 560, 320, 48
_STYLE = (
    "body{font:14px system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
    "td.n{text-align:right}.pass{color:#176f2c}.fail{color:#a3201b}"
)


def run_points(label: str, results: Sequence[TrialResult]) -> list[Point]:
    """One point per trial number: the suite's pass rate and total cost in that pass."""
    points = []
    for trial in sorted({r.trial for r in results}):
        ran = [r for r in results if r.trial == trial]
        rate = sum(r.passed for r in ran) / len(ran)
        points.append((f"{label} #{trial}", sum(r.cost_usd for r in ran), rate))
    return points


def html_report(
    run: RunResults, baseline: RunResults | None = None, comparison: Comparison | None = None
) -> str:
    """The page."""
    points = run_points("this run", run.results)
    if baseline is not None:
        points += run_points("baseline", baseline.results)
    title = f"loom-jupyter eval: {run.suite}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>Loom {_e(run.loom_version)} · model {_e(run.model or 'default')} · "
        f"{run.trials} trial(s) · started {_e(run.started_at)}"
        f"{' · interrupted' if run.interrupted else ''}</p>",
        "<h2>Pass rate against cost per run</h2>",
        plot(points),
        "<h2>Tasks</h2>",
        _task_table(run.results, comparison),
        "<h2>Trials</h2>",
        _trial_table(run.results),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def plot(points: Sequence[Point]) -> str:
    """An SVG scatter plot: cost per run (x, dollars) against pass rate (y, 0-100 %)."""
    most = max((cost for _, cost, _ in points), default=0.0) or 1.0
    inner_w, inner_h = _W - 2 * _PAD, _H - 2 * _PAD
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="pass rate against cost per run">',
        f'<rect x="{_PAD}" y="{_PAD}" width="{inner_w}" height="{inner_h}" fill="none" '
        'stroke="#888"/>',
        f'<text x="{_W / 2}" y="{_H - 8}" text-anchor="middle">cost per run ($)</text>',
        f'<text x="14" y="{_H / 2}" transform="rotate(-90 14 {_H / 2})" '
        'text-anchor="middle">pass rate (%)</text>',
    ]
    for percent in (0, 25, 50, 75, 100):
        y = _PAD + inner_h * (1 - percent / 100)
        out.append(f'<text x="{_PAD - 6}" y="{y + 4:.1f}" text-anchor="end">{percent}</text>')
    for tick in (0.0, most / 2, most):
        x = _PAD + inner_w * tick / most
        out.append(f'<text x="{x:.1f}" y="{_H - _PAD + 16}" text-anchor="middle">{tick:.4g}</text>')
    for label, cost, rate in points:
        x, y = _PAD + inner_w * cost / most, _PAD + inner_h * (1 - rate)
        colour = "#1f5fbf" if label.startswith("this run") else "#c06a00"
        out.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}">'
            f"<title>{_e(label)}: {rate:.0%} at ${cost:.4f}</title></circle>"
            f'<text x="{x + 8:.1f}" y="{y - 6:.1f}" font-size="11">{_e(label)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def _task_table(results: Sequence[TrialResult], comparison: Comparison | None) -> str:
    head = "<tr><th>task</th><th>passed</th><th>vs baseline</th><th>cost $</th><th>time s</th></tr>"
    rows = [head]
    for task, score in scores(results).items():
        change = comparison.changes.get(task, "new") if comparison is not None else ""
        rows.append(
            f'<tr><td>{_e(task)}</td><td class="n">{score.passed}/{score.trials}</td>'
            f'<td>{_e(change)}</td><td class="n">{score.cost_usd:.4f}</td>'
            f'<td class="n">{score.wall_s:.1f}</td></tr>'
        )
    return "<table>" + "\n".join(rows) + "</table>"


def _trial_table(results: Sequence[TrialResult]) -> str:
    head = (
        "<tr><th>task</th><th>trial</th><th>outcome</th><th>reason</th><th>turns</th>"
        "<th>tool calls</th><th>tokens in/out/cache read/write</th><th>cost $</th>"
        "<th>time s</th><th>model</th></tr>"
    )
    rows = [head]
    for r in results:
        tools = ", ".join(f"{name} {n}" for name, n in sorted(r.tool_calls.items()))
        t = r.tokens
        rows.append(
            f'<tr><td>{_e(r.task)}</td><td class="n">{r.trial}</td>'
            f'<td class="{"pass" if r.passed else "fail"}">{_e(r.outcome)}</td>'
            f'<td>{_e(r.reason)}</td><td class="n">{r.turns}</td><td>{_e(tools)}</td>'
            f'<td class="n">{t.input}/{t.output}/{t.cache_read}/{t.cache_write}</td>'
            f'<td class="n">{r.cost_usd:.4f}</td><td class="n">{r.wall_s:.1f}</td>'
            f"<td>{_e(r.model)}</td></tr>"
        )
    return "<table>" + "\n".join(rows) + "</table>"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
