"""A renamed notebook takes its conversation along.

The archive is named after the notebook (``.loom/<notebook>.sqlite``, or its folder's
sub-folder of ``archive_dir``: :func:`archive_path_for` says which), and a
kernel learns its notebook's path once, at start. When the notebook is renamed
(or saved under another name) the sidebar tells the kernel the new path; the
coworker then reopens on a copy of the archive under the new name, so the next
kernel of the renamed notebook resumes the same session. The old archive is
removed when the old notebook is gone (a rename) and kept when it is still
there (Save As: both notebooks keep the history).

The front knows the path relative to the server's folder; the kernel knows the
absolute path it started with. :func:`renamed_location` joins the two, and says
nothing unless exactly one notebook file answers.

A notebook renamed while no kernel listened (closed, then renamed in the file
browser) leaves an *orphan*: an archive whose notebook is gone. A notebook that
opens with no conversation of its own is told about the orphans beside it
(:func:`find_orphans`), and ``%cowork adopt NAME`` moves one over.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.archive import archive_path_for
from loom_jupyter.archive.clock import age_seconds, utc_now
from loom_jupyter.archive.liveness import holder_is_alive
from loom_jupyter.errors import ArchiveError
from loom_jupyter.host.upkeep.location import NotebookLocation, PathSource

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive

__all__ = [
    "Orphan",
    "Relocation",
    "adoption_problem",
    "find_orphans",
    "read_orphan",
    "renamed_location",
]

_SQLITE_SIDE_FILES = ("-wal", "-shm")
# the paths Jupyter, VS Code or the sidebar gave the kernel (not the person's --notebook)
_FOLLOWED: tuple[PathSource, ...] = ("env", "session", "vscode", "front")
_NOTEBOOK_ARCHIVE = ".ipynb.sqlite"
MAX_ORPHANS = 3
_MAX_READ = 10  # candidates opened at most, newest first


def renamed_location(
    current: NotebookLocation, path: str, server_root: str = ""
) -> NotebookLocation | None:
    """Where the notebook is now, from the front's ``path``; None if unchanged or unsure.

    With ``server_root`` the answer is that folder joined with ``path``; without
    it, each folder above the current notebook is tried as the server's folder.
    A path that is no notebook file on this machine (a remote kernel, a stale
    message, a name without ``.ipynb`` such as ``../../etc/passwd``) is ignored, and
    so is every path when the person named the notebook with ``%cowork --notebook``.
    """
    if current.source not in _FOLLOWED or not path or Path(path).is_absolute():
        return None  # a notebook named with --notebook (or none) is the person's choice
    if Path(path).suffix.lower() != ".ipynb":
        return None  # no notebook: its archive would land beside any file that answers
    roots = [Path(server_root).expanduser()] if server_root else list(current.path.parents)
    found = {(root / path).resolve() for root in roots if (root / path).is_file()}
    if len(found) != 1:
        return None
    (new,) = found
    return None if new == current.path else NotebookLocation(new, current.source)


@dataclass(frozen=True)
class Relocation:
    """Moving one notebook's archive to the name of its new notebook file."""

    old: NotebookLocation
    new: NotebookLocation

    @property
    def source(self) -> Path:
        return archive_path_for(self.old.path)

    @property
    def target(self) -> Path:
        """The new archive (its ``.loom`` folder is made if missing)."""
        return archive_path_for(self.new.path)

    @property
    def keeps_old(self) -> bool:
        """Save As: the old notebook is still there, so it keeps its archive too."""
        return self.old.path.exists()

    def blocked_by(self) -> str | None:
        """Why the archive cannot follow (the new name already has one), else None."""
        target = self.target
        if not target.exists():
            return None
        return (
            f"{self.new.path.name} already has its own conversation archive ({target.name}); "
            f"this kernel keeps writing to {self.source.name}."
        )

    async def stage_copy(self) -> Path:
        """A consistent copy of the old archive beside the new one, to be renamed into place
        once the new name's archive is closed (``Archive.save_copy``, read-only source)."""
        from loom_jupyter.archive.project import open_read_only

        staged = self.target.with_name(f".adopting-{self.target.name}")
        staged.unlink(missing_ok=True)
        source = await open_read_only(self.source)
        try:
            await source.save_copy(staged)
        except BaseException:
            staged.unlink(missing_ok=True)
            raise
        finally:
            await source.close()
        return staged

    def remove_source(self) -> None:
        """Delete the old archive and SQLite's side files (after the copy, with it closed)."""
        _remove_archive(self.source)

    def remove_target(self) -> None:
        """Delete the new name's archive (an empty one, before adopting), side files too."""
        _remove_archive(self.target)

    def message(self, *, conversing: bool) -> str:
        """What the person is told once the archive has followed (``conversing``: a session
        is open, so reopening the notebook resumes it)."""
        kept = (
            f" {self.old.path.name} keeps its copy."
            if self.keeps_old
            else f" ({self.source.name} is gone.)"
        )
        what = "its conversation" if conversing else "its conversation archive"
        then = ", so reopening it resumes this session" if conversing else ""
        target = self.target
        shown = f".loom/{target.name}" if target.parent.name == ".loom" else str(target)
        return (
            f"This notebook is now {self.new.path.name}: {what} moved along ({shown}){then}.{kept}"
        )


