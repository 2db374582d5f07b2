"""The :class:`Archive`: one notebook's conversations in one SQLite file."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_jupyter.archive.cell_changes import CellChangesMixin
from loom_jupyter.archive.clock import SYSTEM_CLOCK
from loom_jupyter.archive.db import Db
from loom_jupyter.archive.executions import ExecutionsMixin
from loom_jupyter.archive.failures import map_sqlite_error
from loom_jupyter.archive.lease import LeaseMixin
from loom_jupyter.archive.ledger import LedgerMixin
from loom_jupyter.archive.opening import connection_pragmas, prepare_file
from loom_jupyter.archive.outside import OutsideCallsMixin
from loom_jupyter.archive.session_tables import SessionTablesMixin
from loom_jupyter.archive.sessions import SessionsMixin
from loom_jupyter.archive.tasks import TasksMixin
from loom_jupyter.archive.turn_index import TailIndexer
from loom_jupyter.archive.turns import TurnsMixin
from loom_jupyter.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Coroutine, Generator
    from types import TracebackType

    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.filesystem import Filesystem
    from loom_jupyter.archive.journal import ArchiveStorage, Journal
    from loom_jupyter.settings import JournalMode

__all__ = ["Archive"]


class Archive(
    SessionsMixin,
    TurnsMixin,
    LedgerMixin,
    LeaseMixin,
    TasksMixin,
    CellChangesMixin,
    ExecutionsMixin,
    OutsideCallsMixin,
    SessionTablesMixin,
):
    """An open archive. Get one with ``async with Archive.open(path) as archive``.

    Every write is its own committed transaction before the call returns;
    WAL lets other processes read while one writes (on a local disk; on a network or
    virtual filesystem the rollback journal is used: :attr:`storage`).
    """

    def __init__(
        self, db: Db, clock: Clock = SYSTEM_CLOCK, storage: ArchiveStorage | None = None
    ) -> None:
        self._db = db
        self._clock = clock
        self._storage = storage
        # A read-only view (no storage) never writes, so never indexes (turn_index.py).
        self._indexer = None if storage is None else TailIndexer(self._index_idle)

    @property
    def storage(self) -> ArchiveStorage | None:
        """Its filesystem and journal as found at open (``None`` for a read-only view)."""
        return self._storage

    @property
    def journal_mode(self) -> Journal | None:
        """``wal`` or ``delete`` (the rollback journal), as in force since open."""
        return None if self._storage is None else self._storage.journal_mode

    @property
    def filesystem(self) -> Filesystem:
        """The filesystem holding the archive (``archive/filesystem.py``)."""
        if self._storage is not None:
            return self._storage.filesystem
        from loom_jupyter.archive.filesystem import filesystem_of

        return filesystem_of(self.path)

    @property
    def clock(self) -> Clock:
        """Where this archive's timestamps (and its writers' heartbeats) get the time."""
        return self._clock

    @property
    def path(self) -> Path:
        """The archive file."""
        return self._db.path

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
        clock: Clock = SYSTEM_CLOCK,
        journal_mode: JournalMode = "auto",
    ) -> _Opening:
        """Open (creating with mode 0600 and migrating as needed) the archive at ``path``;
        its timestamps come from ``clock`` (tests pass a ``ManualClock``); its journal is
        ``journal_mode``'s choice for its filesystem (``archive/journal.py``).

        Use as ``async with Archive.open(p) as a`` or ``a = await Archive.open(p)``
        (then ``await a.close()``). Raises :class:`~loom_jupyter.errors.ArchiveError`
        subclasses: busy, corrupt (file untouched) or read-only.
        """
        return _Opening(Path(path).expanduser().absolute(), busy_timeout, clock, journal_mode)

    async def save_copy(self, target: str | os.PathLike[str]) -> None:
        """Write a consistent copy of the archive to ``target`` (created 0600; must not exist).

        Works even when this archive's own file was deleted while open: the
        connection still reads it, so the copy brings it back (``VACUUM INTO``).
        """
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        await self._db.execute("VACUUM INTO ?", (os.fspath(target),))

    async def close(self) -> None:
        """Index the turns not yet in the full-text index, then close the connection;
        safe to call twice."""
        try:
            if self._indexer is not None:
                await self._indexer.stop()
                with contextlib.suppress(ArchiveError):  # closed, busy or damaged
                    await self.index_turns()
        finally:
            await self._db.close()

    async def _index_idle(self) -> None:
        """The idle indexing: the tail up to a streaming answer's row."""
        await self.index_turns(past_partial=False)

    async def __aenter__(self) -> Archive:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"Archive({str(self.path)!r})"


class _Opening:
    """What :meth:`Archive.open` returns: awaitable, or an async context manager."""

    def __init__(
        self, path: Path, busy_timeout: float, clock: Clock, journal_mode: JournalMode
    ) -> None:
        self._path = path
        self._busy_timeout = busy_timeout
        self._clock = clock
        self._journal_mode: JournalMode = journal_mode
        self._archive: Archive | None = None

    def __await__(self) -> Generator[Any, None, Archive]:
        return self._open().__await__()

    async def __aenter__(self) -> Archive:
        self._archive = await self._open()
        return self._archive

    def _open(self) -> Coroutine[Any, Any, Archive]:
        return _open(self._path, self._busy_timeout, self._clock, self._journal_mode)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._archive is not None:
            await self._archive.close()


async def _open(
    path: Path, busy_timeout: float, clock: Clock, journal_mode: JournalMode
) -> Archive:
    import aiosqlite  # deferred: importing the package must stay light

    storage = await asyncio.to_thread(prepare_file, path, busy_timeout, journal_mode)
    try:
        conn = await aiosqlite.connect(path, timeout=busy_timeout, isolation_level=None)
    except sqlite3.Error as error:
        raise map_sqlite_error(error, path, busy_timeout) from error
    conn.row_factory = sqlite3.Row
    wal = storage.journal_mode == "wal"
    db = Db(conn, path, busy_timeout, checkpoints=wal)  # no WAL, nothing to checkpoint
    try:
        for pragma in connection_pragmas(busy_timeout, storage.journal_mode):
            await db.execute(pragma)
    except BaseException:
        await db.close()
        raise
    archive = Archive(db, clock, storage)
    if archive._indexer is not None:
        archive._indexer.nudge()  # a tail left by a killed writer is indexed once idle
    return archive
