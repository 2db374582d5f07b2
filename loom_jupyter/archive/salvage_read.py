"""Reading what can still be read from a damaged archive, row by row.

The file is opened read-only (its WAL included) and never written. Each table
a recovery copies (:func:`~loom_jupyter.archive.tables.copied_tables`) is read
by rowid ranges; a range that SQLite reports damaged is cut in half until the
damage is pinned to single rowids, so one overwritten page costs the rows on
that page and nothing else. How many rows there should be comes from the
indexes that still read whole (each holds every rowid), else from the
unreadable rowids themselves.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loom_jupyter.archive.failures import is_damage, map_sqlite_error
from loom_jupyter.archive.opening import SQLITE_HEADER
from loom_jupyter.archive.salvage_pages import load_image

__all__ = [
    "Health",
    "TableRead",
    "check_health",
    "has_header",
    "read_only",
    "read_table",
]

Health = Literal["missing", "intact", "damaged", "unreadable"]
"""``unreadable``: not SQLite at all, no page of it reads as one (nothing can be saved)."""

_CHUNK = 256  # rowids per range read
_EMPTY_RUN = 16  # ranges in a row without a row read end a scan whose end is unknown


@dataclass(frozen=True)
class TableRead:
    """The readable rows of one table: ``rowid`` first, then ``columns``."""

    table: str
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    unreadable: frozenset[int]  # rowids whose read SQLite reported damaged
    indexed: frozenset[int] | None  # every rowid, from an index that read whole

    def lost(self, saved: frozenset[int]) -> int:
        """Rows the damaged file held that are not among the ``saved`` rowids."""
        if self.indexed is not None:
            return len(self.indexed - saved)
        return len(self.unreadable - saved) + sum(1 for row in self.rows if row[0] not in saved)


def read_only(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A read-only connection to ``path``; its ``-wal``, if any, is read too.

    Without a ``-wal`` the file is opened ``immutable``, so not even the empty
    ``-wal``/``-shm`` files of a read are created beside it.
    """
    has_wal = Path(f"{path}-wal").exists()
    mode = "mode=ro" if has_wal else "immutable=1"
    try:
        db = sqlite3.connect(
            f"{path.as_uri()}?{mode}", uri=True, timeout=busy_timeout, isolation_level=None
        )
        # Lets SQLite read a file shorter than its header says (cut off): nothing is written.
        db.execute("PRAGMA writable_schema = ON")
    except sqlite3.Error as error:
        raise map_sqlite_error(error, path, busy_timeout) from error
    return db


def check_health(path: Path, busy_timeout: float) -> Health:
    """Whether the archive at ``path`` is missing, intact, damaged or unreadable."""
    if not path.is_file():
        return "missing"
    if not has_header(path):
        return _pages_read(path)
    with closing(read_only(path, busy_timeout)) as db:
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as error:
            if is_damage(error):
                return _pages_read(path)
            raise map_sqlite_error(error, path, busy_timeout) from error
        return "intact" if _integrity_ok(db, path, busy_timeout) else "damaged"


def _pages_read(path: Path) -> Health:
    """``damaged`` when some page of a file SQLite cannot open still reads as a SQLite page."""
    return "unreadable" if load_image(path) is None else "damaged"


def has_header(path: Path) -> bool:
    """Whether ``path`` starts like a SQLite database (or is empty, a new one)."""
    with path.open("rb") as handle:
        head = handle.read(len(SQLITE_HEADER))
    return head == SQLITE_HEADER or not head  # an empty file is an empty database


def _integrity_ok(db: sqlite3.Connection, path: Path, busy_timeout: float) -> bool:
    try:
        return db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    except sqlite3.DatabaseError as error:
        if is_damage(error):
            return False
        raise map_sqlite_error(error, path, busy_timeout) from error


def read_table(db: sqlite3.Connection, table: str, wanted: tuple[str, ...]) -> TableRead:
    """Every readable row of ``table``: the ``wanted`` columns the damaged file has."""
    columns = tuple(c for c in wanted if c in _columns(db, table))
    if not columns:  # an archive from before this table existed
        return TableRead(table, (), (), frozenset(), frozenset())
    indexed = _indexed_rowids(db, table)
    reader = _RangeReader(db, f'SELECT rowid, {", ".join(columns)} FROM "{table}"')
    reader.scan(_last_rowid(db, table, indexed))
    return TableRead(table, columns, tuple(reader.rows), frozenset(reader.unreadable), indexed)


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in db.execute(f'PRAGMA table_info("{table}")')}


