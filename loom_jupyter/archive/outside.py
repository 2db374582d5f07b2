"""Outside agents' calls (DESIGN §14): ``tool`` turns marked with the client that made them.

An outside agent (Claude Code through ``loom-jupyter mcp``) calls Loom's tools in the
notebook's kernel; each call is archived as a ``tool`` turn of the notebook's session, like
the agent's own results, and ``outside_calls`` names the client that made it. The turn and
its mark are written in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.archive.sessions import no_such_session
from loom_jupyter.archive.turns import _values, append_sql

if TYPE_CHECKING:
    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.db import Db
    from loom_jupyter.messages import TurnDraft

__all__ = ["OutsideCallRow", "OutsideCallsMixin"]


@dataclass(frozen=True)
class OutsideCallRow:
    """One archived outside call: its turn, the client and the tool."""

    turn_number: int
    client: str
    tool: str
    is_error: bool
    created_at: str


class OutsideCallsMixin:
    """Outside-call methods of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db
    _clock: Clock

    async def append_outside_call(self, session_id: str, turn: TurnDraft, client: str) -> int:
        """Archive an outside agent's ``tool`` turn and mark it as ``client``'s, together;
        returns its number."""
        now = self._clock.now()
        async with self._db.transaction() as tx:
            rows = await tx.fetchall(append_sql(), [*_values(turn), now, session_id])
            if not rows:
                raise no_such_session(self._db, session_id)
            number = int(rows[0][0])
            await tx.execute(
                "INSERT INTO outside_calls (session_id, turn_number, client, created_at)"
                " VALUES (?, ?, ?, ?)",
                [session_id, number, client, now],
            )
        return number

    async def outside_clients(self, session_id: str, start: int, end: int) -> dict[int, str]:
        """The turns ``start..end`` an outside agent made, with the client's name."""
        rows = await self._db.fetchall(
            "SELECT turn_number, client FROM outside_calls"
            " WHERE session_id = ? AND turn_number BETWEEN ? AND ?",
            [session_id, start, end],
        )
        return {int(row["turn_number"]): str(row["client"]) for row in rows}

    async def outside_calls(self, session_id: str) -> list[OutsideCallRow]:
        """Every outside call of the session, oldest first."""
        rows = await self._db.fetchall(
            "SELECT o.turn_number, o.client, t.tool_name, t.is_error, o.created_at"
            " FROM outside_calls o JOIN conversation_turns t"
            " ON t.session_id = o.session_id AND t.turn_number = o.turn_number"
            " WHERE o.session_id = ? ORDER BY o.turn_number",
            [session_id],
        )
        return [
            OutsideCallRow(int(row[0]), str(row[1]), str(row[2] or ""), bool(row[3]), str(row[4]))
            for row in rows
        ]