@dataclass(frozen=True)
class Orphan:
    """A conversation archive beside this notebook whose own notebook is gone."""

    notebook: str  # the missing notebook's file name
    sessions: int
    last_active: str  # UTC, to the minute
    writer_alive: bool  # a live kernel still writes it (the notebook is open somewhere)

    def hint(self) -> str:
        """The banner line offering it."""
        sessions = f"{self.sessions} session{'s' if self.sessions != 1 else ''}"
        return (
            f"{self.notebook} is gone but its conversation is still here ({sessions}, last "
            f"active {self.last_active} UTC). If this notebook is {self.notebook} renamed, "
            f"%cowork adopt {self.notebook} brings that conversation over."
        )


def orphan_archives(location: NotebookLocation) -> list[Path]:
    """Archives in this notebook's ``.loom`` folder whose notebook file is gone, newest first
    (at most 10)."""
    own = archive_path_for(location.path)
    found = [
        path
        for path in own.parent.glob(f"*{_NOTEBOOK_ARCHIVE}")
        if path != own
        and not path.name.startswith(".")  # a copy being adopted
        and not (location.directory / path.name.removesuffix(".sqlite")).exists()
    ]
    return sorted(found, key=_modified, reverse=True)[:_MAX_READ]


async def find_orphans(location: NotebookLocation, stale_after: float = 30.0) -> list[Orphan]:
    """The orphans beside this notebook that hold a conversation (read-only, at most 3);
    a writer on another host counts as alive until its heartbeat is ``stale_after`` old."""

    orphans: list[Orphan] = []
    for path in orphan_archives(location):
        orphan = await read_orphan(path, stale_after)
        if orphan is not None:
            orphans.append(orphan)
        if len(orphans) == MAX_ORPHANS:
            break
    return orphans


async def read_orphan(path: Path, stale_after: float = 30.0) -> Orphan | None:
    """What the archive at ``path`` holds, read-only; None without a conversation to offer."""
    from loom_jupyter.archive.project import open_read_only

    try:
        archive = await open_read_only(path)
    except ArchiveError:
        return None  # another version, or not an archive
    try:
        return await _orphan(archive, path.name.removesuffix(".sqlite"), stale_after)
    finally:
        await archive.close()


async def adoption_problem(move: Relocation, own: Archive, stale_after: float) -> str | None:
    """Why this notebook cannot take over the conversation of ``move.old`` (None: it can)."""
    name = move.old.path.name
    if move.old.path.exists():
        return f"{name} is still there, and its conversation stays with it: open {name} to go on."
    orphan = await read_orphan(move.source, stale_after) if move.source.exists() else None
    if orphan is None:
        return (
            f"There is no conversation of {name} in {move.source.parent}: %cowork adopt takes "
            "the name of a notebook that is gone (the banner names them when there are some)."
        )
    if orphan.writer_alive:
        return (
            f"A live kernel still writes the conversation of {name}: shut that kernel down "
            "(Kernel > Shut Down in its notebook), then adopt it."
        )
    if await own.list_sessions(limit=1):
        return (
            f"{move.new.path.name} already has a conversation of its own; adopting {name}'s "
            "would mix the two. Nothing was changed."
        )
    return None


async def _orphan(archive: Archive, notebook: str, stale_after: float) -> Orphan | None:
    sessions = await archive.list_sessions(limit=1_000, delegated=False)
    if not sessions:
        return None
    now = utc_now()
    alive = any(
        s.lease_owner
        and holder_is_alive(
            s.lease_owner,
            heartbeat_age=age_seconds(s.lease_heartbeat, now) if s.lease_heartbeat else None,
            stale_after=stale_after,
        )
        for s in sessions
    )
    latest = sessions[0].last_active_at.replace("T", " ")[:16]
    return Orphan(notebook, len(sessions), latest, alive)


def _remove_archive(archive: Path) -> None:
    for path in (archive, *(Path(f"{archive}{suffix}") for suffix in _SQLITE_SIDE_FILES)):
        path.unlink(missing_ok=True)


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
