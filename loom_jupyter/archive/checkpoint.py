"""WAL checkpoints when the archive is idle, so appends rarely pay for them.

SQLite's automatic checkpoint runs inside whichever commit crosses the WAL size
limit, adding a write-back (and an fsync) to that one append. Instead the limit
is raised (a backstop for endless bursts) and a passive checkpoint runs once
writes have paused, typically while the model is thinking.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from typing import Any

__all__ = ["BACKSTOP_PAGES", "IDLE_SECONDS", "IdleCheckpointer"]

IDLE_SECONDS = 0.5
"""Checkpoint after this long without a write."""

BACKSTOP_PAGES = 4000
"""``wal_autocheckpoint``: SQLite still checkpoints itself past ~16 MB of WAL."""


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
