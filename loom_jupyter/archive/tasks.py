"""Delegated work: ``tasks`` (a goal and its plan) and their ``subtasks``."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from loom_jupyter.archive.sessions import require_session
from loom_jupyter.errors import TurnNotFoundError
from loom_jupyter.records import SubtaskInfo, TaskInfo

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping, Sequence

    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.db import Db, Tx

__all__ = ["TasksMixin"]


class TasksMixin:
    """Task methods of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db
    _clock: Clock

    async def create_task(
        self,
        session_id: str,
        *,
        goal: str,
        plan_json: str = "",
        status: str = "pending",
        options_json: str = "{}",
    ) -> str:
        """Record a delegated task of the session; returns its id."""
        task_id, now = uuid.uuid4().hex, self._clock.now()
        async with self._db.transaction() as tx:
            await require_session(tx, session_id)
            await tx.execute(
                "INSERT INTO tasks (id, session_id, goal, plan_json, status, options_json,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [task_id, session_id, goal, plan_json, status, options_json, now, now],
            )
        return task_id

    async def get_task(self, task_id: str) -> TaskInfo:
        """The task ``task_id``; raises :class:`TurnNotFoundError` when there is none."""
        row = await self._db.fetchone("SELECT * FROM tasks WHERE id = ?", [task_id])
        if row is None:
            raise TurnNotFoundError(f"No task {task_id!r} in {self._db.path}.")
        return TaskInfo(**_fields(row))  # type: ignore[arg-type]

    async def tasks_with_status(self, statuses: Sequence[str]) -> list[TaskInfo]:
        """Every task (of any session) whose status is one of ``statuses``, oldest first."""
        marks = ", ".join("?" for _ in statuses)
        rows = await self._db.fetchall(
            f"SELECT * FROM tasks WHERE status IN ({marks}) ORDER BY created_at, rowid",
            list(statuses),
        )
        return [TaskInfo(**_fields(row)) for row in rows]  # type: ignore[arg-type]

    async def update_task(
        self,
        task_id: str,
        *,
        status: str | None = None,
        result_json: str | None = None,
        plan_json: str | None = None,
        message: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cost_usd: float | None = None,
        finished_at: str | None = None,
    ) -> None:
        """Change the given fields of a task (``None`` leaves one as it is)."""
        changes = {
            "status": status,
            "result_json": result_json,
            "plan_json": plan_json,
            "message": message,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": cost_usd,
            "finished_at": finished_at,
        }
        await _update(self._db, "tasks", task_id, changes, self._clock.now())

    async def create_subtask(
        self,
        task_id: str,
        *,
        subtask_key: str,
        description: str,
        depends_on: Sequence[str] = (),
        acceptance: str = "",
        check_expr: str | None = None,
    ) -> str:
        """Record a subtask of ``task_id``; returns its id."""
        subtask_id, now = uuid.uuid4().hex, self._clock.now()
        async with self._db.transaction() as tx:
            await _require(tx, "tasks", task_id)
            await tx.execute(
                "INSERT INTO subtasks (id, task_id, subtask_key, description, depends_on,"
                " acceptance, check_expr, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    subtask_id,
                    task_id,
                    subtask_key,
                    description,
                    json.dumps(list(depends_on)),
                    acceptance,
                    check_expr,
                    now,
                    now,
                ],
            )
        return subtask_id

    async def update_subtask(
        self,
        subtask_id: str,
        *,
        status: str | None = None,
        attempts: int | None = None,
        verdict: str | None = None,
        result: str | None = None,
        child_session_id: str | None = None,
        reason: str | None = None,
        verdicts_json: str | None = None,
        effects_json: str | None = None,
        sessions_json: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cost_usd: float | None = None,
        started_at: str | None = None,
        finished_at: str | None = None,
    ) -> None:
        """Change the given fields of a subtask (``None`` leaves one as it is)."""
        changes = {
            "status": status,
            "attempts": attempts,
            "verdict": verdict,
            "result": result,
            "child_session_id": child_session_id,
            "reason": reason,
            "verdicts_json": verdicts_json,
            "effects_json": effects_json,
            "sessions_json": sessions_json,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": cost_usd,
            "started_at": started_at,
            "finished_at": finished_at,
        }
        await _update(self._db, "subtasks", subtask_id, changes, self._clock.now())

    async def list_tasks(self, session_id: str) -> list[TaskInfo]:
        """The session's tasks, oldest first."""
        await require_session(self._db, session_id)
        rows = await self._db.fetchall(
            "SELECT * FROM tasks WHERE session_id = ? ORDER BY created_at, rowid", [session_id]
        )
        return [TaskInfo(**_fields(row)) for row in rows]  # type: ignore[arg-type]

    async def list_subtasks(self, task_id: str) -> list[SubtaskInfo]:
        """The task's subtasks, in the order they were created."""
        await _require(self._db, "tasks", task_id)
        rows = await self._db.fetchall(
            "SELECT * FROM subtasks WHERE task_id = ? ORDER BY created_at, rowid", [task_id]
        )
        return [_subtask(row) for row in rows]


def _fields(row: sqlite3.Row) -> dict[str, object]:
    return {key: row[key] for key in row.keys()}  # noqa: SIM118 (sqlite3.Row)


def _subtask(row: sqlite3.Row) -> SubtaskInfo:
    fields = _fields(row)
    fields["depends_on"] = tuple(json.loads(str(fields["depends_on"])))
    return SubtaskInfo(**fields)  # type: ignore[arg-type]


async def _require(db: Tx, table: str, row_id: str) -> None:
    if await db.fetchone(f"SELECT 1 FROM {table} WHERE id = ?", [row_id]) is None:
        kind = "task" if table == "tasks" else "subtask"
        raise TurnNotFoundError(f"No {kind} {row_id!r} in {db.path}.")


async def _update(db: Db, table: str, row_id: str, changes: Mapping[str, object], now: str) -> None:
    sets = {name: value for name, value in changes.items() if value is not None}
    async with db.transaction() as tx:
        await _require(tx, table, row_id)
        assignments = ", ".join(f"{name} = ?" for name in sets)
        await tx.execute(
            f"UPDATE {table} SET {assignments}{', ' if sets else ''}updated_at = ? WHERE id = ?",
            [*sets.values(), now, row_id],
        )
