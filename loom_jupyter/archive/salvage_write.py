"""Writing the rows saved from a damaged archive into a new one, verbatim.

Every table a recovery copies (:func:`~loom_jupyter.archive.tables.copied_tables`)
goes in, parents first. Ids, turn numbers, statuses, blocks and timestamps are
copied as read. A row whose parent row was lost is treated as its
:class:`~loom_jupyter.archive.tables.Ref` says: ``home``: a session whose row was
lost is recreated ("(recovered) " + its first prompt as the title, usage summed
from its ledger rows, created when its first row was and last active when its
last turn was; ``closed`` when it was a sub-agent's), so its turns stay listed,
searchable and resumable; ``alone``: kept with the reference cleared (an
execution without its session); ``dropped``: not kept (a subtask without its
task: nothing could show it). Derived tables (the full-text index) are made
again from the saved rows once they are in.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.archive.clock import utc_now
from loom_jupyter.archive.tables import TABLES, Derived, Ref, copied_tables
from loom_jupyter.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from loom_jupyter.archive.salvage_read import TableRead
    from loom_jupyter.archive.tables import Table

__all__ = ["Written", "table_columns", "verify", "write_rows"]

Row = tuple[object, ...]

_OWNED = tuple(  # tables whose rows a recreated session is made for: their times are its own
    t.name for t in copied_tables() if Ref("session_id", "cowork_sessions", "home") in t.refs
)
_TIMES = " UNION ALL ".join(
    f"SELECT created_at AS at FROM {table} WHERE session_id = cowork_sessions.id"
    for table in _OWNED
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
    """What went into the new archive: the rowids saved per table, the sessions recreated,
    and per table the rows kept whose parent row was lost (given a home or standing alone)."""

    saved: Mapping[str, frozenset[int]]
    recreated: tuple[str, ...]
    orphans: Mapping[str, int]


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
    saved: dict[str, frozenset[int]] = {}
    homes: dict[str, None] = {}  # sessions recreated, in the order rows needed them
    for declared in copied_tables():  # parents first: a dropped row's parent is in already
        read, rows = reads[declared.name], _kept(declared, reads, saved)
        # Homes go in before the rows that need them: an insert's triggers update its session.
        _house(db, declared, rows, reads, saved, homes, notebook)
        saved[declared.name] = _insert(db, read, rows)
        kept = [row for row in rows if row[0] in saved[declared.name]]
        _house(db, declared, kept, reads, saved, homes, notebook)  # its own table's rows
    orphans = {
        t.name: _homed(t, reads[t.name], saved[t.name], set(homes)) + _stand_alone(db, t)
        for t in copied_tables()
    }
    db.executemany(_FINISH_HOME, [(utc_now(), home) for home in homes])
    for declared in TABLES:  # from the saved rows (the full-text index from the turns)
        if isinstance(declared.remake, Derived):
            db.execute(declared.remake.rebuild)
    return Written(saved, tuple(homes), orphans)


def _kept(
    declared: Table, reads: Mapping[str, TableRead], saved: Mapping[str, frozenset[int]]
) -> list[Row]:
    """The rows of ``declared`` read, but those whose ``dropped`` parent was not saved."""
    read, rows = reads[declared.name], list(reads[declared.name].rows)
    for ref in declared.refs:
        if ref.lost == "dropped":
            parents = _values(reads[ref.parent], ref.key, saved[ref.parent])
            rows = [r for r in rows if (v := _get(read, r, ref.column)) is None or v in parents]
    return rows


def _homed(declared: Table, read: TableRead, saved: frozenset[int], homes: set[str]) -> int:
    """Saved rows of ``declared`` that name a recreated session (their own row was lost)."""
    refs = [ref.column for ref in declared.refs if ref.lost == "home"]
    return sum(
        1
        for row in read.rows
        if row[0] in saved and any(_get(read, row, column) in homes for column in refs)
    )


def _stand_alone(db: sqlite3.Connection, declared: Table) -> int:
    """Clear each ``alone`` reference to a row that is not there; how many rows stand alone."""
    alone = 0
    for ref in declared.refs:
        if ref.lost == "alone":
            alone += db.execute(
                f'UPDATE "{declared.name}" SET {ref.column} = NULL WHERE {ref.column} IS NOT NULL'
                f' AND {ref.column} NOT IN (SELECT {ref.key} FROM "{ref.parent}")'
            ).rowcount
    return alone


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


def _house(
    db: sqlite3.Connection,
    declared: Table,
    rows: Sequence[Row],
    reads: Mapping[str, TableRead],
    saved: Mapping[str, frozenset[int]],
    homes: dict[str, None],
    notebook: str,
) -> None:
    """Recreate the sessions ``rows`` name through a ``home`` reference that are neither
    saved nor recreated yet (a reference to ``declared`` itself once its rows are in)."""
    sessions = reads["cowork_sessions"]
    present = _values(sessions, "id", saved.get("cowork_sessions", frozenset())) | set(homes)
    read, wanted = reads[declared.name], dict[str, None]()
    inserted = declared.name in saved  # before its rows went in: references to other tables
    for ref in declared.refs:
        if ref.lost == "home" and (ref.parent == declared.name) == inserted:
            for row in rows:
                value = _get(read, row, ref.column)
                if isinstance(value, str) and value not in present:
                    wanted[value] = None
    if wanted:
        subtasks = reads["subtasks"]
        sub_agents = {_get(subtasks, row, "child_session_id") for row in subtasks.rows}
        saved_sessions = saved.get("cowork_sessions", frozenset())
        _insert_homes(db, tuple(wanted), sessions, saved_sessions, notebook, sub_agents)
        homes.update(wanted)


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
    derived = [t.remake.check for t in TABLES if isinstance(t.remake, Derived)]
    for sql, expected in [*checks.items(), *((check, []) for check in derived)]:
        try:
            found: object = db.execute(sql).fetchall()
        except sqlite3.DatabaseError as error:
            found = str(error)
        if found != expected:
            raise ArchiveError(
                f"The recovered copy {path} failed `{sql}` ({str(found)[:300]}); it was discarded "
                "and the damaged archive left as it was. Please report this as a bug."
            )
