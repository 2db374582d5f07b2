"""Archive timestamps (ISO-8601 UTC with microseconds, so text order is time order) and
the clock that makes them, injectable: ``Archive.open(path, clock=...)``.

:class:`SystemClock` is the wall clock. :class:`ManualClock` moves only when told, so
tests of leases, heartbeats and pauses set the time instead of patching or sleeping.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "ManualClock", "SystemClock", "age_seconds", "utc_now"]


def utc_now() -> str:
    """The current wall-clock time as stored in the archive."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def age_seconds(timestamp: str, now: str | None = None) -> float:
    """Seconds from ``timestamp`` to ``now`` (default: the current time)."""
    then = datetime.fromisoformat(timestamp)
    current = datetime.fromisoformat(now) if now else datetime.now(timezone.utc)
    return (current - then) / timedelta(seconds=1)


class Clock(Protocol):
    """Where the archive and the lease heartbeat get the time."""

    def now(self) -> str:
        """The current time, as the archive stores it."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time."""
        ...


class SystemClock:
    """The wall clock and ``asyncio.sleep``."""

    def now(self) -> str:
        return utc_now()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


SYSTEM_CLOCK = SystemClock()


class ManualClock:
    """A clock that stands still until :meth:`advance` moves it; sleepers wake when it passes
    their deadline (on the loop that runs them)."""

    def __init__(self, start: str = "2026-01-05T10:00:00.000000+00:00") -> None:
        self._at = datetime.fromisoformat(start)
        self._sleepers: list[tuple[datetime, asyncio.Future[None]]] = []

    def now(self) -> str:
        return self._at.isoformat(timespec="microseconds")

    async def sleep(self, seconds: float) -> None:
        wake = self._at + timedelta(seconds=seconds)
        if wake <= self._at:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((wake, future))
        await future

    @property
    def sleepers(self) -> int:
        """How many sleeps are waiting for the clock to move."""
        return sum(not future.done() for _, future in self._sleepers)

    def advance(self, seconds: float) -> None:
        """Move the clock on; wake every sleeper whose deadline it passed."""
        self._at += timedelta(seconds=seconds)
        due = [(wake, f) for wake, f in self._sleepers if wake <= self._at]
        self._sleepers = [(wake, f) for wake, f in self._sleepers if wake > self._at]
        for _, future in due:
            if not future.done():
                future.set_result(None)
