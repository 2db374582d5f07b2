"""Finding a notebook's archive and one of its sessions from what a person typed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.archive import archive_path_for
from loom_jupyter.archive.refs import resolve_session_ref
from loom_jupyter.errors import SessionNotFoundError

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive, SessionInfo

__all__ = ["UsageError", "find_archive", "find_folder", "pick_session"]


@dataclass(frozen=True)
class UsageError(Exception):
    """The person asked for something that is not there; exit status 2."""

    message: str

    def __str__(self) -> str:
        return self.message


def find_archive(notebook: str) -> Path:
    """The archive of ``notebook`` (or ``notebook`` itself when it is a ``.sqlite`` file)."""
    given = Path(notebook).expanduser()
    if given.suffix == ".sqlite" and given.is_file():
        return given
    path = archive_path_for(given, create=False)
    if path.is_file():
        return path
    if not given.exists():
        raise UsageError(f"Notebook not found: {given}. Pass the path of an .ipynb file.")
    raise UsageError(
        f"No archive for {given} yet (looked for {path}). "
        "Talk to the coworker in that notebook first (%load_ext loom_jupyter, then %cowork)."
    )


def find_folder(given: str) -> Path | None:
    """``given`` as an absolute folder path when it names a folder (a project to search)."""
    path = Path(given).expanduser()
    return path.absolute() if path.is_dir() else None


async def pick_session(archive: Archive, wanted: str | None) -> SessionInfo:
    """The session named by ``wanted``: a number in ``sessions``, an id or an id prefix (a
    sub-agent's too); by default the latest."""
    every = await archive.list_sessions(limit=1_000_000)
    listed = await archive.list_sessions(limit=1_000_000, delegated=False)
    if not every:
        raise UsageError(f"The archive {archive.path} has no sessions yet.")
    if wanted is None:
        return (listed or every)[0]
    try:
        return resolve_session_ref(listed, wanted, hidden=every)
    except SessionNotFoundError as exc:
        raise UsageError(f"{exc} Run `loom-jupyter sessions NOTEBOOK` to list them.") from exc
