"""What the host finds as it opens a notebook's archive: the session to resume and the
banner's words about it (issue 21, DESIGN §13).

:func:`peek` reads the archive once, before the session opens: the latest active session,
whether another live kernel writes it (then this kernel starts a new one: :data:`LEASE_MESSAGE`),
what a kernel that died holding it left, whether git tracks the archive, the filesystem and
journal, a notebook the kernel cannot place, an earlier ``.loom/`` archive left behind, and
the conversations of vanished notebooks beside this one. :class:`OpenFacts` holds them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.host.services.restart import Restarts
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.host.upkeep.relocate import Orphan
    from loom_jupyter.records import SessionInfo
    from loom_jupyter.settings import Settings

__all__ = ["LEASE_MESSAGE", "OpenFacts", "peek"]

LEASE_MESSAGE = (
    "The latest session of this notebook is being written by another live kernel. "
    "This kernel starts a new session instead; once the other kernel is shut down, "
    "%cowork resume 1 continues the earlier one."
)


@dataclass(frozen=True)
class OpenFacts:
    """What the archive said at open, for the banner and a sidebar's first view."""

    resumed: SessionInfo | None = None  # the session resumed at open, if any
    resumed_prompts: int = 0  # how many messages the person sent in it
    lease_message: str | None = None  # another live kernel writes the latest session
    crash_message: str | None = None  # the previous kernel died holding the session
    tracked_archive: str | None = None  # git tracks the archive
    storage_notes: tuple[str, ...] = ()  # filesystem, journal (DESIGN §13)
    where_notes: tuple[str, ...] = ()  # notebook unknown, earlier archive
    orphans: tuple[Orphan, ...] = ()  # conversations of vanished notebooks beside this one

    def held_elsewhere(self) -> OpenFacts:
        """The same, once the latest session turned out to be written by another kernel."""
        return replace(self, lease_message=LEASE_MESSAGE, resumed=None)


async def peek(
    archive: Archive,
    settings: Settings,
    *,
    owner: str,
    location: NotebookLocation,
    earlier: Path | None,
    restarts: Restarts,
    present: Callable[[Sequence[str]], Collection[str]] | None,
) -> tuple[OpenFacts, bool]:
    """The facts, and whether another live kernel holds the latest session."""
    from loom_jupyter.archive.gitindex import tracked_note

    facts = OpenFacts(
        tracked_archive=tracked_note(archive.path),  # read from .git/index; git not run
        storage_notes=archive.storage.notes() if archive.storage else (),
        where_notes=await _where_notes(location, archive, earlier),
        resumed=await archive.latest_active_session(),  # a moved notebook keeps it
    )
    resumed = facts.resumed
    held = resumed is not None and await archive.lease_is_held(
        resumed.id, owner, stale_after=settings.lease_stale_seconds
    )
    if held:
        return facts.held_elsewhere(), True
    if resumed is not None:
        crash = await _crash_line(archive, resumed) if resumed.lease_owner else None
        prompts = (await archive.prompt_counts([resumed.id]))[resumed.id]
        await restarts.at_open(archive, resumed, owner, present)
        return replace(facts, crash_message=crash, resumed_prompts=prompts), False
    if not await archive.list_sessions(limit=1):
        from loom_jupyter.host.upkeep.relocate import find_orphans

        orphans = await find_orphans(location, settings.lease_stale_seconds)
        return replace(facts, orphans=tuple(orphans)), False
    return facts, False


async def _where_notes(
    location: NotebookLocation, archive: Archive, earlier: Path | None
) -> tuple[str, ...]:
    """The banner's lines on where this kernel writes: a notebook it cannot place (DESIGN
    §13), and a ``.loom/`` archive that ``archive_dir`` leaves behind, unresumed."""
    from loom_jupyter.host.upkeep.location import earlier_archive_note

    notes = [location.unplaced_note(archive.path)]
    if earlier is not None and earlier != archive.path:
        empty = not await archive.list_sessions(limit=1)
        notes.append(earlier_archive_note(earlier, archive.path, empty=empty))
    return tuple(note for note in notes if note)


async def _crash_line(archive: Archive, info: SessionInfo) -> str:
    """What the dead kernel that still names itself ``info``'s writer left (for the banner)."""
    from loom_jupyter.records import LeaseTakeover
    from loom_jupyter.session.recovery import CrashRecovery

    last = info.turn_count
    tail = await archive.get_turns(info.id, max(1, last - 20), last)
    takeover = LeaseTakeover(owner=info.lease_owner or "", heartbeat=info.lease_heartbeat)
    return CrashRecovery.inspect(tail, takeover).banner()
