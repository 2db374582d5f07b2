"""Reverting a turn's notebook changes (the sidebar's Revert): undone in the notebook
when no cell changed since, else the cells named; every front and the model are told."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from loom_jupyter.host.wire.protocol import NoticeMsg

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive
    from loom_jupyter.host.runtime.document import FrontDocument
    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["revert_turn"]


async def revert_turn(
    session: CoworkSession, archive: Archive, document: FrontDocument, floor: TurnFloor, turn: int
) -> None:
    """Undo turn ``turn``'s notebook changes through the live ``document``."""
    from loom_jupyter.cells import CellChange

    def notice(text: str, level: Literal["info", "warning", "error"]) -> None:
        floor.broadcast(NoticeMsg(text, level))

    sid = session.session_id
    steps = await archive.cell_changes(sid, turn) if sid else []
    if not steps or sid is None:
        notice(f"Turn {turn} left no notebook changes to undo.", "info")
        return
    result = await document.apply(CellChange("revert", steps=tuple(steps)))
    if result.ok:
        await archive.mark_reverted(sid, turn)
        await session.append_note(f"The person reverted your notebook changes of turn {turn}.")
        notice(f"Reverted turn {turn}: {len(steps)} notebook change(s) undone.", "info")
    elif result.code == "conflict":
        cells = ", ".join(result.conflicts)
        notice(
            f"Turn {turn} was not reverted: cell(s) {cells} changed since; nothing was changed.",
            "warning",
        )
    else:
        why = result.error or "no notebook page answered"
        notice(f"Turn {turn} was not reverted: {why}", "error")
