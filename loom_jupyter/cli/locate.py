"""Finding a notebook's archive and one of its sessions from what a person typed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.archive import archive_path_for

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive, SessionInfo

__all__ = ["UsageError", "find_archive", "pick_session"]


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


MIN_ID_PREFIX = 4
"""The shortest id prefix accepted, so that list numbers never read as ids."""


async def pick_session(archive: Archive, wanted: str | None) -> SessionInfo:
    """The session named by ``wanted``: a list number, an id or an id prefix; default latest."""
    sessions = await archive.list_sessions(limit=1_000_000)
    if not sessions:
        raise UsageError(f"The archive {archive.path} has no sessions yet.")
    if wanted is None:
        return sessions[0]
    if wanted.isdigit() and 1 <= int(wanted) <= len(sessions) and len(wanted) < 6:
        return sessions[int(wanted) - 1]
    # Short digit strings are list numbers only: "9" must not match an id starting with 9.
    too_short = len(wanted) < MIN_ID_PREFIX
    matches = [] if too_short else [s for s in sessions if s.id.startswith(wanted.lower())]
    if len(matches) == 1:
        return matches[0]
    hint = "Run `loom-jupyter sessions NOTEBOOK` to list them."
    if not matches:
        raise UsageError(
            f"No session {wanted!r} (use a list number, an id or an id prefix of 4+ characters). {hint}"
        )
    ids = ", ".join(s.id[:12] for s in matches[:5])
    raise UsageError(f"Session {wanted!r} is ambiguous ({ids}...); type more of the id. {hint}")
