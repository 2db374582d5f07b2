"""Recovering a damaged archive: save every readable row into a new one, keep the old file.

::

    report = await recover_archive(archive_path_for("analysis.ipynb"))
    report.tally("conversation_turns").saved

Steps: the file is checked (``PRAGMA integrity_check``); an intact archive is
left alone. From a damaged one every readable row of every table
(:mod:`.tables` declares them: sessions, turns, model calls, tasks, subtasks,
cell changes, executions, outside agents' marks) is copied into a new archive
built beside it with the normal schema, in two passes: the tree pass reads each table
through its b-tree as SQLite does (:mod:`.salvage_read`), then the page pass
reads every page of the file and takes the rows of each table leaf page
(:mod:`.salvage_pages`), so a misplaced page costs only its own rows. Each
row is kept once by its rowid: the tree pass's (the newest commit, as SQLite
reads it), else the newest page's. When page 1's header is destroyed, it is
rebuilt (page size from the pages, the rest from the archive's schema) in a
copy the tree pass reads. Rows go in verbatim (:mod:`.salvage_write`), a row
whose parent row was lost is kept when it can stand alone, the full-text index
is rebuilt from the saved turns, and the copy must pass
SQLite's checks and open like any archive. Only then is the damaged file
renamed ``<name>.damaged-<UTC time>`` (with its ``-wal``/``-shm``) and the copy
put in its place. A failure on the way leaves the damaged file as it was. A
file in which no page reads as a SQLite page holds nothing to save: it is
moved aside only when asked (``move_aside=True``).

Recovery refuses while another live process writes a session of the archive:
it would go on writing into the file moved aside.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
from contextlib import closing, suppress
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from loom_jupyter.archive.clock import age_seconds, utc_now
from loom_jupyter.archive.failures import is_damage, not_a_database_error
from loom_jupyter.archive.liveness import LeaseOwner, holder_is_alive
from loom_jupyter.archive.opening import prepare_file
from loom_jupyter.archive.salvage_pages import (
    PageFinds,
    PageImage,
    PageRow,
    TableShape,
    load_image,
    page_pass,
    rebuilt_header,
    schema_roots,
    table_shape,
    typed,
)
from loom_jupyter.archive.salvage_read import (
    Health,
    TableRead,
    check_health,
    read_only,
    read_table,
)
from loom_jupyter.archive.salvage_write import Written, table_columns, verify, write_rows
from loom_jupyter.archive.tables import MIGRATIONS, copied_tables, undeclared
from loom_jupyter.errors import ArchiveError, LeaseHeldError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "Health",
    "Outcome",
    "SalvageReport",
    "TableTally",
    "archive_health",
    "recover_archive",
]

Outcome = Literal["recovered", "intact", "moved_aside"]
_SIDECARS = ("", "-wal", "-shm")


@dataclass(frozen=True)
class TableTally:
    """Rows of one table: saved into the new archive, and lost to the damage."""

    table: str
    saved: int
    lost: int
    from_pages: int = 0  # of ``saved``: rows only the page pass found (the rest: the tree pass)
    orphans: int = 0  # of ``saved``: rows whose parent row was lost (a recreated home, or alone)

    @property
    def from_trees(self) -> int:
        """Rows the tree pass saved (read through the table's b-tree, as SQLite reads it)."""
        return self.saved - self.from_pages

    @property
    def total(self) -> int:
        """The rows the damaged file held (as far as it can tell)."""
        return self.saved + self.lost


@dataclass(frozen=True)
class SalvageReport:
    """What :func:`recover_archive` did."""

    outcome: Outcome
    archive: Path  # the archive now at the original path (absent after a move aside)
    damaged_copy: Path | None = None  # where the damaged file is kept
    tables: tuple[TableTally, ...] = ()
    recreated_sessions: tuple[str, ...] = ()  # lost session rows given a new one
    recreated_tasks: tuple[str, ...] = ()  # lost task rows given a new one (for their subtasks)
    latest_session_id: str | None = None  # the session a coworker resumes
    header_rebuilt: bool = False  # page 1's header was destroyed and rebuilt to read the file

    def tally(self, table: str) -> TableTally:
        """The counts of ``table`` (zeros when nothing was read)."""
        return next((t for t in self.tables if t.table == table), TableTally(table, 0, 0))


def archive_health(path: Path, *, busy_timeout: float = 5.0) -> Health:
    """``missing``, ``intact``, ``damaged`` or ``unreadable`` (nothing in it can be saved)."""
    return check_health(path.absolute(), busy_timeout)


async def recover_archive(
    path: str | os.PathLike[str],
    *,
    move_aside: bool = False,
    busy_timeout: float = 5.0,
    stale_after: float = 30.0,
) -> SalvageReport:
    """Save what can be read of the archive at ``path`` into a new archive in its place.

    Raises :class:`ArchiveCorruptError` for a file with no SQLite page unless
    ``move_aside``, :class:`LeaseHeldError` while another live process writes it.
    """
    source, health = await asyncio.to_thread(_examine, path, busy_timeout)
    if health == "missing":
        raise ArchiveError(f"There is no archive at {source}: nothing to recover.")
    if health == "intact":
        return SalvageReport("intact", source)
    if health == "unreadable":
        return await asyncio.to_thread(_unreadable, source, move_aside=move_aside)
    return await _recover(source, busy_timeout, stale_after)


def _examine(path: str | os.PathLike[str], busy_timeout: float) -> tuple[Path, Health]:
    source = Path(path).expanduser().absolute()
    return source, check_health(source, busy_timeout)


def _unreadable(source: Path, *, move_aside: bool) -> SalvageReport:
    if not move_aside:
        detail = "no page of it reads as a SQLite page"
        raise not_a_database_error(source, detail)
    return SalvageReport("moved_aside", source, damaged_copy=_keep_aside(source))


async def _recover(source: Path, busy_timeout: float, stale_after: float) -> SalvageReport:
    staged = _staging_path(source)
    try:
        report = await asyncio.to_thread(_salvage, source, staged, busy_timeout, stale_after)
        latest = await _latest_session(staged, busy_timeout)  # the app's own opening checks
        kept = await asyncio.to_thread(_swap, source, staged)
    except BaseException:
        _remove(staged)
        raise
    return SalvageReport(
        "recovered",
        source,
        damaged_copy=kept,
        tables=report.tables,
        recreated_sessions=report.recreated_sessions,
        recreated_tasks=report.recreated_tasks,
        latest_session_id=latest,
        header_rebuilt=report.header_rebuilt,
    )


def _salvage(source: Path, staged: Path, busy_timeout: float, stale_after: float) -> SalvageReport:
    """Read ``source``, write the new archive ``staged``; the tallies (sync, a worker thread)."""
    prepare_file(staged, busy_timeout)
    image = load_image(source)
    if image is None:  # it changed since it was examined
        raise not_a_database_error(source, "no page of it reads as a SQLite page")
    patched = Path(f"{staged}.header")
    try:
        with closing(sqlite3.connect(staged, isolation_level=None)) as new:
            _refuse_undeclared(new, source)
            wanted = {t.name: table_columns(new, t.name) for t in copied_tables()}
            trees, old_shapes, rebuilt = _tree_pass(source, patched, image, wanted, busy_timeout)
            shapes = {t: old_shapes.get(t) or table_shape(new, t) for t in wanted}
            found = page_pass(image, shapes, _roots(image, patched if rebuilt else source))
            reads, from_pages = {}, {}
            for table in wanted:
                reads[table], from_pages[table] = _merge(
                    trees[table], found, shapes[table], wanted[table]
                )
            _refuse_live_writers(reads["cowork_sessions"], source, stale_after)
            new.execute("PRAGMA foreign_keys = ON")
            written = write_rows(new, reads, str(_notebook_of(source)))
            verify(new, staged)
    finally:
        patched.unlink(missing_ok=True)
    return SalvageReport(
        "recovered",
        source,
        tables=_tallies(reads, written, from_pages),
        recreated_sessions=written.recreated,
        recreated_tasks=written.recreated_tasks,
        header_rebuilt=rebuilt,
    )


def _tree_pass(
    source: Path,
    patched: Path,
    image: PageImage,
    wanted: dict[str, tuple[str, ...]],
    busy_timeout: float,
) -> tuple[dict[str, TableRead], dict[str, TableShape], bool]:
    """The rows SQLite reads through each table's b-tree, the tables' shapes in the file,
    and whether the header had to be rebuilt (then read from a patched copy, ``patched``).

    Nothing is read this way when the schema page itself is lost.
    """
    rebuilt = False
    if not image.header_ok:
        patched.write_bytes(rebuilt_header(image, len(MIGRATIONS)) + image.image()[100:])
        rebuilt = True
    try:
        with closing(read_only(patched if rebuilt else source, busy_timeout)) as old:
            old.execute("SELECT count(*) FROM sqlite_master").fetchone()
            trees = {table: read_table(old, table, columns) for table, columns in wanted.items()}
            shapes = {t: table_shape(old, t) for t in wanted if trees[t].columns}
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            raise
        empty = TableRead("", (), (), frozenset(), None)
        return {t: replace(empty, table=t) for t in wanted}, {}, rebuilt
    return trees, shapes, rebuilt


def _merge(
    read: TableRead, finds: PageFinds, shape: TableShape, columns: tuple[str, ...]
) -> tuple[TableRead, frozenset[int]]:
    """The tree pass's rows and the page pass's, once per rowid; the rowids only pages gave.

    The tree pass read the file as SQLite does (its newest commit): its row wins,
    unless its values do not fit the table (a misplaced page read through a
    damaged tree) or the page pass found the rowid's payload running through a
    damaged overflow chain (SQLite reads another page's bytes there without an
    error): then the page pass's intact row takes its place, if it has one, else
    the row is lost. ``columns``: the columns to fill when the tree pass read
    none (the schema itself was lost).
    """
    found: Mapping[int, PageRow] = finds.rows.get(read.table, {})
    damaged = finds.damaged.get(read.table, frozenset())
    wanted = read.columns or tuple(c for c in columns if shape.column(c) is not None)
    named = [shape.column(name) for name in read.columns]
    rows: dict[int, tuple[object, ...]] = {}
    misread = set()
    for row in read.rows:
        pairs = zip(named, row[1:], strict=True)
        rowid = int(str(row[0]))
        fits = all(c is None or c.rowid_alias or typed(c, v) for c, v in pairs)
        if fits and rowid not in damaged:
            rows[rowid] = row
        else:
            misread.add(rowid)
    at = {c.name: i for i, c in enumerate(shape.columns)}
    pages: dict[int, tuple[object, ...]] = {}
    # Newest first, so of two rows that break a UNIQUE constraint the newer goes in.
    for rowid, page in sorted(found.items(), key=lambda item: (-item[1].rank[0], item[0])):
        if rowid in rows:
            continue
        values: list[object] = []
        for name in wanted:
            column, index = shape.columns[at[name]], at[name]
            if column.rowid_alias:
                values.append(rowid)
            else:
                values.append(page.values[index] if index < len(page.values) else column.default)
        pages[rowid] = (rowid, *values)
    merged = TableRead(
        read.table,
        wanted,
        # The tree pass's rows go in first: a page's row never displaces the newest commit's.
        (*(rows[rowid] for rowid in sorted(rows)), *pages.values()),
        read.unreadable | misread,
        read.indexed,
    )
    from_pages = frozenset(pages)
    return merged, frozenset(from_pages)


def _roots(image: PageImage, readable: Path) -> dict[str, int]:
    """Each table's root page: as SQLite reads the schema, else as our reader does."""
    roots = schema_roots(image)
    try:
        with closing(read_only(readable, 1.0)) as db:
            listed = db.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'")
            roots.update({str(name): int(root) for name, root in listed if isinstance(root, int)})
    except (sqlite3.DatabaseError, ArchiveError):
        pass
    return roots  # every table's: a page another table's tree reaches is not a ledger page


def _tallies(
    reads: dict[str, TableRead], written: Written, from_pages: dict[str, frozenset[int]]
) -> tuple[TableTally, ...]:
    tallies = []
    for table, read in reads.items():
        saved = written.saved[table]
        lost = read.lost(saved)
        if table == "conversation_turns" and read.indexed is None:  # no index to count them
            lost = max(lost, _turn_counts(reads["cowork_sessions"]) - len(saved))
        found = len(saved & from_pages[table])
        tallies.append(TableTally(table, len(saved), lost, found, written.orphans[table]))
    return tuple(tallies)


def _refuse_undeclared(new: sqlite3.Connection, source: Path) -> None:
    """Raise when the new archive's schema has a table no declaration covers: it would be
    left behind (a bug: every table is declared in ``archive/tables.py``)."""
    missing = undeclared(new)
    if missing:
        raise ArchiveError(
            f"Cannot recover {source}: the archive's table(s) {', '.join(missing)} have no "
            "declaration in loom_jupyter/archive/tables.py, so their rows would be lost; "
            "nothing was changed. Please report this as a bug."
        )


def _turn_counts(sessions: TableRead) -> int:
    """The turns the sessions read say they hold (a session numbers its turns 1..turn_count)."""
    if "turn_count" not in sessions.columns:
        return 0
    at = sessions.columns.index("turn_count") + 1
    return sum(value for row in sessions.rows if isinstance(value := row[at], int))


def _refuse_live_writers(sessions: TableRead, source: Path, stale_after: float) -> None:
    """Raise when a live process other than this one holds a lease on a session."""
    if "lease_owner" not in sessions.columns:
        return
    at = {name: sessions.columns.index(name) + 1 for name in ("id", "lease_owner")}
    beat_at = sessions.columns.index("lease_heartbeat") + 1
    now = utc_now()
    for row in sessions.rows:
        holder, beat = row[at["lease_owner"]], row[beat_at]
        if not isinstance(holder, str) or _is_this_process(holder):
            continue
        quiet = age_seconds(beat, now) if isinstance(beat, str) else None
        if holder_is_alive(holder, heartbeat_age=quiet, stale_after=stale_after):
            raise LeaseHeldError(
                f"The archive {source} is being written by a live process ({holder}, session "
                f"{str(row[at['id']])[:8]}). Shut that kernel down (or run %cowork recover in "
                "it), then recover again; nothing was changed."
            )


def _is_this_process(holder: str) -> bool:
    owner = LeaseOwner.parse(holder)
    return owner is not None and owner.host == socket.gethostname() and owner.pid == os.getpid()


def _notebook_of(archive: Path) -> Path:
    """The notebook an archive ``<dir>/.loom/<name>.sqlite`` belongs to."""
    return archive.parent.parent / archive.name.removesuffix(".sqlite")


async def _latest_session(staged: Path, busy_timeout: float) -> str | None:
    from loom_jupyter.archive.core import Archive

    async with Archive.open(staged, busy_timeout=busy_timeout) as archive:
        latest = await archive.latest_active_session()
    return None if latest is None else latest.id


def _swap(source: Path, staged: Path) -> Path:
    """Keep the damaged file aside and put the new archive in its place; the kept path."""
    kept = _keep_aside(source)
    try:
        staged.rename(source)
    except OSError:
        _move(kept, source)  # the damaged file back where it was; the copy is removed
        raise
    return kept


def _keep_aside(source: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    kept = source.with_name(f"{source.name}.damaged-{stamp}")
    serial = 1
    while any(Path(f"{kept}{suffix}").exists() for suffix in _SIDECARS):
        serial += 1
        kept = source.with_name(f"{source.name}.damaged-{stamp}-{serial}")
    _move(source, kept)
    return kept


def _move(source: Path, target: Path) -> None:
    """Rename a database file and its ``-wal``/``-shm`` together."""
    for suffix in _SIDECARS:
        with suppress(FileNotFoundError):
            Path(f"{source}{suffix}").rename(f"{target}{suffix}")


def _staging_path(source: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    return source.with_name(f"{source.name}.recovering-{stamp}")


def _remove(staged: Path) -> None:
    for suffix in _SIDECARS:
        Path(f"{staged}{suffix}").unlink(missing_ok=True)
