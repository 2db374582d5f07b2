"""The lease that makes a CoworkSession its session's one writer, kept alive by a heartbeat."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from loom_jupyter.errors import ArchiveError, LeaseHeldError

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive
    from loom_jupyter.records import LeaseTakeover

__all__ = ["SessionLease"]


class SessionLease:
    """Holds at most one session's lease for ``owner``, renewing it every third of ``stale_after``
    of the archive's clock.

    If another process takes the lease over (this one stalled past ``stale_after``),
    :attr:`lost` holds the error to show and nothing more is written.
    """

    def __init__(self, archive: Archive, owner: str, *, stale_after: float) -> None:
        self.archive = archive
        self.owner = owner
        self.stale_after = stale_after
        self.session_id: str | None = None
        self.lost: LeaseHeldError | None = None
        self._beat: asyncio.Task[None] | None = None

    async def take(self, session_id: str) -> LeaseTakeover | None:
        """Become the writer of ``session_id``; raises :class:`LeaseHeldError` if held live.

        Returns the dead writer it took the lease from (a crashed kernel), if any.
        """
        takeover = await self.archive.acquire_lease(
            session_id, self.owner, stale_after=self.stale_after
        )
        self.session_id, self.lost = session_id, None
        self._beat = asyncio.ensure_future(self._renew(session_id, self.stale_after / 3))
        return takeover

    async def release(self) -> None:
        """Stop the heartbeat and give the lease up (unless it was lost)."""
        if self._beat is not None:
            self._beat.cancel()
            await asyncio.gather(self._beat, return_exceptions=True)
            self._beat = None
        if self.session_id is not None and self.lost is None:
            await self.archive.release_lease(self.session_id, self.owner)
        self.session_id, self.lost = None, None

    async def _renew(self, session_id: str, every: float) -> None:
        while True:
            await self.archive.clock.sleep(every)
            try:
                await self.archive.heartbeat(session_id, self.owner)
            except LeaseHeldError as error:
                self.lost = error
                return
            except ArchiveError:
                continue  # busy or transient: the next beat tries again
