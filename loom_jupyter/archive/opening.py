"""Getting a file ready to be an archive: create it 0600, check it, set its journal, migrate.

Runs with the plain ``sqlite3`` module in a worker thread before the async
connection opens. A file that is not SQLite is refused before SQLite touches
it, so its bytes are never changed; so is a link (or anything but a regular file) at the
archive's path or its companions' (``archive/hygiene.py``), before SQLite could follow it.
The journal — WAL on a local disk, the rollback journal on a network or virtual
filesystem — is chosen here (``archive/journal.py``).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from typing import TYPE_CHECKING

from loom_jupyter.archive.checkpoint import BACKSTOP_PAGES
from loom_jupyter.archive.failures import (
    busy_error,
    corrupt_error,
    is_busy,
    is_shared_memory_error,
    map_sqlite_error,
    not_a_database_error,
    read_only_error,
)
from loom_jupyter.archive.filesystem import filesystem_of
from loom_jupyter.archive.hygiene import check_archive_file, open_no_follow
from loom_jupyter.archive.journal import (
    ArchiveStorage,
    Journal,
    leave_wal,
    leave_wal_without_shared_memory,
    wanted_journal,
)
from loom_jupyter.archive.schema import migrate, schema_version
from loom_jupyter.archive.tables import MIGRATIONS
from loom_jupyter.errors import ArchiveError

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.settings import JournalMode

__all__ = ["SQLITE_HEADER", "connection_pragmas", "prepare_file"]

SQLITE_HEADER = b"SQLite format 3\x00"
_READ_ONLY_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS}
_WAL_RETRY_SECONDS = 0.05


def prepare_file(
    path: Path, busy_timeout: float, journal_mode: JournalMode = "auto"
) -> ArchiveStorage:
    """Make ``path`` an up-to-date archive, creating it (mode 0600) if missing, in the
    journal ``journal_mode`` asks for on its filesystem; returns what is in force."""
    _create_or_check(path)
    filesystem = filesystem_of(path)
    wanted = wanted_journal(journal_mode, filesystem)
    db = _connect(path, busy_timeout)
    try:
        if not _readable(db, wanted):  # a WAL archive on a mount without shared mmap
            db.close()
            leave_wal_without_shared_memory(path, filesystem)
            db = _connect(path, busy_timeout)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        for pragma in connection_pragmas(busy_timeout, wanted):  # some of them read the file
            db.execute(pragma)
        _refuse_newer(db, path)
        if wanted == "wal":
            _set_wal(db, path, busy_timeout)
            mode: Journal = "wal"
        else:
            mode = leave_wal(db, busy_timeout)
        migrate(db, MIGRATIONS)
    except sqlite3.Error as error:
        raise map_sqlite_error(error, path, busy_timeout) from error
    finally:
        db.close()
    kept = wanted == "delete" and mode == "wal"
    return ArchiveStorage(path, filesystem, mode, journal_mode, kept_wal=kept)


def _readable(db: sqlite3.Connection, wanted: Journal) -> bool:
    """Read the schema once; ``False`` when WAL's shared memory failed and the rollback
    journal is wanted (the archive is then switched before it is read again)."""
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as error:
        if wanted == "wal" or not is_shared_memory_error(error):
            raise
        return False
    return True


def connection_pragmas(busy_timeout: float, journal: Journal = "wal") -> list[str]:
    """Per-connection settings (the journal itself is stored in the file).

    With the rollback journal, ``synchronous=FULL`` (a commit survives a power cut, as WAL's
    ``NORMAL`` does not promise there) and no WAL checkpoint limit.

    ``trusted_schema`` stays ON: the FTS5 index is kept by triggers, and SQLite refuses a
    virtual table in a trigger of an untrusted schema ("unsafe use of virtual table").
    No SQL function is registered, so a crafted file's triggers reach only the file.
    """
    pragmas = [
        f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}",
        "PRAGMA synchronous = NORMAL" if journal == "wal" else "PRAGMA synchronous = FULL",
        "PRAGMA foreign_keys = ON",
    ]
    if journal == "wal":
        pragmas.append(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")  # see checkpoint.py
    return pragmas


def _create_or_check(path: Path) -> None:
    check_archive_file(path)  # a link, here or at a companion, is refused unfollowed
    try:
        fd = open_no_follow(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        _check_header(path)
        return
    except OSError as error:
        raise _os_error(path, error) from error
    os.close(fd)


def _check_header(path: Path) -> None:
    try:
        fd = open_no_follow(path, os.O_RDONLY)
        try:
            head = os.read(fd, len(SQLITE_HEADER))
        finally:
            os.close(fd)
    except OSError as error:
        check_archive_file(path)  # a link put there since the first look: say so
        raise _os_error(path, error) from error
    if head and head != SQLITE_HEADER[: len(head)]:
        from loom_jupyter.archive.salvage_pages import load_image

        if load_image(path) is not None:  # the header is destroyed, the pages still read
            raise corrupt_error(path, "its header is destroyed; its pages still read")
        raise not_a_database_error(path, "the file does not start with the SQLite header")
    if 0 < len(head) < len(SQLITE_HEADER):
        raise not_a_database_error(path, "the file is too short to be a database")


def _os_error(path: Path, error: OSError) -> ArchiveError:
    if error.errno in _READ_ONLY_ERRNOS:
        return read_only_error(path, error.strerror or str(error))
    if isinstance(error, IsADirectoryError):
        return ArchiveError(f"The archive path {path} is a folder; pass the .sqlite file's path.")
    return ArchiveError(
        f"Cannot create the archive {path}: {error.strerror or error}. "
        "Check that its folder exists (archive_path_for() creates .loom/)."
    )


def _connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    try:
        return sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
    except sqlite3.Error as error:
        raise map_sqlite_error(error, path, busy_timeout) from error


def _refuse_newer(db: sqlite3.Connection, path: Path) -> None:
    version = schema_version(db)
    if version > len(MIGRATIONS):
        raise ArchiveError(
            f"The archive {path} was written by a newer loom_jupyter (schema version {version}; "
            f"this one knows {len(MIGRATIONS)}). Upgrade: pip install -U loom_jupyter."
        )


def _set_wal(db: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    """Switch a new file to WAL. Two processes creating the archive at once can each get
    "locked" at once (SQLite skips the busy handler when waiting could deadlock), so the
    switch is tried again until ``busy_timeout`` has passed."""
    deadline = time.monotonic() + busy_timeout
    while _journal_mode(db) != "wal":
        if time.monotonic() >= deadline:
            raise busy_error(path, busy_timeout)
        time.sleep(_WAL_RETRY_SECONDS)


def _journal_mode(db: sqlite3.Connection) -> str:
    """WAL once switched; the old mode (or "locked") while another connection holds a lock."""
    try:
        mode = str(db.execute("PRAGMA journal_mode").fetchone()[0])
        if mode != "wal":  # SQLite answers with the old mode when it cannot switch
            mode = str(db.execute("PRAGMA journal_mode = WAL").fetchone()[0])
    except sqlite3.OperationalError as error:
        if not is_busy(error):
            raise
        return "locked"
    return mode
