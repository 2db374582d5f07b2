"""Writing the rows saved from a damaged archive into a new one, verbatim.

Every table a recovery copies (:func:`~loom_jupyter.archive.tables.copied_tables`)
goes in, parents first. Ids, turn numbers, statuses, blocks and timestamps are
copied as read. A row whose parent row was lost is kept as its
:class:`~loom_jupyter.archive.tables.Ref` says: ``home``: its parent is recreated
(:mod:`.salvage_homes`: a session "(recovered) …", a task "(recovered task)"), so
its turns stay listed, searchable and resumable; ``alone``: with the reference
cleared (an execution without its session). Derived tables (the full-text index)
are made again from the saved rows once they are in.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.archive.salvage_homes import Homes
from loom_jupyter.archive.tables import TABLES, Derived, copied_tables
from loom_jupyter.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from loom_jupyter.archive.salvage_read import TableRead
    from loom_jupyter.archive.tables import ArchiveTable

__all__ = ["Written", "table_columns", "verify", "write_rows"]

Row = tuple[object, ...]


@dataclass(frozen=True)
class Written:
    """What went into the new archive: the rowids saved per table, the sessions recreated,
    and per table the rows kept whose parent row was lost (given a home or standing alone)."""

    saved: Mapping[str, frozenset[int]]
    recreated: tuple[str, ...]  # sessions
    orphans: Mapping[str, int]
    recreated_tasks: tuple[str, ...] = ()


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
    homes = Homes(db, reads, notebook)
    for declared in copied_tables():  # parents first
        read = reads[declared.name]
        rows = homes.house(declared, read.rows, saved)  # before its rows: their triggers
        saved[declared.name] = _insert(db, read, rows)
        homes.house(declared, [r for r in rows if r[0] in saved[declared.name]], saved)
    orphans = {t.name: homes.homed(t, saved[t.name]) + _stand_alone(db, t) for t in copied_tables()}
    homes.finish()
    for declared in TABLES:  # from the saved rows (the full-text index from the turns)
        if isinstance(declared.remake, Derived):
            db.execute(declared.remake.rebuild)
    made = homes.made
    return Written(saved, tuple(made["cowork_sessions"]), orphans, tuple(made["tasks"]))


def _stand_alone(db: sqlite3.Connection, declared: ArchiveTable) -> int:
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
