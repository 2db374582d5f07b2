"""How a delegation looks in a cell, the panel and the sidebar (one snapshot, three forms).

Text comes from the model (subtask descriptions, reasons), so the HTML table
escapes every cell; nothing the model wrote is ever rendered as raw HTML.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom_jupyter.host.wire.protocol import TaskView
    from loom_jupyter.orchestrator import TaskSnapshot, TaskUpdate

__all__ = ["progress_line", "task_table_bundle", "task_table_html", "task_table_text", "to_sidebar"]

_COLORS = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "running": "#1565c0",
    "incomplete": "#ef6c00",
    "cancelled": "#757575",
    "skipped": "#757575",
    "pending": "#9e9e9e",
    "interrupted": "#ef6c00",
    "planning": "#1565c0",
}
_HEAD = ("subtask", "status", "attempt", "elapsed", "tokens", "last tool")


def task_table_html(snapshot: TaskSnapshot) -> str:
    """The plan as a live table: subtask, status, attempt, elapsed, tokens, last tool."""
    esc = html.escape
    color = _COLORS.get(snapshot.status, "#333")
    head = "".join(f"<th style='text-align:left;padding:0 8px'>{h}</th>" for h in _HEAD)
    rows = "".join(_row_html(view) for view in snapshot.subtasks)
    cost = f" · {snapshot.tokens:,} tokens · {snapshot.cost_text}" if snapshot.tokens else ""
    return (
        f"<div data-loom-task='{esc(snapshot.task_id)}' style='margin:4px 0'>"
        f"<b>Delegated:</b> {esc(_short(snapshot.goal, 120))} "
        f"<span style='color:{color}'>[{esc(snapshot.status)}]</span>"
        f"<span style='color:#666'>{cost} · task {esc(snapshot.task_id[:8])}</span>"
        f"<table style='font-size:90%;border-collapse:collapse'><tr>{head}</tr>{rows}</table>"
        "</div>"
    )


def _row_html(view: object) -> str:
    from loom_jupyter.orchestrator import SubtaskView

    assert isinstance(view, SubtaskView)
    esc = html.escape
    color = _COLORS.get(view.status, "#333")
    cells = (
        f"<span title='{esc(view.description)}'>{esc(view.id)}</span>",
        f"<span style='color:{color}' title='{esc(view.reason)}'>{esc(view.status)}</span>",
        str(view.attempt),
        f"{view.elapsed_s:.0f} s",
        f"{view.tokens:,}",
        esc(view.last_tool or ""),
    )
    return "<tr>" + "".join(f"<td style='padding:0 8px'>{c}</td>" for c in cells) + "</tr>"


def task_table_bundle(snapshot: TaskSnapshot) -> dict[str, str]:
    """The live table as a display: HTML, and the same table as text wherever HTML does
    not show (a console, a saved notebook read as text)."""
    return {"text/html": task_table_html(snapshot), "text/plain": task_table_text(snapshot)}


def task_table_text(snapshot: TaskSnapshot) -> str:
    """The same table as plain text (terminals, ``%delegate status``)."""
    lines = [
        f"task {snapshot.task_id} [{snapshot.status}] {_short(snapshot.goal, 80)}",
        f"  {'subtask':<16} {'status':<11} {'try':>3} {'elapsed':>8} {'tokens':>9}  last tool",
    ]
    for v in snapshot.subtasks:
        lines.append(
            f"  {_short(v.id, 16):<16} {v.status:<11} {v.attempt:>3} {v.elapsed_s:>7.0f}s "
            f"{v.tokens:>9,}  {v.last_tool or ''}"
        )
    if snapshot.tokens:
        lines.append(f"  {snapshot.tokens:,} tokens, {snapshot.cost_text}")
    return "\n".join(lines)


def progress_line(update: TaskUpdate) -> str | None:
    """One line for the cell when something worth saying happened (else ``None``)."""
    snap, sub = update.snapshot, update.subtask
    if update.change == "planned" and snap.subtasks:
        return f"Planned {len(snap.subtasks)} subtasks: {', '.join(s.id for s in snap.subtasks)}"
    if update.change == "started" and sub:
        return f"▶ {sub} ({update.message})"
    if update.change == "retrying" and sub:
        return f"↻ {sub} failed verification, retrying: {_short(update.message, 160)}"
    if update.change == "finished" and sub:
        return f"■ {sub} {_short(update.message, 160)}"
    if update.change == "task_done":
        return f"Delegation {snap.status} ({snap.tokens:,} tokens, {snap.cost_text})"
    return None


def to_sidebar(snapshot: TaskSnapshot) -> TaskView:
    """The sidebar's pinned ``task`` message value."""
    from loom_jupyter.host.wire.protocol import SubtaskItem, TaskView

    data = snapshot.to_json()
    subtasks = tuple(SubtaskItem(**s) for s in data["subtasks"])
    return TaskView(data["task_id"], data["goal"], data["status"], subtasks)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
