"""Leases: at most one live writer per session, taken over at once from a dead writer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.archive.clock import age_seconds
from loom_jupyter.archive.liveness import holder_is_alive
from loom_jupyter.archive.sessions import require_session
from loom_jupyter.errors import LeaseHeldError
from loom_jupyter.records import LeaseTakeover

if TYPE_CHECKING:
    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.db import Db

__all__ = ["LeaseMixin"]


class LeaseMixin:
    """Lease methods of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db
    _clock: Clock

    async def acquire_lease(
        self, session_id: str, owner: str, *, stale_after: float = 30.0
    ) -> LeaseTakeover | None:
        """Become the session's writer; returns the dead holder it took over from, if any.

        Succeeds when the lease is free, already ``owner``'s, or its holder is dead
        (see :func:`~loom_jupyter.archive.liveness.holder_is_alive`: on this host, its
        process is gone; elsewhere, no heartbeat for ``stale_after`` seconds);
        otherwise raises :class:`LeaseHeldError`.
        """
        now = self._clock.now()
        async with self._db.transaction() as tx:
            session = await require_session(tx, session_id)
            holder, beat = session.lease_owner, session.lease_heartbeat
            takeover = None
            if holder not in (None, owner):
                quiet = age_seconds(beat, now) if beat else None
                if holder_is_alive(holder, heartbeat_age=quiet, stale_after=stale_after):
                    raise LeaseHeldError(
                        f"Session {session_id} is being written by {holder} (last heartbeat "
                        f"{quiet or 0:.0f} s ago). Close that notebook or kernel, or start a new "
                        "session (`%cowork new`)."
                    )
                takeover = LeaseTakeover(owner=holder, heartbeat=beat)
            await tx.execute(
                "UPDATE cowork_sessions SET lease_owner = ?, lease_heartbeat = ? WHERE id = ?",
                [owner, now, session_id],
            )
            return takeover

    async def lease_is_held(self, session_id: str, owner: str, *, stale_after: float) -> bool:
        """Whether a live process other than ``owner`` holds the session's lease."""
        session = await require_session(self._db, session_id)
        holder, beat = session.lease_owner, session.lease_heartbeat
        if holder in (None, owner):
            return False
        quiet = age_seconds(beat, self._clock.now()) if beat else None
        return holder_is_alive(holder, heartbeat_age=quiet, stale_after=stale_after)

    async def heartbeat(self, session_id: str, owner: str) -> None:
        """Renew ``owner``'s lease; raises :class:`LeaseHeldError` if it was taken over."""
        async with self._db.transaction() as tx:
            changed = await tx.execute(
                "UPDATE cowork_sessions SET lease_heartbeat = ? WHERE id = ? AND lease_owner = ?",
                [self._clock.now(), session_id, owner],
            )
            if changed == 0:
                session = await require_session(tx, session_id)
                raise LeaseHeldError(
                    f"{owner} no longer holds the lease on session {session_id} "
                    f"(now held by {session.lease_owner or 'nobody'}). Stop writing to it; "
                    "acquire the lease again or start a new session."
                )

    async def release_lease(self, session_id: str, owner: str) -> None:
        """Give the lease up (a no-op if ``owner`` does not hold it)."""
        async with self._db.transaction() as tx:
            await require_session(tx, session_id)
            await tx.execute(
                "UPDATE cowork_sessions SET lease_owner = NULL, lease_heartbeat = NULL"
                " WHERE id = ? AND lease_owner = ?",
                [session_id, owner],
            )
