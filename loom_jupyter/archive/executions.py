"""Every execution in the kernel, as it ran (``executions``, issue 21): what rebuilds read."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.db import Db
    from loom_jupyter.lineage import ExecutionRecord

__all__ = ["ExecutionsMixin"]

_KEPT = 5_000  # executions kept per archive; older ones are dropped as new ones come


class ExecutionsMixin:
    """Execution-record methods of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db
    _clock: Clock

    async def record_execution(self, record: ExecutionRecord) -> int:
        """Keep one execution (``record.id`` is ignored); returns its id."""
        async with self._db.transaction() as tx:
            await tx.execute(
                "INSERT INTO executions (kernel_run, session_id, source, code, reads, sets,"
                " mutates, effects, fingerprints, parsed, duration_s, error, turn_number,"
                " execution_count, cell_id, created_at, late)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    record.kernel_run,
                    record.session_id,
                    record.source,
                    record.code,
                    json.dumps(list(record.reads)),
                    json.dumps(list(record.sets)),
                    json.dumps(list(record.mutates)),
                    json.dumps(list(record.effects)),
                    json.dumps(dict(record.fingerprints)),
                    int(record.parsed),
                    float(record.duration_s),
                    record.error,
                    record.turn,
                    record.execution_count,
                    record.cell_id,
                    self._clock.now(),
                    int(record.late),
                ],
            )
            row = await tx.fetchone("SELECT last_insert_rowid() AS id")
            row_id = int(row["id"]) if row is not None else 0
            if row_id > _KEPT and row_id % 100 == 0:
                await tx.execute("DELETE FROM executions WHERE id <= ?", [row_id - _KEPT])
        return row_id

    async def executions(self, limit: int = _KEPT) -> list[ExecutionRecord]:
        """The archived executions, oldest first (the newest ``limit``)."""
        rows = await self._db.fetchall(
            "SELECT * FROM (SELECT * FROM executions ORDER BY id DESC LIMIT ?) ORDER BY id",
            [limit],
        )
        return [_record(row) for row in rows]


def _record(row: sqlite3.Row) -> ExecutionRecord:
    from loom_jupyter.lineage import ExecutionRecord  # not with the archive: %load_ext's banner

    return ExecutionRecord(
        id=row["id"],
        source=row["source"],
        code=row["code"],
        reads=_names(row["reads"]),
        sets=_names(row["sets"]),
        mutates=_names(row["mutates"]),
        effects=_names(row["effects"]),
        fingerprints=json.loads(row["fingerprints"]) if row["fingerprints"] != "{}" else {},
        parsed=bool(row["parsed"]),
        duration_s=row["duration_s"],
        error=row["error"],
        session_id=row["session_id"],
        turn=row["turn_number"],
        execution_count=row["execution_count"],
        cell_id=row["cell_id"],
        kernel_run=row["kernel_run"],
        created_at=row["created_at"],
        late=bool(row["late"]),
    )


def _names(text: str) -> tuple[str, ...]:
    """A JSON list of names as a tuple (most are empty: no parsing for those)."""
    return () if text == "[]" else tuple(json.loads(text))
