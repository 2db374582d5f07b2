"""The session lease's heartbeat on a manual clock: it beats as the clock moves, and a
writer whose lease was taken over learns it at its next beat (no sleeping, no patching)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive
from loom_jupyter.archive.clock import ManualClock
from loom_jupyter.session.lease import SessionLease

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Let the loop run until ``check()`` holds (the beat's write runs on aiosqlite's thread)."""
    for _ in range(10_000):
        if await check():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"never happened: {what}")


async def test_the_heartbeat_follows_the_clock_and_notices_a_takeover(tmp_path: Path) -> None:
    clock = ManualClock("2026-03-01T09:00:00.000000+00:00")
    async with Archive.open(tmp_path / "nb.ipynb.sqlite", clock=clock) as archive:
        sid = await archive.create_session(notebook_path="/nb.ipynb", model="m")
        lease = SessionLease(archive, "kernel-A", stale_after=30)
        await lease.take(sid)

        async def beat() -> str | None:
            return (await archive.get_session(sid)).lease_heartbeat

        assert await beat() == "2026-03-01T09:00:00.000000+00:00"
        await until(lambda: _sleeping(clock), "the heartbeat waits for the clock")
        clock.advance(10)  # a third of stale_after: one beat
        await until(lambda: _is(beat, "2026-03-01T09:00:10.000000+00:00"), "the first beat")

        # kernel-B, another host whose clock reads 40 s after kernel-A's last beat, finds
        # the lease stale and takes it over; kernel-A's next beat finds it gone.
        later = ManualClock("2026-03-01T09:00:50.000000+00:00")
        async with Archive.open(archive.path, clock=later) as other:
            await other.acquire_lease(sid, "kernel-B", stale_after=30)
        await until(lambda: _sleeping(clock), "the next beat waits")
        clock.advance(10)
        await until(lambda: _lost(lease), "kernel-A learns it lost the lease")
        assert lease.lost is not None
        assert "now held by kernel-B" in str(lease.lost)
        await lease.release()  # a lost lease is not released: kernel-B keeps it
        assert (await archive.get_session(sid)).lease_owner == "kernel-B"


async def _sleeping(clock: ManualClock) -> bool:
    return clock.sleepers > 0


async def _is(read: Callable[[], Awaitable[str | None]], expected: str) -> bool:
    return await read() == expected


async def _lost(lease: SessionLease) -> bool:
    return lease.lost is not None
