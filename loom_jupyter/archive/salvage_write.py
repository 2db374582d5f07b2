"""Writing the rows saved from a damaged archive into a new one, verbatim.

Ids, turn numbers, statuses, blocks and timestamps are copied as read. A row
that still points at a lost parent gets a home: a session whose row was lost
is recreated ("(recovered) " + its first prompt as the title, usage summed
from its ledger rows, created when its first row was and last active when its
last turn was; ``closed`` when it was a sub-agent's), so its turns stay
listed, searchable and resumable. A subtask whose task row was lost is not
kept: nothing could show it. The full-text index is rebuilt from the saved
turns once they are in.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.archive.clock import utc_now
from loom_jupyter.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from loom_jupyter.archive.salvage_read import TableRead

__all__ = ["Written", "table_columns", "verify", "write_rows"]

Row = tuple[object, ...]

_SESSION_REFS = (  # (table, column) pointing at a session
    ("conversation_turns", "session_id"),
    ("model_calls", "session_id"),
    ("tasks", "session_id"),
    ("subtasks", "child_session_id"),
    ("cowork_sessions", "parent_session_id"),
)
_TIMES = " UNION ALL ".join(
    f"SELECT created_at AS at FROM {table} WHERE session_id = cowork_sessions.id"
    for table in ("conversation_turns", "model_calls", "tasks")
)
_USAGE = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "cost_usd")
_FINISH_HOME = (
    "UPDATE cowork_sessions SET"
    " title = CASE WHEN title = '' THEN '(recovered session)'"
    " ELSE substr('(recovered) ' || title, 1, 100) END,"
    " model = coalesce((SELECT model FROM model_calls WHERE session_id = cowork_sessions.id"
    " ORDER BY id DESC LIMIT 1), model),"
    f" created_at = coalesce((SELECT min(at) FROM ({_TIMES})), ?1),"
    " last_active_at = coalesce((SELECT max(created_at) FROM conversation_turns"
    f" WHERE session_id = cowork_sessions.id), (SELECT max(at) FROM ({_TIMES})), ?1),"
    + ",".join(
        f" {name} = (SELECT coalesce(sum({name}), 0) FROM model_calls"
        " WHERE session_id = cowork_sessions.id)"
        for name in _USAGE
    )
    + " WHERE id = ?2"
)


@dataclass(frozen=True)
class Written:
    """What went into the new archive: the rowids saved per table, the sessions recreated."""

    saved: Mapping[str, frozenset[int]]
    recreated: tuple[str, ...]


def table_columns(db: sqlite3.Connection, table: str) -> tuple[str, ...]:
    """The columns of ``table`` in ``db``, in order."""
    return tuple(str(row[1]) for row in db.execute(f'PRAGMA table_info("{table}")'))


def write_rows(db: sqlite3.Connection, reads: Mapping[str, TableRead], notebook: str) -> Written:
    """Copy ``reads`` into the new archive ``db`` in one transaction (``db`` in autocommit)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("PRAGMA defer_foreign_keys = ON")  # homes are made after their children
        written = _write(db, reads, notebook)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return written


def _write(db: sqlite3.Connection, reads: Mapping[str, TableRead], notebook: str) -> Written:
    sessions = reads["cowork_sessions"]
    saved = {"cowork_sessions": _insert(db, sessions, sessions.rows)}
    saved["tasks"] = _insert(db, reads["tasks"], reads["tasks"].rows)
    task_ids = _values(reads["tasks"], "id", saved["tasks"])
    kept = [
        row for row in reads["subtasks"].rows if _get(reads["subtasks"], row, "task_id") in task_ids
    ]
    saved["subtasks"] = _insert(db, reads["subtasks"], kept)
    homes = _homes(reads, saved)
    sub_agents = {
        _get(reads["subtasks"], row, "child_session_id") for row in reads["subtasks"].rows
    }
    _insert_homes(db, homes, sessions, saved["cowork_sessions"], notebook, sub_agents)
    for table in ("conversation_turns", "model_calls"):
        saved[table] = _insert(db, reads[table], reads[table].rows)
    db.executemany(_FINISH_HOME, [(utc_now(), home) for home in homes])
    db.execute("INSERT INTO turns_fts (turns_fts) VALUES ('rebuild')")  # from the saved turns
    return Written(saved, homes)


