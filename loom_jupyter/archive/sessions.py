"""Sessions: create, read, list, update, fork and delete ``cowork_sessions`` rows."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, cast

from typing_extensions import assert_never

from loom_jupyter.archive.session_live import session_select
from loom_jupyter.archive.tables import TABLES, Copied, Follows, Left, OwnRow
from loom_jupyter.errors import ArchiveError, SessionNotFoundError
from loom_jupyter.records import SessionInfo, SessionStatus

if TYPE_CHECKING:
    import sqlite3

    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.db import Db, Tx
    from loom_jupyter.archive.tables import ArchiveTable

__all__ = [
    "SUB_AGENT_SESSIONS",
    "SessionsMixin",
    "no_such_session",
    "require_session",
    "session_from_row",
]

_STATUSES = ("active", "closed", "archived")
SUB_AGENT_SESSIONS = "SELECT child_session_id FROM subtasks WHERE child_session_id IS NOT NULL"
"""The ids of delegated sub-agents' sessions (not the person's conversation)."""


def session_from_row(row: sqlite3.Row) -> SessionInfo:
    """A :class:`SessionInfo` from a ``cowork_sessions`` row."""
    fields = {key: row[key] for key in row.keys()}  # noqa: SIM118 (sqlite3.Row)
    fields["status"] = cast("SessionStatus", fields["status"])
    return SessionInfo(**fields)


def no_such_session(db: Tx, session_id: str) -> SessionNotFoundError:
    """The error for an unknown session id, saying how to find the right one."""
    return SessionNotFoundError(
        f"No session {session_id!r} in {db.path}. "
        "List the sessions with `loom-jupyter sessions NOTEBOOK` or `%cowork sessions`."
    )


async def require_session(db: Tx, session_id: str) -> SessionInfo:
    """The session ``session_id``; raises :class:`SessionNotFoundError`."""
    row = await db.fetchone(f"{session_select()} WHERE s.id = ?", [session_id])
    if row is None:
        raise no_such_session(db, session_id)
    return session_from_row(row)


class SessionsMixin:
    """Session methods of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db
    _clock: Clock

    async def create_session(
        self,
        *,
        notebook_path: str,
        model: str,
        title: str = "",
        parent_session_id: str | None = None,
        forked_at_turn: int | None = None,
    ) -> str:
        """Start a new, active session; returns its id (a uuid4 hex)."""
        session_id = uuid.uuid4().hex
        now = self._clock.now()
        async with self._db.transaction() as tx:
            if parent_session_id is not None:
                await require_session(tx, parent_session_id)
            await tx.execute(
                "INSERT INTO cowork_sessions (id, notebook_path, title, model, parent_session_id,"
                " forked_at_turn, created_at, last_active_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    session_id,
                    str(notebook_path),
                    title[:100],
                    model,
                    parent_session_id,
                    forked_at_turn,
                    now,
                    now,
                ],
            )
        return session_id

    async def get_session(self, session_id: str) -> SessionInfo:
        """The session ``session_id``; raises :class:`SessionNotFoundError`."""
        return await require_session(self._db, session_id)

    async def list_sessions(
        self,
        notebook_path: str | None = None,
        status: SessionStatus | None = None,
        limit: int = 100,
        *,
        delegated: bool = True,
    ) -> list[SessionInfo]:
        """Sessions, most recently active first, optionally of one notebook / status;
        ``delegated=False`` leaves out the sessions of delegated sub-agents."""
        where, params = _filters(notebook_path, status, delegated=delegated)
        rows = await self._db.fetchall(
            f"{session_select()} {where} ORDER BY last_active_at DESC, s.rowid DESC LIMIT ?",
            [*params, limit],
        )
        return [session_from_row(row) for row in rows]

    async def prompt_counts(self, session_ids: list[str]) -> dict[str, int]:
        """How many messages the person sent in each session (``turn_count`` counts every row)."""
        if not session_ids:
            return {}
        marks = ", ".join("?" for _ in session_ids)
        rows = await self._db.fetchall(
            "SELECT session_id, COUNT(*) FROM conversation_turns"
            f" WHERE role = 'user' AND session_id IN ({marks}) GROUP BY session_id",
            list(session_ids),
        )
        counts = dict.fromkeys(session_ids, 0)
        counts.update({str(sid): int(n) for sid, n in rows})
        return counts

    async def latest_active_session(self, notebook_path: str | None = None) -> SessionInfo | None:
        """The most recently active ``active`` session (of ``notebook_path``), if any."""
        sessions = await self.list_sessions(notebook_path, "active", limit=1)
        return sessions[0] if sessions else None

    async def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        model: str | None = None,
        status: SessionStatus | None = None,
        session_state: str | None = None,
    ) -> None:
        """Change the given fields (``None`` leaves a field as it is)."""
        if status is not None and status not in _STATUSES:
            raise ArchiveError(f"unknown session status {status!r}; use one of {_STATUSES}")
        changes = {"title": title, "model": model, "status": status, "session_state": session_state}
        sets = [(f"{name} = ?", value) for name, value in changes.items() if value is not None]
        async with self._db.transaction() as tx:
            await require_session(tx, session_id)
            if sets:
                await tx.execute(
                    f"UPDATE cowork_sessions SET {', '.join(s for s, _ in sets)} WHERE id = ?",
                    [*(v for _, v in sets), session_id],
                )

    async def move_notebook(self, old_path: str, new_path: str) -> int:
        """The notebook was renamed: its sessions name the new path; returns how many."""
        async with self._db.transaction() as tx:
            return await tx.execute(
                "UPDATE cowork_sessions SET notebook_path = ? WHERE notebook_path = ?",
                [new_path, old_path],
            )

    async def close_session(self, session_id: str) -> None:
        """Mark the session closed (it stays searchable and can be reopened)."""
        await self.update_session(session_id, status="closed")

    async def reopen_session(self, session_id: str) -> None:
        """Mark the session active again."""
        await self.update_session(session_id, status="active")

    async def delete_session(self, session_id: str) -> None:
        """Delete the session with its turns, ledger rows and tasks; forks are kept."""
        async with self._db.transaction() as tx:
            await require_session(tx, session_id)
            await tx.execute("DELETE FROM cowork_sessions WHERE id = ?", [session_id])

    async def fork_session(self, session_id: str, at_turn: int | None = None) -> str:
        """A new session holding copies of turns 1..``at_turn`` (all when ``None``) and of
        every table a fork copies (:data:`~loom_jupyter.archive.tables.TABLES`: the turns'
        cell changes and outside agents' marks)."""
        new_id = uuid.uuid4().hex
        now = self._clock.now()
        async with self._db.transaction() as tx:
            source = await require_session(tx, session_id)
            last = source.turn_count if at_turn is None else min(at_turn, source.turn_count)
            if last < 0:
                raise ArchiveError(f"cannot fork at turn {at_turn}: turn numbers start at 1")
            await tx.execute(
                "INSERT INTO cowork_sessions (id, notebook_path, title, model, parent_session_id,"
                " forked_at_turn, created_at, last_active_at, turn_count, session_state)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    new_id,
                    source.notebook_path,
                    source.title,
                    source.model,
                    session_id,
                    last,
                    now,
                    now,
                    last,
                    source.session_state,
                ],
            )
            for declared in TABLES:
                await _fork_rows(tx, declared, session_id, new_id, last)
        return new_id


