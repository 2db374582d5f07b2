"""Archive timestamps: ISO-8601 UTC with microseconds, so text order is time order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

__all__ = ["age_seconds", "utc_now"]


def utc_now() -> str:
    """The current time as stored in the archive."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def age_seconds(timestamp: str, now: str | None = None) -> float:
    """Seconds from ``timestamp`` to ``now`` (default: the current time)."""
    then = datetime.fromisoformat(timestamp)
    current = datetime.fromisoformat(now) if now else datetime.now(timezone.utc)
    return (current - then) / timedelta(seconds=1)
