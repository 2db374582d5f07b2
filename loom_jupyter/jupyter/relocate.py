"""A renamed notebook takes its conversation along.

The archive is named after the notebook (``.loom/<notebook>.sqlite``), and a
kernel learns its notebook's path once, at start. When the notebook is renamed
(or saved under another name) the sidebar tells the kernel the new path; the
coworker then reopens on a copy of the archive under the new name, so the next
kernel of the renamed notebook resumes the same session. The old archive is
removed when the old notebook is gone (a rename) and kept when it is still
there (Save As: both notebooks keep the history).

The front knows the path relative to the server's folder; the kernel knows the
absolute path it started with. :func:`renamed_location` joins the two, and says
nothing unless exactly one notebook file answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loom_jupyter.archive import archive_path_for
from loom_jupyter.jupyter.notebook_path import NotebookLocation, PathSource

__all__ = ["Relocation", "renamed_location"]

_SQLITE_SIDE_FILES = ("-wal", "-shm")
_FOLLOWED: tuple[PathSource, ...] = ("env", "session")  # the paths Jupyter gave the kernel


def renamed_location(
    current: NotebookLocation, path: str, server_root: str = ""
) -> NotebookLocation | None:
    """Where the notebook is now, from the front's ``path``; None if unchanged or unsure.

    With ``server_root`` the answer is that folder joined with ``path``; without
    it, each folder above the current notebook is tried as the server's folder.
    A path that is no notebook file on this machine (a remote kernel, a stale
    message) is ignored, and so is every path when the person named the notebook
    with ``%cowork --notebook``.
    """
    if current.source not in _FOLLOWED or not path or Path(path).is_absolute():
        return None  # a notebook named with --notebook (or none) is the person's choice
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

    def remove_source(self) -> None:
        """Delete the old archive and SQLite's side files (after the copy, with it closed)."""
        source = self.source
        for path in (source, *(Path(f"{source}{suffix}") for suffix in _SQLITE_SIDE_FILES)):
            path.unlink(missing_ok=True)

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
        return (
            f"This notebook is now {self.new.path.name}: {what} moved along "
            f"(.loom/{self.target.name}){then}.{kept}"
        )
