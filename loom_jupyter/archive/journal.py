"""The archive's journal: WAL on local disks, the rollback journal on shared ones.

``journal_mode`` (``LOOM_JOURNAL_MODE``, DESIGN §13) is ``auto``, ``wal`` or ``delete``.
``auto`` picks WAL on a local disk and the rollback journal (``DELETE``, with
``synchronous=FULL``) on a network or virtual filesystem (``archive/filesystem.py``):
WAL keeps its index in shared memory, which no network filesystem shares between
machines, so two kernels on two machines would each take the write lock and lose each
other's turns. The rollback journal is safe wherever the filesystem's byte-range locks
reach every machine (mount options such as ``nolock`` or ``nobrl`` stop them: then no
mode is, and :meth:`ArchiveStorage.notes` says so).

An archive already in WAL leaves it only when no other connection has it open: SQLite
refuses to leave WAL while another connection holds the file (it answers "database is
locked"), so the attempt itself is the test, and a refused archive stays in WAL with a
warning. A mount without shared ``mmap`` cannot even read a WAL archive; there the switch
runs with ``locking_mode=EXCLUSIVE`` (WAL's index then lives in this process's memory
alone, and SQLite takes the file's exclusive lock first, so it is refused in the same
cases), and the connection goes back to normal locking at once.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from loom_jupyter.archive.failures import is_busy
from loom_jupyter.errors import ArchiveBusyError

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive.filesystem import Filesystem
    from loom_jupyter.settings import JournalMode

__all__ = ["SWITCH_WAIT_SECONDS", "ArchiveStorage", "Journal", "leave_wal", "wanted_journal"]

Journal = Literal["wal", "delete"]
"""The journal in force (``PRAGMA journal_mode``)."""

SWITCH_WAIT_SECONDS = 0.25
"""How long leaving WAL waits for a lock: another connection that has the file open holds
it for as long as it stays open, so waiting longer would only delay the warning."""

_REMEDY = "or keep archives on a local disk with archive_dir (LOOM_ARCHIVE_DIR=/a/local/folder)"


@dataclass(frozen=True)
class ArchiveStorage:
    """Where an open archive lives and how it journals."""

    path: Path
    filesystem: Filesystem
    journal_mode: Journal
    setting: JournalMode = "auto"
    kept_wal: bool = False  # the rollback journal was wanted; another connection held WAL

    @property
    def synchronous(self) -> str:
        """``FULL`` with the rollback journal (a commit survives a power cut), ``NORMAL``
        with WAL (the last commits may be lost to one, the file is never damaged)."""
        return "NORMAL" if self.journal_mode == "wal" else "FULL"

    @property
    def plain(self) -> bool:
        """A local disk with WAL: the usual case, nothing to tell."""
        return self.journal_mode == "wal" and not self.filesystem.shared

    def summary(self) -> str:
        """``Archive: PATH · filesystem nfs4 (mounted at /home) · journal delete``."""
        return (
            f"Archive: {self.path} · filesystem {self.filesystem.describe()} · "
            f"journal {self.journal_mode}"
        )

    def notes(self) -> tuple[str, ...]:
        """The banner's lines: where and how, whenever it is not a local disk with WAL;
        a WAL archive left in WAL; mount options no journal mode is safe under."""
        fs = self.filesystem
        lines = []
        if not self.plain:
            why = {
                (True, "delete"): " (the rollback journal: WAL is unsafe on network and "
                "virtual filesystems)",
                (False, "delete"): f" (journal_mode: {self.setting})",
            }.get((fs.shared, self.journal_mode), "")
            lines.append(self.summary() + why + ".")
        if self.kept_wal:
            lines.append(
                f"This archive stays in WAL mode: another kernel or loom-jupyter command had it "
                f"open, and SQLite leaves WAL only when nobody has. WAL on {fs.fs_type} is safe "
                "only while every kernel using this notebook runs on this machine. Close the "
                "others, then restart this kernel: the archive then switches to the rollback "
                f"journal. Or set journal_mode: delete everywhere, {_REMEDY}."
            )
        elif self.journal_mode == "wal" and fs.shared:
            lines.append(
                f"journal_mode is wal on {fs.fs_type}: safe only while every kernel using this "
                "notebook runs on this machine (journal_mode: auto uses the rollback journal "
                "here)."
            )
        option = fs.unsafe_lock_option
        if option is not None:
            lines.append(
                f"{fs.describe()} is mounted with {option}: file locks do not reach other "
                "machines, so kernels on other machines cannot be kept out of this archive in "
                f"any journal mode. Use this notebook from one machine at a time, {_REMEDY}."
            )
        return tuple(lines)


def wanted_journal(setting: JournalMode, filesystem: Filesystem) -> Journal:
    """The journal ``setting`` asks for on ``filesystem``."""
    if setting == "auto":
        return "delete" if filesystem.shared else "wal"
    return setting


def leave_wal(db: sqlite3.Connection, busy_timeout: float) -> Journal:
    """Switch ``db`` from WAL to the rollback journal if no other connection has the file
    open; returns the journal in force (``wal`` when it stays)."""
    if str(db.execute("PRAGMA journal_mode").fetchone()[0]) != "wal":
        return "delete"  # a rollback journal already (the file header holds only WAL or not)
    db.execute(f"PRAGMA busy_timeout = {int(SWITCH_WAIT_SECONDS * 1000)}")
    try:
        mode = str(db.execute("PRAGMA journal_mode = DELETE").fetchone()[0])
    except sqlite3.OperationalError as error:
        if not is_busy(error):
            raise
        mode = "wal"
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    return "delete" if mode == "delete" else "wal"


def leave_wal_without_shared_memory(path: Path, filesystem: Filesystem) -> None:
    """Switch a WAL archive on a mount without shared ``mmap`` (where it cannot even be
    read) to the rollback journal; raises :class:`ArchiveBusyError` while another
    connection has it open."""
    db = sqlite3.connect(path, timeout=SWITCH_WAIT_SECONDS, isolation_level=None)
    try:
        db.execute("PRAGMA locking_mode = EXCLUSIVE")
        mode = str(db.execute("PRAGMA journal_mode = DELETE").fetchone()[0])
        db.execute("PRAGMA locking_mode = NORMAL")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # lets the lock go
    except sqlite3.OperationalError as error:
        if not is_busy(error):
            raise
        mode = "wal"
    finally:
        db.close()
    if mode != "delete":
        raise ArchiveBusyError(
            f"The archive {path} is in WAL mode and another kernel or loom-jupyter command has "
            f"it open, but {filesystem.describe()} cannot share WAL's memory index, so this "
            "kernel cannot read it. Close the others using this notebook and run %cowork "
            "again: Loom then switches it to the rollback journal."
        )
