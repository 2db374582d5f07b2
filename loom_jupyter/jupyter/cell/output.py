"""Small display helpers: one bundle with HTML for notebooks and text for terminals.

IPython shows ``text/plain`` in a terminal and the richest type in a notebook,
so each helper builds both and calls ``display`` once.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["cell_text", "plural", "shorten", "show_table", "show_text", "wrap_words"]

_WIDTH = 88


def show_text(text: str) -> None:
    """Print a line (works the same in a notebook and a terminal)."""
    print(text)


def plural(count: int, word: str) -> str:
    """``1 prompt``, ``3 prompts``."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def wrap_words(text: str, width: int = _WIDTH) -> str:
    """Each line of ``text`` wrapped at word boundaries (never inside a word)."""
    import textwrap

    wrapped = (
        textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False) or line
        for line in text.splitlines()
    )
    return "\n".join(wrapped)


def show_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    caption: str = "",
    nowrap: bool = False,
) -> None:
    """An HTML table in notebooks, an aligned text table in terminals.

    ``nowrap`` keeps each cell on one line (a narrow notebook scrolls the table
    sideways instead of breaking dates and ids). Numbers get thousands separators.
    """
    from IPython.display import display

    bundle = {
        "text/html": _html(headers, rows, caption, nowrap),
        "text/plain": _text(headers, rows, caption),
    }
    display(bundle, raw=True)


def cell_text(value: object) -> str:
    """How a table shows a value: ints with thousands separators, the rest as str."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _html(
    headers: Sequence[str], rows: Sequence[Sequence[object]], caption: str, nowrap: bool
) -> str:
    style = "text-align:left" + (";white-space:nowrap" if nowrap else "")
    head = "".join(f"<th style='{style}'>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f"<td style='{style}'>{html.escape(cell_text(c))}</td>" for c in row)
        + "</tr>"
        for row in rows
    )
    cap = f"<caption style='text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    table = f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f"<div style='overflow-x:auto'>{table}</div>" if nowrap else table


def _text(headers: Sequence[str], rows: Sequence[Sequence[object]], caption: str) -> str:
    cells = [list(headers), *[[cell_text(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(([caption] if caption else []) + lines)
