"""Where a notebook's archive lives: ``<notebook dir>/.loom/<notebook file name>.sqlite``."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.archive.hygiene import FOLDER_MODE, repair_folder
from loom_jupyter.errors import ArchiveReadOnlyError

if TYPE_CHECKING:
    import os

__all__ = ["archive_path_for"]


def archive_path_for(notebook_path: str | os.PathLike[str], *, create: bool = True) -> Path:
    """The archive file of ``notebook_path``.

    With ``create`` (the default) the ``.loom/`` folder is made (0700), holding a
    ``.gitignore`` of ``*`` so archives are never committed by accident; an existing one
    is checked and repaired (:mod:`loom_jupyter.archive.hygiene`: a link is refused with
    :class:`~loom_jupyter.errors.ArchiveLinkError`). The archive file itself is created
    by :meth:`Archive.open`.
    """
    notebook = Path(notebook_path).expanduser().absolute()
    folder = notebook.parent / ".loom"
    if create:
        _make_folder(folder)
    return folder / f"{notebook.name}.sqlite"


def _make_folder(folder: Path) -> None:
    try:
        with contextlib.suppress(FileExistsError):  # a link or a file there is refused next
            folder.mkdir(mode=FOLDER_MODE)
        repair_folder(folder)
    except OSError as error:
        raise ArchiveReadOnlyError(
            f"cannot create the archive folder {folder}: {error.strerror or error}. "
            "Make the notebook's folder writable, or move the notebook somewhere writable."
        ) from error
