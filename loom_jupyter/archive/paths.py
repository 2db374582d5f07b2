"""Where a notebook's archive lives: ``<notebook dir>/.loom/<notebook file name>.sqlite``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.errors import ArchiveReadOnlyError

if TYPE_CHECKING:
    import os

__all__ = ["archive_path_for"]

_GITIGNORE = "*\n"


def archive_path_for(notebook_path: str | os.PathLike[str], *, create: bool = True) -> Path:
    """The archive file of ``notebook_path``.

    With ``create`` (the default) the ``.loom/`` folder is made, holding a
    ``.gitignore`` of ``*`` so archives are never committed by accident. The
    archive file itself is created by :meth:`Archive.open`.
    """
    notebook = Path(notebook_path).expanduser().absolute()
    folder = notebook.parent / ".loom"
    if create:
        _make_folder(folder)
    return folder / f"{notebook.name}.sqlite"


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text(_GITIGNORE, encoding="utf-8")
    except OSError as error:
        raise ArchiveReadOnlyError(
            f"cannot create the archive folder {folder}: {error.strerror or error}. "
            "Make the notebook's folder writable, or move the notebook somewhere writable."
        ) from error
