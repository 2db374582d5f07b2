"""A session as a Markdown journal (``%cowork export``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.archive import SessionInfo
    from loom_jupyter.messages import Turn

__all__ = ["journal_markdown"]


def journal_markdown(info: SessionInfo, turns: Sequence[Turn]) -> str:
    """Every turn, verbatim, in order; tool calls as fenced blocks."""
    head = [
        f"# {info.title or 'Untitled session'}",
        "",
        f"- notebook: `{info.notebook_path}`",
        f"- session: `{info.id}` · model `{info.model}` · {info.turn_count} turns",
        f"- created {info.created_at} · last active {info.last_active_at}",
        f"- tokens in/out: {info.input_tokens:,}/{info.output_tokens:,}"
        f" · cost ${info.cost_usd:.4f}",
        "",
    ]
    return "\n".join(head + [_turn(t) for t in turns]).rstrip() + "\n"


def _turn(turn: Turn) -> str:
    mark = "" if turn.status == "complete" else f" *({turn.status})*"
    if turn.role == "user":
        return f"## You · turn {turn.turn_number}{mark}\n\n{turn.content}\n"
    if turn.role == "assistant":
        calls = [b for b in turn.blocks if b.type == "tool_use"]
        uses = "".join(f"\n> calls `{c.name}`\n" for c in calls)
        return f"### Assistant · turn {turn.turn_number}{mark}\n\n{turn.content}\n{uses}"
    if turn.role == "tool":
        args = json.dumps(dict(turn.tool_input or {}), indent=2, ensure_ascii=False)
        error = " (error)" if turn.is_error else ""
        return (
            f"#### Tool `{turn.tool_name}`{error} · turn {turn.turn_number}{mark}\n\n"
            f"```json\n{args}\n```\n\n```text\n{turn.content}\n```\n"
        )
    return f"#### {turn.role} · turn {turn.turn_number}\n\n{turn.content}\n"
