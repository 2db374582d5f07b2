"""The notebook's project: its root, and the files in it that ask Loom for something.

The project root is the nearest folder up from the notebook holding ``.git``, else the
notebook's own folder. What a folder can ask for is its ``loom.yaml`` (beside the
notebook) and its instruction files (``AGENTS.md``, ``CLAUDE.md``,
``.loom/instructions.md`` in the notebook's folder and every parent up to the root).
Those are what folder trust (:mod:`loom_jupyter.trust`) hashes, and what the settings
and the system prompt read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os

__all__ = [
    "CONFIG_FILE_NAME",
    "CONFIG_MAX_BYTES",
    "INSTRUCTION_FILES",
    "INSTRUCTION_MAX_BYTES",
    "instruction_candidates",
    "project_config",
    "project_root",
]

CONFIG_FILE_NAME = "loom.yaml"
CONFIG_MAX_BYTES = 64 * 1024
"""A ``loom.yaml`` larger than this is refused by its size, before a byte of it is read."""

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".loom/instructions.md")
"""Looked for in each folder, in this order."""
INSTRUCTION_MAX_BYTES = 256 * 1024
"""An instruction file larger than this is skipped by its size, before a byte of it is read."""


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
