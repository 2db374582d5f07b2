"""What Loom accepts as ``.loom/`` and as an archive file, and the repairs it makes.

A cloned or unpacked folder's ``.loom/`` is not trusted as found:

* ``.loom`` must be a real folder, and the archive and its SQLite companions (``-wal``,
  ``-shm``, ``-journal``) regular files. A symbolic link (or a pipe, a device, …) is
  refused with :class:`~loom_jupyter.errors.ArchiveLinkError` before anything opens or
  writes it: SQLite would follow a link and add Loom's tables and WAL to whatever file
  it points at. Everything here uses ``lstat`` and ``O_NOFOLLOW``, so nothing is followed.
* ``.loom/.gitignore`` must end with a ``*`` line (other lines are kept, ``*`` is
  appended); a ``.gitignore`` that is a link is replaced by a regular file.
* ``.loom`` is tightened to mode 0700 when it is ours (owned by the current user): the
  group's and others' permissions are taken away, nothing is added.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
from typing import TYPE_CHECKING

from loom_jupyter.errors import ArchiveLinkError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "COMPANION_SUFFIXES",
    "FOLDER_MODE",
    "GITIGNORE",
    "check_archive_file",
    "check_folder",
    "is_plain_archive",
    "open_no_follow",
    "repair_folder",
]

FOLDER_MODE = 0o700
GITIGNORE = "*\n"
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")
"""The files SQLite opens beside a database (it would follow a link there too)."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_TAIL_BYTES = 65_536  # how much of a .gitignore is read to find its last rule


def open_no_follow(path: Path, flags: int, mode: int = 0o600) -> int:
    """``os.open`` that refuses a link at ``path`` (and never blocks on a pipe)."""
    return os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode)


def check_folder(folder: Path) -> None:
    """Refuse ``folder`` (``.loom``) when it is a link or not a folder; missing is fine."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        raise _refusal(folder, info, "archive folder", "Loom then creates a real folder")


def check_archive_file(path: Path) -> None:
    """Refuse the archive at ``path`` or a companion of it that is a link or not a regular
    file (missing is fine); a ``.loom`` parent must be a real folder too."""
    if path.parent.name == ".loom":
        check_folder(path.parent)
    for candidate in (path, *(path.with_name(path.name + s) for s in COMPANION_SUFFIXES)):
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(info.st_mode) and candidate == path:
            continue  # a folder given as the archive: opening says so in its own words
        if not stat.S_ISREG(info.st_mode):
            what = "archive" if candidate == path else "archive's SQLite companion"
            raise _refusal(candidate, info, what, "Loom then starts from a regular file")


def is_plain_archive(path: Path) -> bool:
    """Whether ``path`` is a regular file that :func:`check_archive_file` accepts (for the
    read-only readers of other notebooks' archives, which skip the rest)."""
    try:
        check_archive_file(path)
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (ArchiveLinkError, OSError):
        return False


def repair_folder(folder: Path) -> None:
    """Make an existing, real ``.loom`` folder private (when ours) and its ``.gitignore``
    ignore everything. Raises :class:`OSError` when the folder cannot be written."""
    check_folder(folder)
    info = os.lstat(folder)
    getuid = getattr(os, "getuid", None)
    ours = getuid is not None and info.st_uid == getuid()
    mode = stat.S_IMODE(info.st_mode)
    if ours and mode & ~FOLDER_MODE:
        with contextlib.suppress(PermissionError):  # an immutable folder stays as it is
            folder.chmod(mode & FOLDER_MODE)  # only takes away: a 0500 folder stays 0500
    _repair_gitignore(folder / ".gitignore")


def _repair_gitignore(ignore: Path) -> None:
    try:
        info = os.lstat(ignore)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        ignore.unlink()  # the link only; whatever it points at is not touched
        info = None
    if info is None:
        _write_new(ignore, GITIGNORE)
        return
    if not stat.S_ISREG(info.st_mode):
        raise _refusal(ignore, info, "archive folder's .gitignore", "Loom then writes its own")
    fd = open_no_follow(ignore, os.O_RDWR | os.O_APPEND)
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(size - _TAIL_BYTES, 0), os.SEEK_SET)
        tail = os.read(fd, _TAIL_BYTES).decode("utf-8", "replace")
        if not _ignores_everything(tail):
            os.write(fd, (("\n" if tail and not tail.endswith("\n") else "") + GITIGNORE).encode())
    finally:
        os.close(fd)


def _ignores_everything(text: str) -> bool:
    """Whether the last rule is ``*`` (a later ``!pattern`` would let archives in again)."""
    rules = [r for r in (line.rstrip() for line in text.splitlines()) if r and r[0] != "#"]
    return bool(rules) and rules[-1] == "*"


def _write_new(path: Path, text: str) -> None:
    fd = open_no_follow(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _refusal(path: Path, info: os.stat_result, what: str, then: str) -> ArchiveLinkError:
    found = _kind(path, info)
    return ArchiveLinkError(
        f"The {what} {path} is {found}. Loom will not follow or open it: it could make Loom "
        "write into a file or folder outside this notebook's (a cloned or unpacked folder can "
        f"carry such links). Remove it (rm {shlex.quote(str(path))}); {then} on the next open."
    )


def _kind(path: Path, info: os.stat_result) -> str:
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        try:
            return f"a symbolic link (to {path.readlink()})"
        except OSError:
            return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    if stat.S_ISREG(mode):
        return "a file, not a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe, not a regular file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    return "a device file, not a regular file"
