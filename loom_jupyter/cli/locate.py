"""Finding a notebook's archive from what a person typed (a session within it:
:func:`loom_jupyter.host.commands.context.pick_session`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loom_jupyter.archive import archive_path_for

__all__ = ["UsageError", "find_archive", "find_folder", "notebook_folder"]


@dataclass(frozen=True)
class UsageError(Exception):
    """The person asked for something that is not there; exit status 2."""

    message: str

    def __str__(self) -> str:
        return self.message


def find_archive(notebook: str) -> Path:
    """The archive of ``notebook`` (or ``notebook`` itself when it is a ``.sqlite`` file).

    With ``archive_dir`` set (``LOOM_ARCHIVE_DIR``, ``KERNEL_LOOM_ARCHIVE_DIR`` or the person's
    loom.yaml, as in the kernel) it is looked for there first, then beside the notebook
    (an archive written before ``archive_dir`` was set)."""
    given = Path(notebook).expanduser()
    if given.suffix == ".sqlite" and given.is_file():
        return given
    path = archive_path_for(given, create=False)
    beside = archive_path_for(given, create=False, archive_dir=None)
    for candidate in dict.fromkeys((path, beside)):
        if candidate.is_file():
            return candidate
    if not given.exists():
        raise UsageError(f"Notebook not found: {given}. Pass the path of an .ipynb file.")
    looked = path if path == beside else f"{path} and {beside}"
    raise UsageError(
        f"No archive for {given} yet (looked for {looked}). "
        "Talk to the coworker in that notebook first (%load_ext loom_jupyter, then %cowork)."
    )


def notebook_folder(notebook: str, archive: Path) -> Path:
    """The folder whose loom.yaml applies: the notebook's, or, for an archive named directly,
    the folder holding its ``.loom/``."""
    given = Path(notebook).expanduser()
    if given.suffix == ".sqlite" and given == archive:
        return archive.absolute().parent.parent
    return given.absolute().parent


def find_folder(given: str) -> Path | None:
    """``given`` as an absolute folder path when it names a folder (a project to search)."""
    path = Path(given).expanduser()
    return path.absolute() if path.is_dir() else None
