"""A small async front over one aiosqlite connection.

Every statement goes through here, so every sqlite3 error is mapped once and
statements from concurrent coroutines never interleave inside a transaction.
Once SQLite reports the file damaged, every later call fails the same way, so
nothing more is written into a corrupt file.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from loom_jupyter.archive.checkpoint import IdleCheckpointer
from loom_jupyter.archive.failures import map_sqlite_error
from loom_jupyter.errors import ArchiveCorruptError, ArchiveError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Sequence
    from pathlib import Path

    import aiosqlite

__all__ = ["Db", "Params", "Tx"]

Params: TypeAlias = "Sequence[Any]"


@dataclass
class _Link:
    conn: aiosqlite.Connection
    path: Path
    busy_timeout: float
    damaged: ArchiveCorruptError | None = None
    closed: bool = False

    def failure(self, error: sqlite3.Error) -> ArchiveError:
        mapped = map_sqlite_error(error, self.path, self.busy_timeout)
        if isinstance(mapped, ArchiveCorruptError):
            self.damaged = mapped
        return mapped


_LONE_SURROGATES = re.compile("[\ud800-\udfff]")


def _encodable(params: Params) -> Params:
    """``params`` as SQLite can store them: lone surrogates (not UTF-8) become U+FFFD.

    They reach Python from JSON escapes (a model's answer, a front's message) and
    would make sqlite3 raise ``UnicodeEncodeError`` in the middle of a turn.
    """
    if not any(isinstance(p, str) and _LONE_SURROGATES.search(p) for p in params):
        return params
    return [_LONE_SURROGATES.sub("\ufffd", p) if isinstance(p, str) else p for p in params]


class Tx:
    """Runs statements on the connection; inside :meth:`Db.transaction` it is the transaction."""

    def __init__(self, link: _Link) -> None:
        self._link = link

    @property
    def path(self) -> Path:
        """The archive file."""
        return self._link.path

    async def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """All rows of ``sql``."""
        self._check()
        try:
            return list(await self._link.conn.execute_fetchall(sql, _encodable(params)))
        except sqlite3.Error as error:
            raise self._link.failure(error) from error

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """The first row of ``sql``, or ``None``."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; returns the number of rows it changed."""
        self._check()
        try:
            cursor = await self._link.conn.execute(sql, _encodable(params))
            changed = cursor.rowcount
            await cursor.close()
        except sqlite3.Error as error:
            raise self._link.failure(error) from error
        return changed

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement for each of ``rows``."""
        self._check()
        try:
            await (await self._link.conn.executemany(sql, map(_encodable, rows))).close()
        except sqlite3.Error as error:
            raise self._link.failure(error) from error

    def _check(self) -> None:
        if self._link.damaged is not None:
            raise self._link.damaged
        if self._link.closed:
            raise ArchiveError(
                f"The archive {self._link.path} is closed; open it again with Archive.open()."
            )


class Db(Tx):
    """:class:`Tx` plus a lock: one statement or one transaction at a time."""

    def __init__(
        self,
        conn: aiosqlite.Connection,
        path: Path,
        busy_timeout: float,
        *,
        checkpoints: bool = True,
    ) -> None:
        super().__init__(_Link(conn, path, busy_timeout))
        self._lock = asyncio.Lock()
        self._tx = Tx(self._link)
        self._changes = conn.total_changes
        # WAL only: the rollback journal has nothing to checkpoint (archive/journal.py).
        self._checkpointer = IdleCheckpointer(self._checkpoint) if checkpoints else None

    async def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        async with self._lock:
            try:
                return await self._tx.fetchall(sql, params)
            finally:
                self._note_writes()

    async def execute(self, sql: str, params: Params = ()) -> int:
        async with self._lock:
            try:
                return await self._tx.execute(sql, params)
            finally:
                self._note_writes()

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        async with self._lock:
            try:
                await self._tx.executemany(sql, rows)
            finally:
                self._note_writes()

    def _note_writes(self) -> None:
        if self._link.closed:
            return
        changes = self._link.conn.total_changes
        if changes != self._changes:
            self._changes = changes
            if self._checkpointer is not None:
                self._checkpointer.wrote()

    async def _checkpoint(self) -> None:
        async with self._lock:
            if self._link.closed or self._link.damaged is not None:
                return
            # Best effort: the backstop autocheckpoint and close() still checkpoint.
            with suppress(ArchiveError):
                await self._tx.execute("PRAGMA wal_checkpoint(PASSIVE)")

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """A write transaction (``BEGIN IMMEDIATE``), committed when the block ends.

        Taking the write lock up front means a busy archive fails here, before
        any work, and a commit never fails on a lock upgrade.
        """
        async with self._lock:
            try:
                await self._tx.execute("BEGIN IMMEDIATE")
                yield self._tx
                await self._tx.execute("COMMIT")
            except BaseException:
                await self._rollback()
                raise
            finally:
                self._note_writes()

    async def _rollback(self) -> None:
        """End a failed or cancelled transaction before the lock is let go.

        A cancelled caller may leave its BEGIN or COMMIT still running on
        aiosqlite's thread, and may be cancelled again while this waits; so the
        rollback runs as its own task, after whatever was queued, and the lock is
        held until it is done (a cancellation is re-raised afterwards).
        """
        settle = asyncio.ensure_future(self._settle())
        cancelled = False
        while not settle.done():
            try:
                await asyncio.shield(settle)
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    async def _settle(self) -> None:
        conn = self._link.conn
        with suppress(sqlite3.Error):
            await (await conn.execute("SELECT 1")).close()  # runs after a queued BEGIN/COMMIT
            if conn.in_transaction:
                await conn.execute("ROLLBACK")

    async def close(self) -> None:
        """Close the connection (waits for a running statement); safe to call twice."""
        if self._checkpointer is not None:
            self._checkpointer.cancel()
        async with self._lock:
            if not self._link.closed:
                self._link.closed = True
                await self._link.conn.close()
