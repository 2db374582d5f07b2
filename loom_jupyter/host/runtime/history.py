"""History for the sidebar, read from the archive in pages of rows.

The first open (or a front that missed too much) gets the newest page plus a
``more_before`` cursor; ``load_more`` pages further back. A page costs one
indexed range read, whatever the archive's size.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from loom_jupyter.host.wire.protocol import HistoryItem, SessionRow, SessionSummary, ToolItem
from loom_jupyter.messages import RedactedThinkingBlock, ThinkingBlock
from loom_jupyter.tools.output import redact_secrets

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.archive import Archive, SessionInfo
    from loom_jupyter.messages import Turn

__all__ = ["PAGE_ROWS", "RESULT_CHARS", "history_page", "session_rows", "session_summary"]

PAGE_ROWS = 60
RESULT_CHARS = 4000


async def history_page(
    archive: Archive, session_id: str | None, before: int | None, rows: int = PAGE_ROWS
) -> tuple[tuple[HistoryItem | ToolItem, ...], int | None]:
    """Items of the archive turns just before ``before`` (the newest when None), and the cursor."""
    if session_id is None:
        return (), None
    end = (await archive.last_turn_number(session_id)) if before is None else before - 1
    if end < 1:
        return (), None
    start = max(1, end - rows + 1)
    turns = await archive.get_turns(session_id, start, end)
    outside = await archive.outside_clients(session_id, start, end)  # outside agents' calls
    items = tuple(
        item
        for turn in turns
        if (item := history_item(turn, outside.get(turn.turn_number, ""))) is not None
    )
    return items, (start if start > 1 else None)


def _tool_summary(turn: Turn) -> str:
    """A tool row's one line: a loaded skill's as the call showed it live (which skill, from
    where), else the result's first line."""
    from loom_jupyter.skills import loaded_skill, loaded_summary

    found = loaded_skill(turn.content) if turn.tool_name == "load_skill" else None
    if found is None or turn.is_error:
        return first_line(turn.content)
    return loaded_summary(*found)


def history_item(turn: Turn, outside: str = "") -> HistoryItem | ToolItem | None:
    """One archive row as the sidebar shows it (None for rows it does not show); ``outside``
    names the outside agent that made a ``tool`` row (DESIGN §14)."""
    if turn.role == "tool":
        return ToolItem(
            turn=turn.turn_number,
            call_id=turn.tool_call_id or "",
            name=turn.tool_name or "",
            input=_plain(turn.tool_input),
            summary=_tool_summary(turn),
            is_error=turn.is_error,
            result=cap(turn.content),
            outside=outside,
        )
    if turn.role == "user" and turn.content.strip():
        return HistoryItem(turn.role, turn.turn_number, turn.content)
    if turn.role == "assistant":
        thinking = "\n\n".join(b.thinking for b in turn.blocks if isinstance(b, ThinkingBlock))
        if thinking:  # shown redacted as it streamed; archived verbatim (signed, R9)
            thinking = redact_secrets(thinking)
        redacted = any(isinstance(b, RedactedThinkingBlock) for b in turn.blocks)
        if turn.content.strip() or thinking.strip() or redacted:
            return HistoryItem("assistant", turn.turn_number, turn.content, thinking, redacted)
    return None


def first_line(text: str, limit: int = 120) -> str:
    """The first non-empty line, shortened."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def cap(text: str, limit: int = RESULT_CHARS) -> str:
    """``text`` cut to ``limit`` characters."""
    return text if len(text) <= limit else text[:limit] + "\n…"


def _plain(value: Any) -> dict[str, Any]:
    """A JSON-safe copy of a tool input mapping."""
    if not value:
        return {}
    return dict(json.loads(json.dumps(dict(value), default=str)))


async def session_summary(
    archive: Archive, info: SessionInfo | None, approval: str
) -> SessionSummary | None:
    """The header of the current session (None while no message was sent)."""
    if info is None:
        return None
    prompts = (await archive.prompt_counts([info.id]))[info.id]
    return SessionSummary(
        id=info.id,
        title=info.title or "(untitled)",
        prompts=prompts,
        turns=info.turn_count,
        model=info.model,
        approval=approval,
        last_active=info.last_active_at,
    )


async def session_rows(
    archive: Archive, listed: Sequence[SessionInfo], current: str | None
) -> tuple[SessionRow, ...]:
    """The session picker's rows."""
    prompts = await archive.prompt_counts([s.id for s in listed])
    return tuple(
        SessionRow(
            id=s.id,
            title=s.title or "(untitled)",
            prompts=prompts[s.id],
            turns=s.turn_count,
            last_active=s.last_active_at,
            status=s.status,
            current=s.id == current,
        )
        for s in listed
    )
