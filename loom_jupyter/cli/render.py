"""Plain-text rendering for the terminal: aligned tables, turns, search snippets."""

from __future__ import annotations

import json
import re
import shutil
from typing import TYPE_CHECKING, Literal

from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.models.pricing import session_cost
from loom_jupyter.session.export import clock

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.archive import SessionInfo
    from loom_jupyter.messages import Turn

__all__ = ["session_header", "snippet", "table", "turn_text"]

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


def session_header(info: SessionInfo) -> str:
    """A few lines naming a session and its usage."""
    tokens = info.input_tokens + info.output_tokens + info.cache_creation_tokens
    tokens += info.cache_read_tokens
    fork = (
        f"  fork of {info.parent_session_id[:8]} at turn {info.forked_at_turn}"
        if (info.parent_session_id)
        else ""
    )
    return (
        f"Session {info.id}  [{info.status}]{fork}\n"
        f"Title:   {info.title or '(untitled)'}\n"
        f"Model:   {info.model}   Turns: {info.turn_count}   Tokens: {tokens:,}   "
        f"Cost: {session_cost(info)}\n"
        f"Started: {clock(info.created_at)} UTC   Last active: {clock(info.last_active_at)} UTC"
    )


def turn_text(turn: Turn) -> str:
    """One turn for reading: a header line, then its text indented."""
    label: str = turn.role
    if turn.role == "tool":
        label = f"tool {turn.tool_name or '?'}" + (" (error)" if turn.is_error else "")
    if turn.status != "complete":
        label += f" [{turn.status}]"
    lines = [f"── #{turn.turn_number} {label} · {clock(turn.created_at)}"]
    if turn.role == "tool" and turn.tool_input is not None:
        lines.append(f"   input: {json.dumps(dict(turn.tool_input), ensure_ascii=False)}")
    lines += [f"   {line}" for line in turn.content.splitlines()] or ["   (no text)"]
    for block in turn.blocks:
        if isinstance(block, ToolUseBlock):
            args = json.dumps(dict(block.input), ensure_ascii=False)
            lines.append(f"   → calls {block.name} {args}")
    return "\n".join(lines)


def snippet(content: str, query: str, width: int = 90) -> str:
    """A one-line window of ``content`` around the first word of ``query`` it contains."""
    text = one_line(content)
    words = [w for w in re.findall(r"\w+", query.casefold()) if len(w) > 1]
    lowered = text.casefold()
    at = min((i for w in words if (i := lowered.find(w)) >= 0), default=0)
    start = max(0, at - width // 3)
    piece = text[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")
