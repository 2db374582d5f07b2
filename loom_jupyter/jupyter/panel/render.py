"""The live panel drawn from its :class:`~loom_jupyter.host.services.panel_data.PanelData`.

One display bundle: HTML (escaped, with inline SVG sparklines, the agent's edit cards and
the session state folded in a ``<details>``) and the same as plain text, for terminals,
consoles and a saved notebook read as text; the numbers themselves are the host's.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from loom_jupyter.jupyter.cell.diffs import diff_html
from loom_jupyter.models.pricing import cost_text

if TYPE_CHECKING:
    from loom_jupyter.host.services.panel_data import PanelData

__all__ = ["panel_bundle", "panel_html", "panel_text", "sparkline_svg"]


def sparkline_svg(values: list[float], *, width: int = 160, height: int = 28) -> str:
    """A tiny inline SVG polyline of ``values`` (no plotting library)."""
    if not values:
        return ""
    top = max(values) or 1.0
    step = width / max(len(values) - 1, 1)
    coords = " ".join(
        f"{i * step:.1f},{height - 2 - (v / top) * (height - 4):.1f}" for i, v in enumerate(values)
    )
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        ' style="vertical-align:middle">'
        f'<polyline fill="none" stroke="#1565c0" stroke-width="1.5" points="{coords}"/></svg>'
    )


def panel_text(data: PanelData) -> str:
    """The panel as plain text (terminals)."""
    lines = [
        f"Session: {data.title or '(none yet)'}  [{data.activity}]",
        f"Prompts: {data.prompts:,} ({data.turns:,} archive rows)   Tokens in/out/cache: "
        f"{data.input_tokens:,}/{data.output_tokens:,}/{data.cache_tokens:,}   "
        f"Cost: {cost_text(data.cost_usd, unknown=data.unpriced)}",
    ]
    if data.points:
        lines.append("Tokens per prompt: " + ", ".join(f"{t:,}" for t, _ in data.points[-12:]))
    if data.tasks:
        lines.append("Delegated tasks: " + "; ".join(data.tasks))
    if data.task_text:
        lines.append(data.task_text)
    lines += [f"Notebook: {summary}" for summary, _ in data.edits]
    if data.state_yaml.strip():
        lines.append("State:\n" + data.state_yaml.rstrip())
    return "\n".join(lines)


def _labelled(label: str, values: list[float]) -> str:
    """A label and its sparkline centred on one line (an inline SVG sits on the baseline)."""
    return (
        '<span style="display:inline-flex;align-items:center;gap:4px;margin-right:12px">'
        f"{html.escape(label)}{sparkline_svg(values)}</span>"
    )


def panel_html(data: PanelData) -> str:
    """The headline of the panel as HTML (escaped)."""
    esc = html.escape
    tokens = [float(t) for t, _ in data.points]
    costs = [c for _, c in data.points]
    rows = [
        f"<b>{esc(data.title or '(no session yet)')}</b> "
        f'<span style="color:#666">— {esc(data.activity)}</span>',
        f"prompts <b>{data.prompts:,}</b> <span style='color:#666'>({data.turns:,} rows)</span>"
        f" · tokens in <b>{data.input_tokens:,}</b> / out "
        f"<b>{data.output_tokens:,}</b> / cache <b>{data.cache_tokens:,}</b> · "
        f"cost <b>{html.escape(cost_text(data.cost_usd, unknown=data.unpriced))}</b>",
    ]
    if tokens:
        rows.append(_labelled("tokens/prompt", tokens) + _labelled("cost/prompt", costs))
    if data.tasks:
        rows.append("delegated: " + "; ".join(esc(t) for t in data.tasks))
    if data.task_html:
        rows.append(data.task_html)
    for summary, diff in data.edits:
        card = diff_html(diff) if diff else ""
        rows.append(f'<div data-loom="edit-card">✎ {esc(summary)}{card}</div>')
    return '<div style="line-height:1.6">' + "<br>".join(rows) + "</div>"


def panel_bundle(data: PanelData) -> dict[str, str]:
    """The whole panel as one display: HTML and its plain-text twin."""
    yaml = html.escape(data.state_yaml.strip() or "(empty)")
    state = (
        '<details data-loom="panel-state"><summary>Session state</summary>'
        f"<pre style='margin:0'>{yaml}</pre></details>"
    )
    box = (
        '<div data-loom="panel" style="border:1px solid #ccc;padding:4px 8px">'
        f"{panel_html(data)}{state}</div>"
    )
    return {"text/html": box, "text/plain": panel_text(data)}