def _insert(db: sqlite3.Connection, read: TableRead, rows: Iterable[Row]) -> frozenset[int]:
    """Insert ``rows`` (rowid first) one by one; returns the rowids that went in.

    A row SQLite returned from a damaged page can break a constraint: it is left out.
    """
    if not read.columns:
        return frozenset()
    keep_rowid = _rowid_alias(db, read.table) not in read.columns
    names = ("rowid", *read.columns) if keep_rowid else read.columns
    marks = ", ".join("?" for _ in names)
    sql = f'INSERT INTO "{read.table}" ({", ".join(names)}) VALUES ({marks})'
    saved = set()
    for row in rows:
        try:
            db.execute(sql, row if keep_rowid else row[1:])
        except (sqlite3.IntegrityError, sqlite3.DataError):
            continue
        saved.add(int(str(row[0])))
    return frozenset(saved)


def _rowid_alias(db: sqlite3.Connection, table: str) -> str | None:
    """The ``INTEGER PRIMARY KEY`` column of ``table`` (the rowid itself), if any."""
    keys = [row for row in db.execute(f'PRAGMA table_info("{table}")') if row[5]]
    if len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER":
        return str(keys[0][1])
    return None


def _get(read: TableRead, row: Row, column: str) -> object:
    return row[read.columns.index(column) + 1] if column in read.columns else None


def _values(read: TableRead, column: str, rowids: frozenset[int]) -> set[object]:
    return {_get(read, row, column) for row in read.rows if row[0] in rowids}


def _homes(reads: Mapping[str, TableRead], saved: Mapping[str, frozenset[int]]) -> tuple[str, ...]:
    """Session ids that saved rows point at but whose own row was lost, in first-seen order."""
    present = _values(reads["cowork_sessions"], "id", saved["cowork_sessions"])
    wanted: dict[str, None] = {}
    for table, column in _SESSION_REFS:
        read = reads[table]
        rows = read.rows if table not in saved else [r for r in read.rows if r[0] in saved[table]]
        for row in rows:
            value = _get(read, row, column)
            if isinstance(value, str) and value not in present:
                wanted[value] = None
    return tuple(wanted)


def _insert_homes(
    db: sqlite3.Connection,
    homes: tuple[str, ...],
    sessions: TableRead,
    saved: frozenset[int],
    notebook: str,
    sub_agents: set[object],
) -> None:
    """A placeholder row per lost session; :data:`_FINISH_HOME` fills it in afterwards.

    ``sub_agents``: sessions some subtask ran in (read, even when the subtask was not kept).
    """
    paths = Counter(_values(sessions, "notebook_path", saved) - {None})
    models = Counter(_values(sessions, "model", saved) - {None})
    path = str(paths.most_common(1)[0][0]) if paths else notebook
    model = str(models.most_common(1)[0][0]) if models else "unknown"
    db.executemany(
        "INSERT INTO cowork_sessions (id, notebook_path, title, model, status, created_at,"
        " last_active_at) VALUES (?, ?, '', ?, ?, '', '')",
        [(home, path, model, "closed" if home in sub_agents else "active") for home in homes],
    )


def verify(db: sqlite3.Connection, path: Path) -> None:
    """Raise when the new archive fails SQLite's own checks (it is then discarded)."""
    checks: dict[str, list[tuple[object, ...]]] = {
        "PRAGMA integrity_check": [("ok",)],
        "PRAGMA foreign_key_check": [],
    }
    fts = "INSERT INTO turns_fts (turns_fts) VALUES ('integrity-check')"
    for sql, expected in [*checks.items(), (fts, [])]:
        try:
            found: object = db.execute(sql).fetchall()
        except sqlite3.DatabaseError as error:
            found = str(error)
        if found != expected:
            raise ArchiveError(
                f"The recovered copy {path} failed `{sql}` ({str(found)[:300]}); it was discarded "
                "and the damaged archive left as it was. Please report this as a bug."
            )
