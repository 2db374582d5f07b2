"""Plain-text rendering for the terminal: a command's report, aligned tables, snippets."""

from __future__ import annotations

import re
import shutil
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.host.commands.report import Report

__all__ = ["report_text", "snippet", "table"]

Align = Literal["<", ">"]


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """An aligned table; ``align`` has one ``<`` or ``>`` per column. The last column
    is cut to fit the terminal."""
    cells = [list(headers), *[[one_line(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    room = shutil.get_terminal_size((120, 24)).columns - sum(widths[:-1]) - 2 * (len(widths) - 1)
    widths[-1] = max(min(widths[-1], room), len(headers[-1]), 20)
    lines = []
    for row in cells:
        parts = [
            _fit(cell, width, side) for cell, width, side in zip(row, widths, align, strict=True)
        ]
        lines.append("  ".join(parts).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fit(cell: str, width: int, side: str) -> str:
    if len(cell) > width:
        cell = cell[: width - 1] + "…"
    return cell.rjust(width) if side == ">" else cell.ljust(width)


def one_line(text: str) -> str:
    """``text`` with all runs of whitespace collapsed to one space."""
    return " ".join(text.split())


def report_text(report: Report) -> str:
    """A command's report for the terminal: its title, notes, aligned tables, blocks."""
    from loom_jupyter.host.commands.report import Block, Items, Note, Table

    pieces = [report.title] if report.title else []
    for part in report.parts:
        if isinstance(part, Note):
            pieces.append(part.text)
        elif isinstance(part, Items):
            pieces.append(part.line())
        elif isinstance(part, Table):
            rows = [[_cell(value) for value in row] for row in part.rows]
            width = len(part.headers)
            shown = table(part.headers, rows, (part.align + "<" * width)[:width])
            pieces.append(f"{shown}\n{part.caption}" if part.caption else shown)
        elif isinstance(part, Block):
            pieces.append(f"{part.heading}:\n{part.text}" if part.heading else part.text)
    return "\n\n".join(pieces)


def _cell(value: object) -> str:
    """How a table shows a value: ints with thousands separators, the rest as str."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def snippet(content: str, query: str, width: int = 90) -> str:
    """A one-line window of ``content`` around the first word of ``query`` it contains."""
    text = one_line(content)
    words = [w for w in re.findall(r"\w+", query.casefold()) if len(w) > 1]
    lowered = text.casefold()
    at = min((i for w in words if (i := lowered.find(w)) >= 0), default=0)
    start = max(0, at - width // 3)
    piece = text[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")