async def _fork_rows(tx: Tx, declared: ArchiveTable, source: str, fork: str, last: int) -> None:
    """Copy ``declared``'s rows of turns 1..``last`` from ``source`` to ``fork``, if a fork
    copies them."""
    match declared.fork:
        case Copied(session=owner, turn=turn):
            info = await tx.fetchall(f'PRAGMA table_info("{declared.name}")')
            keys = [row for row in info if row["pk"]]
            alias = keys[0]["name"] if len(keys) == 1 and keys[0]["type"] == "INTEGER" else None
            names = ", ".join(r["name"] for r in info if r["name"] not in (owner, alias))
            await tx.execute(
                f'INSERT INTO "{declared.name}" ({owner}, {names}) SELECT ?, {names}'
                f' FROM "{declared.name}" WHERE {owner} = ? AND {turn} <= ?'
                f" ORDER BY {turn}, rowid",
                [fork, source, last],
            )
        case OwnRow() | Left() | Follows():
            return
        case _:
            assert_never(declared.fork)


def _filters(
    notebook_path: str | None, status: SessionStatus | None, *, delegated: bool = True
) -> tuple[str, list[str]]:
    clauses: list[str] = []
    params: list[str] = []
    if not delegated:
        clauses.append(f"id NOT IN ({SUB_AGENT_SESSIONS})")
    if notebook_path is not None:
        clauses.append("notebook_path = ?")
        params.append(str(notebook_path))
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), params
