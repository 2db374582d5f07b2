"""The notebook's project: its root, and the files in it that ask Loom for something.

The project root is the nearest folder up from the notebook holding ``.git``, else the
notebook's own folder. What a folder can ask for is its ``loom.yaml`` (beside the
notebook) and its instruction files (``AGENTS.md``, ``CLAUDE.md``,
``.loom/instructions.md`` in the notebook's folder and every parent up to the root).
Those are what folder trust (:mod:`loom_jupyter.trust`) hashes, and what the settings
and the system prompt read.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONFIG_FILE_NAME",
    "CONFIG_MAX_BYTES",
    "INSTRUCTION_FILES",
    "INSTRUCTION_MAX_BYTES",
    "SKILL_FOLDERS",
    "FolderFile",
    "instruction_candidates",
    "project_config",
    "project_root",
    "read_bounded",
    "within",
]

CONFIG_FILE_NAME = "loom.yaml"
CONFIG_MAX_BYTES = 64 * 1024
"""A ``loom.yaml`` larger than this is refused by its size, before a byte of it is read."""

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".loom/instructions.md")
"""Looked for in each folder, in this order."""
INSTRUCTION_MAX_BYTES = 256 * 1024
"""An instruction file larger than this is skipped by its size, before a byte of it is read."""

SKILL_FOLDERS = (".claude/skills", ".agents/skills")
"""Agent Skills folders (DESIGN §15): at each level of the project and in the person's home."""


def project_root(notebook_path: str | os.PathLike[str]) -> Path:
    """The nearest folder up from the notebook holding ``.git``, else the notebook's folder."""
    folder = Path(notebook_path).expanduser().absolute().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def project_config(folder: str | os.PathLike[str]) -> Path:
    """The project's ``loom.yaml`` in the notebook's folder (it may not exist)."""
    return Path(folder) / CONFIG_FILE_NAME


def instruction_candidates(root: Path, folder: Path) -> list[Path]:
    """Every instruction file path from ``root`` down to ``folder``, outermost first."""
    try:
        below = folder.relative_to(root).parts
    except ValueError:  # the root rule always gives the folder or a parent; be safe
        below, root = (), folder
    folders = [root]
    for part in below:
        folders.append(folders[-1] / part)
    return [here / name for here in folders for name in INSTRUCTION_FILES]


# -- reading a folder's file once, bounded ------------------------------------------------


@dataclass(frozen=True)
class FolderFile:
    """One file a folder asks with, as read once: its bytes, or why they were not read."""

    path: Path
    name: str
    """How it is shown: relative to the project root, ``/``-separated (or a whole path)."""
    size: int
    data: bytes | None
    """The bytes hashed, parsed and shown; ``None`` when :attr:`skipped`."""
    skipped: str = ""
    """Why the file is not used (too large, unreadable, a link out): its size still counts."""


def read_bounded(
    path: Path, name: str, limit: int, *, inside: Path | None = None
) -> FolderFile | None:
    """A regular file's bytes (a link's target's), at most ``limit``; ``None`` when there
    is no regular file. Opened without blocking (a FIFO swapped in never stalls) and
    sized on the open file before a byte is read (a sparse 8 GB file costs an fstat).
    With ``inside`` (a real path), a file whose real path is not below it is not read,
    and the real path is opened without following a link swapped in since."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if inside is not None:
        try:
            path_real = path.resolve()
        except (OSError, RuntimeError, ValueError):
            return FolderFile(path, name, 0, None, "a link that cannot be followed: not read")
        if not within(path_real, inside):
            return FolderFile(path, name, 0, None, f"a link out of {inside}: not read")
        path, flags = path_real, flags | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as error:
        if isinstance(error, OSError) and error.errno not in (errno.ENOENT, errno.ENOTDIR):
            return FolderFile(path, name, 0, None, f"cannot be read: {error.strerror}")
        return None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            return None
        if found.st_size > limit:
            return FolderFile(path, name, found.st_size, None, _too_large(found.st_size, limit))
        data = _read_at_most(fd, limit + 1)
    except OSError as error:
        return FolderFile(path, name, 0, None, f"cannot be read: {error.strerror}")
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while being read
        return FolderFile(path, name, len(data), None, _too_large(len(data), limit))
    return FolderFile(path, name, len(data), data)


def within(real: Path, folder: Path) -> bool:
    """Whether the real path ``real`` is ``folder`` or below it."""
    return real == folder or folder in real.parents


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _too_large(size: int, limit: int) -> str:
    return f"larger than {limit // 1024} KiB ({size:,} bytes): not read"
