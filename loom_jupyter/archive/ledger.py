"""The usage ledger: one ``model_calls`` row per API request, plus running totals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.archive.sessions import no_such_session, require_session
from loom_jupyter.records import ModelCallRecord, UsageTotals

if TYPE_CHECKING:
    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.db import Db
    from loom_jupyter.messages import Usage

__all__ = ["LedgerMixin"]

_SUMS = (
    "coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),"
    " coalesce(sum(cache_creation_tokens), 0), coalesce(sum(cache_read_tokens), 0),"
    " coalesce(sum(cost_usd), 0.0)"
)


class LedgerMixin:
    """Usage methods of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db
    _clock: Clock

    async def record_model_call(
        self,
        session_id: str,
        *,
        model: str,
        usage: Usage,
        stop_reason: str | None,
        latency_ms: float,
        error: str | None = None,
        cost_usd: float = 0.0,
        turn_number: int | None = None,
    ) -> int:
        """Add a ledger row and the session's totals in one transaction; returns the row id."""
        tokens = [
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
        ]
        async with self._db.transaction() as tx:
            changed = await tx.execute(
                "UPDATE cowork_sessions SET input_tokens = input_tokens + ?,"
                " output_tokens = output_tokens + ?,"
                " cache_creation_tokens = cache_creation_tokens + ?,"
                " cache_read_tokens = cache_read_tokens + ?, cost_usd = cost_usd + ?"
                " WHERE id = ?",
                [*tokens, cost_usd, session_id],
            )
            if changed == 0:
                raise no_such_session(tx, session_id)
            row = await tx.fetchone(
                "INSERT INTO model_calls (session_id, turn_number, model, input_tokens,"
                " output_tokens, cache_creation_tokens, cache_read_tokens, cost_usd,"
                " stop_reason, latency_ms, error, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                [
                    session_id,
                    turn_number,
                    model,
                    *tokens,
                    cost_usd,
                    stop_reason,
                    float(latency_ms),
                    error,
                    self._clock.now(),
                ],
            )
        assert row is not None  # RETURNING always yields the inserted row
        return int(row[0])

    async def model_calls(self, session_id: str) -> list[ModelCallRecord]:
        """The session's ledger rows, oldest first."""
        await require_session(self._db, session_id)
        rows = await self._db.fetchall(
            "SELECT * FROM model_calls WHERE session_id = ? ORDER BY id", [session_id]
        )
        return [ModelCallRecord(**{key: row[key] for key in row.keys()}) for row in rows]  # noqa: SIM118

    async def usage_totals(self, session_id: str) -> UsageTotals:
        """Tokens, cost and request count of one session."""
        row = await self._db.fetchone(
            "SELECT input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens,"
            " cost_usd, (SELECT count(*) FROM model_calls WHERE session_id = s.id)"
            " FROM cowork_sessions AS s WHERE id = ?",
            [session_id],
        )
        if row is None:
            raise no_such_session(self._db, session_id)
        return _totals(tuple(row))

    async def notebook_usage(self, notebook_path: str) -> UsageTotals:
        """Tokens, cost and request count of every session of ``notebook_path``."""
        row = await self._db.fetchone(
            f"SELECT {_SUMS}, (SELECT count(*) FROM model_calls AS m JOIN cowork_sessions AS c"
            " ON c.id = m.session_id WHERE c.notebook_path = ?)"
            " FROM cowork_sessions WHERE notebook_path = ?",
            [str(notebook_path), str(notebook_path)],
        )
        return _totals(tuple(row) if row is not None else (0, 0, 0, 0, 0.0, 0))


def _totals(values: tuple[object, ...]) -> UsageTotals:
    inputs, outputs, writes, reads, cost, calls = values
    return UsageTotals(
        input_tokens=int(inputs),  # type: ignore[call-overload]
        output_tokens=int(outputs),  # type: ignore[call-overload]
        cache_creation_tokens=int(writes),  # type: ignore[call-overload]
        cache_read_tokens=int(reads),  # type: ignore[call-overload]
        cost_usd=float(cost),  # type: ignore[arg-type]
        calls=int(calls),  # type: ignore[call-overload]
    )
