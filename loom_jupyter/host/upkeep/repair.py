"""Checking and rebuilding a notebook's damaged archive, for ``%cowork recover``.

These run while no host has the archive open (the coworker stepped down): the check
reads the file as it is, the recovery runs on an engine thread of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.host.runtime.loop_thread import LoopThread

if TYPE_CHECKING:
    from loom_jupyter.archive.salvage import Health, SalvageReport
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.settings import Settings

__all__ = ["archive_health", "recover"]


def archive_health(location: NotebookLocation, settings: Settings) -> Health:
    """``missing``, ``intact``, ``damaged`` or ``unreadable`` (nothing in it can be saved)."""
    from loom_jupyter.archive.salvage import archive_health as check

    return check(location.archive_path(), busy_timeout=settings.busy_timeout_seconds)


def recover(location: NotebookLocation, settings: Settings, *, move_aside: bool) -> SalvageReport:
    """Save what the archive still holds into a new one (see ``archive/salvage.py``)."""
    from loom_jupyter.archive.salvage import recover_archive

    loop = LoopThread("loom-recover")
    try:
        return loop.run(
            recover_archive(
                location.archive_path(),
                move_aside=move_aside,
                busy_timeout=settings.busy_timeout_seconds,
                stale_after=settings.lease_stale_seconds,
            )
        )
    finally:
        loop.stop()
