"""The agent's notebook changes, per turn: what ``revert_turn`` undoes (``cell_changes``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.cells import RevertStep

if TYPE_CHECKING:
    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.db import Db

__all__ = ["CellChangesMixin"]


class CellChangesMixin:
    """Notebook-change methods of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db
    _clock: Clock

    async def record_cell_change(
        self, session_id: str, turn: int, tool_call: str, step: RevertStep
    ) -> None:
        """Keep one applied change of ``turn`` (what undoing it needs)."""
        await self._db.execute(
            "INSERT INTO cell_changes (session_id, turn_number, tool_call, cell_id, action,"
            " before, after, cell_type, cell_index, after_cell_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                session_id,
                turn,
                tool_call,
                step.cell_id,
                step.action,
                step.before,
                step.after,
                step.cell_type,
                step.index,
                step.after_cell_id,
                self._clock.now(),
            ],
        )

    async def cell_changes(self, session_id: str, turn: int) -> list[RevertStep]:
        """The changes of ``turn`` not reverted yet, newest first."""
        rows = await self._db.fetchall(
            "SELECT cell_id, action, before, after, cell_type, cell_index, after_cell_id"
            " FROM cell_changes WHERE session_id = ? AND turn_number = ? AND reverted_at IS NULL"
            " ORDER BY id DESC",
            [session_id, turn],
        )
        return [
            RevertStep(
                cell_id=row["cell_id"],
                action=row["action"],
                before=row["before"],
                after=row["after"],
                cell_type=row["cell_type"],
                index=row["cell_index"],
                after_cell_id=row["after_cell_id"],
            )
            for row in rows
        ]

    async def mark_reverted(self, session_id: str, turn: int) -> None:
        """The changes of ``turn`` were undone: a second revert finds none."""
        await self._db.execute(
            "UPDATE cell_changes SET reverted_at = ? WHERE session_id = ? AND turn_number = ?"
            " AND reverted_at IS NULL",
            [self._clock.now(), session_id, turn],
        )
