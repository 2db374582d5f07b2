"""Compact diff cards of the agent's notebook changes, for the cell output and the panel.

An ``edit_cell`` result ends with the change as a unified diff
(:func:`loom_jupyter.tools.cells.cell_diff`); ``diff_html`` draws it, escaped,
with removed lines red and added lines green.
"""

from __future__ import annotations

import html

__all__ = ["diff_html"]


_COLORS = {"+": "#e6ffed", "-": "#ffeef0", "@": "#f1f8ff"}


def diff_html(diff: str, limit: int = 40) -> str:
    """``diff`` as an escaped ``<pre>``, one coloured block per line."""
    lines = diff.splitlines()[:limit]
    rows = []
    for line in lines:
        color = _COLORS.get(line[:1], "transparent")
        rows.append(
            f'<span style="display:block;background:{color}">{html.escape(line) or " "}</span>'
        )
    style = "margin:4px 0 0;padding:4px 6px;border:1px solid #ddd;border-radius:3px;font-size:12px"
    return f'<pre style="{style}">' + "".join(rows) + "</pre>"
