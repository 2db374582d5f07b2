"""One session's rows of every table that holds a session's rows, as declared
(:data:`~loom_jupyter.archive.tables.TABLES`): what an export carries beside the turns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from loom_jupyter.archive.tables import TABLES

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.archive.db import Db

__all__ = ["TYPED_TABLES", "SessionTables", "SessionTablesMixin"]

TYPED_TABLES = ("cowork_sessions", "conversation_turns")
"""Tables whose rows have typed readers (``get_session``, ``get_turns``): not repeated here."""

Row = dict[str, object]


@dataclass(frozen=True)
class SessionTables:
    """A session's rows per table (column → value, in the order they were written)."""

    tables: Mapping[str, tuple[Row, ...]] = field(default_factory=dict)

    def rows(self, table: str) -> tuple[Row, ...]:
        """The rows of ``table`` (none when it holds none of the session's)."""
        return self.tables.get(table, ())

    def outside_clients(self) -> dict[int, str]:
        """The turns an outside agent made, with the client's name."""
        return {int(str(r["turn_number"])): str(r["client"]) for r in self.rows("outside_calls")}

    def cell_changes(self, turn: int) -> list[Row]:
        """The notebook changes turn ``turn`` made, in order."""
        return [r for r in self.rows("cell_changes") if r["turn_number"] == turn]


class SessionTablesMixin:
    """The export's read of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db

    async def session_tables(self, session_id: str) -> SessionTables:
        """Every declared table's rows of ``session_id`` but :data:`TYPED_TABLES`'."""
        found: dict[str, tuple[Row, ...]] = {}
        for declared in TABLES:
            where = declared.session_rows
            if where is None or declared.name in TYPED_TABLES:
                continue
            rows = await self._db.fetchall(
                f'SELECT * FROM "{declared.name}" WHERE {where} ORDER BY rowid',
                [session_id] * where.count("?"),
            )
            found[declared.name] = tuple({key: row[key] for key in row.keys()} for row in rows)  # noqa: SIM118 (sqlite3.Row)
        return SessionTables(found)
