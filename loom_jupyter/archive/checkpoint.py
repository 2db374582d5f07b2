"""Upkeep when the archive is idle, so appends rarely pay for it.

SQLite's automatic checkpoint runs inside whichever commit crosses the WAL size
limit, adding a write-back (and an fsync) to that one append. Instead the limit
is raised (a backstop for endless bursts) and a passive checkpoint runs once
writes have paused, typically while the model is thinking.

The full-text index gets the same treatment. Each commit adds a small FTS5
segment, and a search reads every segment holding its terms. FTS5's own
automerge (per commit) leaves up to three segments per size level; at idle time
a size-tiered merge (any :data:`MERGE_TIER` segments of one level become one of
the next) works through at most :data:`MERGE_PAGES` pages per idle moment and
comes back at the next one until nothing is left to merge. Each row is merged
about log2(turns) times over its life, and no append waits for any of it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from typing import Any

    from loom_jupyter.archive.db import Tx

__all__ = [
    "BACKSTOP_PAGES",
    "IDLE_SECONDS",
    "MERGE_PAGES",
    "MERGE_TIER",
    "IdleCheckpointer",
    "idle_upkeep",
]

IDLE_SECONDS = 0.5
"""Checkpoint after this long without a write."""

BACKSTOP_PAGES = 4000
"""``wal_autocheckpoint``: SQLite still checkpoints itself past ~16 MB of WAL."""

MERGE_PAGES = 64
"""FTS5 pages merged per idle moment: a few milliseconds of holding the write lock."""

MERGE_TIER = 2
"""Segments of one size level merged into one (FTS5's ``usermerge``)."""

_CHANGES = "SELECT total_changes()"
_CONFIG = "INSERT INTO turns_fts (turns_fts, rank) VALUES ('{key}', {value})"


async def idle_upkeep(tx: Tx) -> bool:
    """One bounded step of index merging, then a passive WAL checkpoint.

    Returns whether the merge did work (more may be left for the next idle moment).
    FTS5 counts a merge that wrote nothing as one change, and real work as more.
    """
    tier = await tx.fetchone("SELECT v FROM turns_fts_config WHERE k = 'usermerge'")
    if tier is None or tier[0] != MERGE_TIER:  # kept in the index's config table
        await tx.execute(_CONFIG.format(key="usermerge", value=MERGE_TIER))
    before = await _changes(tx)
    await tx.execute(_CONFIG.format(key="merge", value=MERGE_PAGES))
    merged = await _changes(tx) - before >= 2
    await tx.execute("PRAGMA wal_checkpoint(PASSIVE)")
    return merged


async def _changes(tx: Tx) -> int:
    row = await tx.fetchone(_CHANGES)
    return int(row[0]) if row is not None else 0


class IdleCheckpointer:
    """Calls ``run`` once no write has happened for ``idle`` seconds (debounced)."""

    def __init__(
        self, run: Callable[[], Coroutine[Any, Any, None]], idle: float = IDLE_SECONDS
    ) -> None:
        self._run = run
        self._idle = idle
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    def wrote(self) -> None:
        """A write just committed: (re)start the idle timer."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self._idle, self._fire)

    def cancel(self) -> None:
        """Forget a pending checkpoint (the archive is closing; close checkpoints anyway)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self) -> None:
        self._timer = None
        self._task = asyncio.ensure_future(self._run())  # kept so it is not collected
