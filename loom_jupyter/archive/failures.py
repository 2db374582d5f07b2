"""The one place where sqlite3 errors become archive errors with a clear message."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.errors import (
    ArchiveBusyError,
    ArchiveCorruptError,
    ArchiveError,
    ArchiveReadOnlyError,
)

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

__all__ = ["busy_error", "corrupt_error", "is_busy", "map_sqlite_error", "read_only_error"]

# Primary result codes (the low byte of sqlite_errorcode).
_BUSY, _LOCKED, _READONLY, _CORRUPT, _CANTOPEN, _NOTADB, _PERM, _FULL = 5, 6, 8, 11, 14, 26, 3, 13


def busy_error(path: Path, timeout: float) -> ArchiveBusyError:
    """Another process kept the archive locked for longer than ``timeout`` seconds."""
    return ArchiveBusyError(
        f"The archive {path} is locked by another process (waited {timeout:g} s). "
        "Another kernel or `loom-jupyter` command is writing to it: let it finish or "
        "close it, then try again (or raise LOOM_BUSY_TIMEOUT_SECONDS)."
    )


def corrupt_error(path: Path, detail: str) -> ArchiveCorruptError:
    """The file is not a usable SQLite database; it has not been modified."""
    return ArchiveCorruptError(
        f"The archive {path} is not a readable SQLite database ({detail}). "
        "It was left untouched: move it aside to start a new archive, or restore it "
        "from a backup (the `sqlite3` shell's `.recover` can often salvage turns)."
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
    if code in (_CORRUPT, _NOTADB) or "malformed" in text or "not a database" in text:
        return corrupt_error(path, text)
    if code in (_READONLY, _CANTOPEN, _PERM) or "readonly" in text or "unable to open" in text:
        return read_only_error(path, text)
    if code == _FULL:
        return ArchiveError(f"The disk holding {path} is full; free some space and try again.")
    return ArchiveError(f"The archive {path} failed: {text}")


def is_busy(error: sqlite3.Error) -> bool:
    """Whether ``error`` means another connection holds a lock (worth waiting for)."""
    return _primary_code(error) in (_BUSY, _LOCKED) or "locked" in str(error)


def _primary_code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)  # Python >= 3.11
    return None if code is None else int(code) & 0xFF
