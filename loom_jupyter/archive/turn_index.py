"""The full-text index follows the turns a little behind (issue 39.4).

Adding a turn to FTS5 in its own commit writes a new segment and rewrites the index's
structure, averages and size records: five or six pages, more when segments merge,
each journalled and written again on the rollback journal. So an append writes only its
turn, and the turns appended since (the *tail*) are indexed together, in one commit:

- when the archive has been idle for :data:`IDLE_SECONDS` (the model is thinking or the
  person reading), up to the oldest ``partial`` row (a streaming answer, rewritten until
  it is complete: indexed once it is);
- before any search of this archive, and when it is closed: the whole tail;
- at the latest after :data:`MOST_APPENDS` appends without a pause.

The same commit brings the stored ``turn_count`` and ``last_active_at`` of those turns'
sessions up to date (the live values are read from the turns, ``session_live.py``), so
the session row too is written once a batch instead of once a turn.

The index is whole up to its largest id: every turn whose id is at most the largest id
in ``turns_fts_docsize`` (FTS5's row per indexed turn) is indexed, no later one is (the
delete and update triggers keep it so, ``schema.lighten_appends``). Nothing else records
how far it got, so a kill -9 at any moment leaves a tail that the next indexing takes
up; nothing to repair. A read-only reader (another notebook's project search) sees the
index as the writer last left it: at most the turns of the last half second are
missing there.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import TYPE_CHECKING

from loom_jupyter.archive.session_live import last_active_at, turn_count
from loom_jupyter.errors import ArchiveError

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from typing import Any

    from loom_jupyter.archive.db import Db, Tx

__all__ = ["IDLE_SECONDS", "MOST_APPENDS", "TailIndexer", "index_tail", "index_tail_now"]

IDLE_SECONDS = 0.5
"""Index the tail after this long without an append."""

MOST_APPENDS = 64
"""Index the tail after this many appends in a row, idle or not (bounds a search's wait)."""

_BOUNDS = (
    "SELECT (SELECT coalesce(max(id), 0) FROM turns_fts_docsize),"
    " (SELECT coalesce(max(id), 0) FROM conversation_turns)"
)
_FIRST_PARTIAL = "SELECT min(id) FROM conversation_turns WHERE id > ? AND status = 'partial'"
# The stored columns are read as a floor (session_live.py); kept near the truth here, in
# the same commit, so what reads them raw (a recovery's count of turns) is behind by the
# tail at most.
_REFRESH = (
    f"UPDATE cowork_sessions AS s SET turn_count = {turn_count('s')},"
    f" last_active_at = {last_active_at('s')}"
    " WHERE s.id IN (SELECT session_id FROM conversation_turns WHERE id > ? AND id <= ?)"
)
_INDEX = (
    "INSERT INTO turns_fts (rowid, content, tool_name) SELECT id, content, tool_name"
    " FROM conversation_turns WHERE id > ? AND id <= ? ORDER BY id"
)


async def _bounds(tx: Tx) -> tuple[int, int]:
    row = await tx.fetchone(_BOUNDS)
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


async def index_tail(tx: Tx, *, past_partial: bool = True) -> int:
    """Index the turns after the index's largest id, inside the write transaction ``tx``,
    and bring their sessions' stored count and time up to them; ``past_partial=False``
    stops before the oldest ``partial`` row. Returns how many turns."""
    done, top = await _bounds(tx)
    if not past_partial and top > done:
        row = await tx.fetchone(_FIRST_PARTIAL, [done])
        if row is not None and row[0] is not None:
            top = int(row[0]) - 1
    if top <= done:
        return 0
    await tx.execute(_REFRESH, [done, top])
    return await tx.execute(_INDEX, [done, top])


async def index_tail_now(db: Db, *, past_partial: bool = True) -> int:
    """Index the tail in its own transaction when there is one (a read finds out first,
    so a search of an indexed archive takes no write lock). Returns how many turns."""
    done, top = await _bounds(db)
    if top <= done:
        return 0
    async with db.transaction() as tx:
        return await index_tail(tx, past_partial=past_partial)


class TailIndexer:
    """Runs ``run`` once appends pause for ``idle`` seconds, or after ``most`` appends."""

    def __init__(
        self,
        run: Callable[[], Coroutine[Any, Any, object]],
        *,
        idle: float = IDLE_SECONDS,
        most: int = MOST_APPENDS,
    ) -> None:
        self._run = run
        self._idle = idle
        self._most = most
        self._appends = 0
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    def nudge(self) -> None:
        """A turn was appended (or the archive opened): (re)start the idle timer."""
        self._appends += 1
        if self._timer is not None:
            self._timer.cancel()
        if self._appends >= self._most:
            self._fire()
        else:
            self._timer = asyncio.get_running_loop().call_later(self._idle, self._fire)

    async def stop(self) -> None:
        """Forget a pending run and let one in flight end (the archive is closing and
        indexes its tail itself; a run left pending would die with the loop)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task, self._task = self._task, None
        if task is not None and not task.done():
            await asyncio.wait({task})

    def _fire(self) -> None:
        self._timer = None
        self._appends = 0
        self._task = asyncio.ensure_future(self._quietly())  # kept so it is not collected

    async def _quietly(self) -> None:
        with suppress(ArchiveError):  # closed, busy or damaged: the next run, a search or close
            await self._run()
