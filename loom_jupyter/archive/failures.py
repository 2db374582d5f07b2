"""The one place where sqlite3 errors become archive errors with a clear message."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.archive.filesystem import filesystem_of
from loom_jupyter.errors import (
    ArchiveBusyError,
    ArchiveCorruptError,
    ArchiveError,
    ArchiveReadOnlyError,
)

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

    from loom_jupyter.archive.filesystem import Filesystem

__all__ = [
    "busy_error",
    "corrupt_error",
    "filesystem_error",
    "is_busy",
    "is_damage",
    "is_shared_memory_error",
    "map_sqlite_error",
    "not_a_database_error",
    "read_only_error",
]

# Primary result codes (the low byte of sqlite_errorcode).
_BUSY, _LOCKED, _READONLY, _CORRUPT, _CANTOPEN, _NOTADB, _PERM, _FULL = 5, 6, 8, 11, 14, 26, 3, 13
_IOERR = 10
# Extended codes: SQLITE_IOERR_SHMOPEN, _SHMSIZE, _SHMLOCK, _SHMMAP (WAL's shared memory) and
# SQLITE_IOERR_UNLOCK, _RDLOCK, _CHECKRESERVEDLOCK, _LOCK (file locks).
_SHM_CODES = frozenset({4618, 4874, 5130, 5386})
_LOCK_CODES = frozenset({2058, 2314, 3594, 3850})
_LOCAL_DISK = "keep archives on a local disk with archive_dir (LOOM_ARCHIVE_DIR=/a/local/folder)"
_DAMAGE_SIGNS = ("malformed", "not a database", "Could not decode to UTF-8")


def busy_error(path: Path, timeout: float) -> ArchiveBusyError:
    """Another process kept the archive locked for longer than ``timeout`` seconds."""
    return ArchiveBusyError(
        f"The archive {path} is locked by another process (waited {timeout:g} s). "
        "Another kernel or `loom-jupyter` command is writing to it: let it finish or "
        "close it, then try again (or raise LOOM_BUSY_TIMEOUT_SECONDS)."
    )


def corrupt_error(path: Path, detail: str) -> ArchiveCorruptError:
    """The file is damaged; it has not been modified."""
    return ArchiveCorruptError(
        f"The archive {path} is not a readable SQLite database ({detail}). "
        "It was left untouched. Run %cowork recover in the notebook (or `loom-jupyter "
        "recover NOTEBOOK` in a terminal) to copy every row that can still be read into a "
        "new archive; the damaged file is kept beside it."
    )


def not_a_database_error(path: Path, detail: str) -> ArchiveCorruptError:
    """The file is not SQLite at all (nothing in it can be salvaged); it has not been modified."""
    return ArchiveCorruptError(
        f"The archive {path} is not a readable SQLite database ({detail}). "
        "It was left untouched. Nothing in it can be read as turns: restore it from a "
        "backup, or run %cowork recover --move-aside (`loom-jupyter recover NOTEBOOK "
        "--move-aside` in a terminal) to keep it aside and start a new, empty archive."
    )


def read_only_error(path: Path, detail: str) -> ArchiveReadOnlyError:
    """The archive or its folder cannot be written."""
    return ArchiveReadOnlyError(
        f"The archive {path} cannot be written ({detail}). Make the file and its folder "
        f"{path.parent} writable (SQLite also writes -wal and -shm files beside it), "
        "or move the notebook to a writable folder."
    )


def map_sqlite_error(error: sqlite3.Error, path: Path, busy_timeout: float) -> ArchiveError:
    """The archive error that explains ``error``."""
    code = _primary_code(error)
    text = str(error)
    if is_busy(error):
        return busy_error(path, busy_timeout)
    if is_damage(error):
        return corrupt_error(path, text)
    if code in (_READONLY, _CANTOPEN, _PERM) or "readonly" in text or "unable to open" in text:
        return read_only_error(path, text)
    if code == _FULL:
        return ArchiveError(f"The disk holding {path} is full; free some space and try again.")
    if code == _IOERR or (code is None and "disk I/O error" in text):
        filesystem = filesystem_of(path)
        if filesystem.shared or _extended_code(error) in _SHM_CODES | _LOCK_CODES:
            return filesystem_error(path, filesystem, error)
    return ArchiveError(f"The archive {path} failed: {text}")


def filesystem_error(path: Path, filesystem: Filesystem, error: sqlite3.Error) -> ArchiveError:
    """An I/O error the filesystem explains: it names the filesystem, its mount point and
    what to do."""
    where = f"The archive {path} failed on {filesystem.describe()}: {error}"
    extended = _extended_code(error)
    if extended in _SHM_CODES:
        return ArchiveError(
            f"{where}. SQLite's WAL journal needs memory shared through the file (mmap), which "
            f"{filesystem.fs_type} does not give. Use the rollback journal — journal_mode: auto "
            f"or delete (LOOM_JOURNAL_MODE=delete) — or {_LOCAL_DISK}."
        )
    if extended in _LOCK_CODES:
        return ArchiveError(
            f"{where}. {filesystem.fs_type} refused a file lock: its locking is off or broken "
            f"here (NFS needs lockd or NFSv4; SMB must not be mounted with nobrl). Fix the "
            f"mount's locking, or {_LOCAL_DISK}."
        )
    return ArchiveError(
        f"{where}. SQLite on network and virtual filesystems fails where a local disk does not "
        f"(WAL needs shared memory; every journal needs working file locks). Use "
        f"journal_mode: auto or delete (LOOM_JOURNAL_MODE=delete), or {_LOCAL_DISK}."
    )


def is_shared_memory_error(error: sqlite3.Error) -> bool:
    """Whether ``error`` is WAL's shared memory failing (a mount without shared ``mmap``)."""
    return _extended_code(error) in _SHM_CODES


def is_busy(error: sqlite3.Error) -> bool:
    """Whether ``error`` means another connection holds a lock (worth waiting for)."""
    return _primary_code(error) in (_BUSY, _LOCKED) or "locked" in str(error)


def is_damage(error: sqlite3.Error) -> bool:
    """Whether ``error`` means the file's bytes are damaged (or not a database at all).

    Text that is not UTF-8 counts: the archive writes only UTF-8, so such bytes
    are garbage on a page SQLite itself cannot tell is damaged (an overflow page).
    """
    text = str(error)
    damaged = _primary_code(error) in (_CORRUPT, _NOTADB)
    return damaged or any(sign in text for sign in _DAMAGE_SIGNS)


def _extended_code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)  # Python >= 3.11
    return None if code is None else int(code)


def _primary_code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)  # Python >= 3.11
    return None if code is None else int(code) & 0xFF
