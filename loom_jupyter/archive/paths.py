"""Where a notebook's archive lives: the one rule (DESIGN §3, §13).

By default beside the notebook: ``<notebook dir>/.loom/<notebook file name>.sqlite``.

With ``archive_dir`` set (``LOOM_ARCHIVE_DIR``, else ``KERNEL_LOOM_ARCHIVE_DIR`` — gateways
pass ``KERNEL_*`` variables to the kernels they start — else ``archive_dir`` in the
person's own ``~/.config/loom/loom.yaml``), archives live under that folder instead:
``<archive_dir>/<folder key>/<notebook file name>.sqlite``. The folder key is a readable
slug of the notebook folder's real path and a short hash of that whole path
(:func:`folder_key`), so each notebook folder gets a sub-folder of its own, two folders
never share one, and the same folder reached through a link finds the same archives.
A project's ``loom.yaml`` cannot move archives: only the person's own settings do.

``archive_dir`` is made (0700) when missing; each sub-folder follows the rules of
``.loom/`` (:mod:`loom_jupyter.archive.hygiene`): a real folder (a link is refused,
unfollowed), 0700 when ours, a ``.gitignore`` of ``*``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from loom_jupyter.archive.hygiene import (
    FOLDER_MODE,
    check_folder,
    is_plain_archive,
    repair_folder,
)
from loom_jupyter.errors import ArchiveReadOnlyError, LoomConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ARCHIVE_DIR_VARIABLES",
    "ArchiveDir",
    "archive_path_for",
    "configured_archive_dir",
    "earlier_archive",
    "folder_key",
]

ARCHIVE_DIR_VARIABLES = ("LOOM_ARCHIVE_DIR", "KERNEL_LOOM_ARCHIVE_DIR")
"""Where ``archive_dir`` is read from the environment, the first set one winning."""

_HASH_CHARS = 12
_SLUG_CHARS = 40
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class ArchiveDir:
    """The ``archive_dir`` in force and where it was set (a variable's name or a file)."""

    path: Path
    source: str


def configured_archive_dir(env: Mapping[str, str] | None = None) -> ArchiveDir | None:
    """The ``archive_dir`` in force: ``LOOM_ARCHIVE_DIR``, ``KERNEL_LOOM_ARCHIVE_DIR``, then
    the person's ``loom.yaml``; ``None`` when unset (archives go beside their notebooks).

    Raises :class:`~loom_jupyter.errors.LoomConfigError` for a relative path: the kernel and
    the CLI, started in different folders, would each find another place.
    """
    environ = os.environ if env is None else env
    for name in ARCHIVE_DIR_VARIABLES:
        value = environ.get(name, "").strip()
        if value:
            return ArchiveDir(_absolute(value, name), name)
    from loom_jupyter.settings import user_config_path

    config = user_config_path()
    try:
        stamp = config.stat()
    except OSError:
        return None
    configured = _from_config(str(config), stamp.st_mtime_ns, stamp.st_size)
    return ArchiveDir(_absolute(configured, str(config)), str(config)) if configured else None


@cache
def _from_config(path: str, mtime_ns: int, size: int) -> str | None:
    """``archive_dir`` of the person's ``loom.yaml`` (read again when the file changes)."""
    del mtime_ns, size  # the cache key
    from loom_jupyter.settings import read_config_file

    value = read_config_file(Path(path)).get("archive_dir")
    return str(value).strip() if value else None


def _absolute(value: str, source: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise LoomConfigError(
            f"{source}: archive_dir must be an absolute path (or start with ~), got {value!r}"
        )
    return path


def folder_key(folder: str | os.PathLike[str]) -> str:
    """The sub-folder of ``archive_dir`` for a notebook folder: the last two names of its
    real path, made safe (``work-analysis``), then 12 hex digits of the SHA-256 of that path.

    A folder that is not on this machine (a gateway's kernel names the server's folder)
    is keyed by its path as given, made absolute."""
    real = os.path.realpath(os.fspath(folder))
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:_HASH_CHARS]
    names = [part for part in Path(real).parts[1:] if part][-2:]
    slug = _UNSAFE.sub("_", "-".join(names)).lstrip(".-_")[:_SLUG_CHARS].rstrip(".-_")
    return f"{slug}-{digest}" if slug else digest


def archive_path_for(
    notebook_path: str | os.PathLike[str],
    *,
    create: bool = True,
    archive_dir: Path | Literal["setting"] | None = "setting",
) -> Path:
    """The archive file of ``notebook_path``.

    ``archive_dir``: the folder archives live under; by default the one configured
    (:func:`configured_archive_dir`), ``None`` for the notebook's own ``.loom/``.

    With ``create`` (the default) the archive's folder is made (0700), holding a
    ``.gitignore`` of ``*`` so archives are never committed by accident; an existing one
    is checked and repaired (:mod:`loom_jupyter.archive.hygiene`: a link is refused with
    :class:`~loom_jupyter.errors.ArchiveLinkError`). The archive file itself is created
    by :meth:`Archive.open`.
    """
    notebook = Path(notebook_path).expanduser().absolute()
    base = _base(archive_dir)
    if base is None:
        folder = notebook.parent / ".loom"
        if create:
            _make_folder(folder, notebook.parent)
        return folder / f"{notebook.name}.sqlite"
    folder = base.path / folder_key(notebook.parent)
    if create:
        _make_archive_dir(base)
        _make_folder(folder, None)
    else:
        check_folder(folder)  # read without creating: a link there is still refused
    return folder / f"{notebook.name}.sqlite"


def earlier_archive(notebook_path: str | os.PathLike[str]) -> Path | None:
    """The archive beside the notebook (``.loom/``) when ``archive_dir`` is set and that file
    is there: its conversations are not resumed from ``archive_dir`` (the caller says so;
    nothing here moves or opens it)."""
    if configured_archive_dir() is None:
        return None
    beside = archive_path_for(notebook_path, create=False, archive_dir=None)
    return beside if is_plain_archive(beside) else None


def _base(archive_dir: Path | Literal["setting"] | None) -> ArchiveDir | None:
    if archive_dir == "setting":
        return configured_archive_dir()
    if archive_dir is None:
        return None
    return ArchiveDir(Path(archive_dir), "archive_dir")


def _make_archive_dir(base: ArchiveDir) -> None:
    """``archive_dir`` itself: made 0700 (with its parents) when missing, else used as it is
    (it is the person's folder, maybe a mount point: never changed)."""
    try:
        if not base.path.is_dir():
            base.path.mkdir(mode=FOLDER_MODE, parents=True)
    except OSError as error:
        raise ArchiveReadOnlyError(
            f"cannot create archive_dir {base.path} (set by {base.source}): "
            f"{error.strerror or error}. Create it, make it writable, or set archive_dir "
            "to a folder this kernel can write."
        ) from error


def _make_folder(folder: Path, notebook_dir: Path | None) -> None:
    try:
        with contextlib.suppress(FileExistsError):  # a link or a file there is refused next
            folder.mkdir(mode=FOLDER_MODE)
        repair_folder(folder)
    except FileNotFoundError as error:
        if notebook_dir is not None and not notebook_dir.exists():
            raise ArchiveReadOnlyError(
                f"cannot create the archive folder {folder}: the notebook's folder "
                f"{notebook_dir} is not on this machine (a kernel started by a gateway or on "
                "another host?). Set archive_dir (LOOM_ARCHIVE_DIR, or KERNEL_LOOM_ARCHIVE_DIR "
                "through a gateway) to a folder this kernel can write, or name a notebook "
                "here with %cowork --notebook PATH."
            ) from error
        raise _read_only(folder, error, notebook_dir) from error
    except OSError as error:
        raise _read_only(folder, error, notebook_dir) from error


def _read_only(folder: Path, error: OSError, notebook_dir: Path | None) -> ArchiveReadOnlyError:
    remedy = (
        "Make the notebook's folder writable, or move the notebook somewhere writable."
        if notebook_dir is not None
        else "Make archive_dir writable, or set archive_dir to a folder this kernel can write."
    )
    return ArchiveReadOnlyError(
        f"cannot create the archive folder {folder}: {error.strerror or error}. {remedy}"
    )
