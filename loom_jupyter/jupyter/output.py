"""Small display helpers: one bundle with HTML for notebooks and text for terminals.

IPython shows ``text/plain`` in a terminal and the richest type in a notebook,
so each helper builds both and calls ``display`` once.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["show_table", "show_text"]


def show_text(text: str) -> None:
    """Print a line (works the same in a notebook and a terminal)."""
    print(text)


def show_table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, caption: str = ""
) -> None:
    """An HTML table in notebooks, an aligned text table in terminals."""
    from IPython.display import display

    display(
        {"text/html": _html(headers, rows, caption), "text/plain": _text(headers, rows, caption)},
        raw=True,
    )


def _html(headers: Sequence[str], rows: Sequence[Sequence[object]], caption: str) -> str:
    head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f"<td style='text-align:left'>{html.escape(str(c))}</td>" for c in row)
        + "</tr>"
        for row in rows
    )
    cap = f"<caption style='text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _text(headers: Sequence[str], rows: Sequence[Sequence[object]], caption: str) -> str:
    cells = [list(headers), *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(([caption] if caption else []) + lines)
