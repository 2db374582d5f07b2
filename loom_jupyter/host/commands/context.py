"""What a command's handler runs against: the kernel's host, or an archive alone.

:class:`HostContext` is a kernel's: the :class:`~loom_jupyter.host.host.Host` (its
session, views, floor) and the front that typed the command. :class:`ArchiveContext` is
the terminal's: one archive opened read-mostly from its file (or not opened at all, for
``recover``), and no session. A handler takes either and says what it can do with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from loom_jupyter.errors import LoomError, SessionNotFoundError
from loom_jupyter.host.commands.fields import Front, UsageProblem, spelled

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive, SessionInfo
    from loom_jupyter.host.host import Host
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.base import KernelBridge

__all__ = ["ArchiveContext", "Context", "HostContext", "pick_session"]


@dataclass
class HostContext:
    """A command in a kernel, from a cell or a sidebar."""

    host: Host
    front: Front
    kernel: KernelBridge | None = None
    """Where a rebuild runs its steps (the cell's own bridge; default: the session's)."""

    def spelled(self, line: str) -> str:
        """A command line as this front types it."""
        return spelled(self.front, line)

    async def refuse_while_running(self, name: str) -> None:
        """The one busy rule: raise a :class:`~loom_jupyter.errors.LoomError` while what the
        session says runs (:meth:`CoworkSession.running_now`: its turn, a turn the floor
        began, a running delegation) would run beside the command ``name``."""
        session = await self.host.session_async()
        running = session.running_now()
        if running is not None:
            what = running[0].lower() + running[1:]
            raise LoomError(
                f"Not now: {what} is running. Wait for it to end (or stop it), then send the "
                f"{self.spelled(name)} again."
            )


@dataclass
class ArchiveContext:
    """A command in a terminal: one notebook's archive, or a folder of them (``search``)."""

    path: Path
    """The archive file (or the folder searched)."""
    settings: Settings
    archive: Archive | None = None
    """Open, except for a command that ``runs_without_archive`` and a folder search."""
    folder: bool = False
    """``path`` is a folder: every notebook archive under it."""
    front: Front = "cli"

    def spelled(self, line: str) -> str:
        return spelled(self.front, line)

    @property
    def opened(self) -> Archive:
        if self.archive is None:
            raise UsageProblem(f"{self.path} is a folder: name a notebook.")
        return self.archive


Context: TypeAlias = HostContext | ArchiveContext


async def pick_session(archive: Archive, wanted: str | None) -> SessionInfo:
    """The session named by ``wanted``: a number in ``sessions``, an id or an id prefix (a
    sub-agent's too); by default the latest."""
    from loom_jupyter.archive.refs import resolve_session_ref

    every = await archive.list_sessions(limit=1_000_000)
    listed = await archive.list_sessions(limit=1_000_000, delegated=False)
    if not every:
        raise UsageProblem(f"The archive {archive.path} has no sessions yet.")
    if wanted is None:
        return (listed or every)[0]
    try:
        return resolve_session_ref(listed, wanted, hidden=every)
    except SessionNotFoundError as exc:
        raise UsageProblem(f"{exc} Run `loom-jupyter sessions NOTEBOOK` to list them.") from exc