def _indexed_rowids(db: sqlite3.Connection, table: str) -> frozenset[int] | None:
    """The table's rowids as the indexes that read whole have them (partial ones skipped).

    Each holds every rowid; a valid page copied over one of them reads whole but hides
    the rowids it replaced, so the indexes' union is taken.
    """
    rowids: frozenset[int] | None = None
    for index in db.execute(f'PRAGMA index_list("{table}")').fetchall():
        name, partial = str(index[1]), bool(index[4])
        if partial:
            continue
        try:
            found = db.execute(f'SELECT rowid FROM "{table}" INDEXED BY "{name}"').fetchall()
        except sqlite3.DatabaseError as error:
            if not is_damage(error):
                raise
            continue
        rowids = (rowids or frozenset()) | {int(row[0]) for row in found}
    return rowids


def _last_rowid(db: sqlite3.Connection, table: str, indexed: frozenset[int] | None) -> int | None:
    """The largest rowid the table or its index knows; ``None`` when neither can tell."""
    known = [max(indexed)] if indexed else []
    try:
        top = db.execute(f'SELECT max(rowid) FROM "{table}"').fetchone()[0]
    except sqlite3.DatabaseError as error:  # the b-tree's rightmost path is damaged
        if not is_damage(error):
            raise
    else:
        known.append(int(top or 0))
    return max(known) if known else None


class _RangeReader:
    """Reads rowid ranges, halving any range that reports damage down to single rowids."""

    def __init__(self, db: sqlite3.Connection, select: str) -> None:
        self._db = db
        self._range = f"{select} WHERE rowid BETWEEN ? AND ? ORDER BY rowid"
        # One rowid is looked up, not scanned: a scan steps on into the next (maybe damaged) page.
        self._point = f"{select} WHERE rowid = ?"
        table = select.rsplit(" FROM ", 1)[1]
        self._next = f"SELECT rowid FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1"
        self.rows: list[tuple[object, ...]] = []
        self._unreadable: list[int] = []

    @property
    def unreadable(self) -> list[int]:
        """Rowids whose read reported damage."""
        return self._unreadable

    def scan(self, last: int | None) -> None:
        """Read rowids 1..``last``.

        With ``last`` unknown (the table and its indexes are damaged at their end),
        read until a long run of ranges gives no row; the unreadable rowids past
        the last row read are not counted: nothing says rows were there.
        """
        start, idle = 1, 0
        while start <= last if last is not None else idle < _EMPTY_RUN:
            before, damaged = len(self.rows), len(self._unreadable)
            self.read(start, start + _CHUNK - 1)
            idle = idle + 1 if len(self.rows) == before else 0
            start += _CHUNK
            if len(self.rows) == before and len(self._unreadable) == damaged:
                # An empty, undamaged range: go on from the next row the tree holds, so a
                # garbled "last rowid" (a copied page's) is never read chunk by chunk.
                following = self._next_rowid(start - 1)
                if following == "none":
                    break
                if following != "damaged":
                    start = max(start, following)
        if last is None:
            end = max((int(str(row[0])) for row in self.rows), default=0)
            self._unreadable = [rowid for rowid in self._unreadable if rowid < end]

    def _next_rowid(self, after: int) -> int | Literal["none", "damaged"]:
        """The smallest rowid past ``after`` the table's tree holds, ``"none"`` when it
        cleanly holds none, ``"damaged"`` when the tree reports damage on the way."""
        try:
            row = self._db.execute(self._next, (after,)).fetchone()
        except sqlite3.DatabaseError as error:
            if not is_damage(error):
                raise
            return "damaged"
        return "none" if row is None else int(row[0])

    def read(self, low: int, high: int) -> None:
        """Rows with rowid in ``low..high``."""
        sql, params = (self._point, (low,)) if low == high else (self._range, (low, high))
        try:
            found = self._db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as error:
            if not is_damage(error):  # garbled text too: the row is lost, not saved with a hole
                raise
            self._split(low, high)
            return
        self.rows += [tuple(row) for row in found]

    def _split(self, low: int, high: int) -> None:
        if low == high:
            self._unreadable.append(low)
            return
        middle = (low + high) // 2
        self.read(low, middle)
        self.read(middle + 1, high)
