"""The file jail: every file tool path is resolved to a real path inside the notebook folder.

Symlinks are followed before the check, so a link that points outside is
refused while a link between two places inside works. Text is read strictly:
binary (NUL bytes, not UTF-8) and oversized files are refused with a message
that says what to do instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from loom_jupyter.errors import PathOutsideNotebookError, ToolError

if TYPE_CHECKING:
    from loom_jupyter.tools.base import ToolContext

__all__ = [
    "ARCHIVE_DIR",
    "decode_text",
    "display_path",
    "is_skipped_dir",
    "notebook_root",
    "read_searchable",
    "read_text",
    "require_file",
    "resolve_path",
    "sniff_binary",
]

ARCHIVE_DIR = ".loom"
_SNIFF_BYTES = 8192


def notebook_root(ctx: ToolContext) -> Path:
    """The real path of the notebook folder."""
    return ctx.notebook_dir.resolve()


def resolve_path(ctx: ToolContext, raw: str) -> Path:
    """The real path of ``raw`` (relative to the notebook folder), refused if outside it."""
    root = notebook_root(ctx)
    given = Path(raw)
    candidate = given if given.is_absolute() else root / given
    try:
        real = candidate.resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL byte, ...
        raise ToolError(f"{raw!r} is not a usable path ({exc}).") from exc
    if real == root or root in real.parents:
        return real
    how = _how_outside(candidate, root)
    raise PathOutsideNotebookError(
        f"{raw!r} {how} outside the notebook folder {root}. File tools only work inside that "
        "folder; use a path below it (relative paths start there)."
    )


def _how_outside(candidate: Path, root: Path) -> str:
    lexical = Path(os.path.normpath(candidate))
    if lexical == root or root in lexical.parents:
        return "is (or goes through) a symlink that points"
    return "is"


def display_path(ctx: ToolContext, real: Path) -> str:
    """``real`` relative to the notebook folder, with ``/`` separators (``.`` for the folder)."""
    relative = real.relative_to(notebook_root(ctx)).as_posix()
    return relative or "."


def is_skipped_dir(name: str) -> bool:
    """Folders listing and searching skip by default: the archive and hidden folders."""
    return name == ARCHIVE_DIR or name.startswith(".")


def require_file(real: Path, shown: str) -> int:
    """The size of the regular file at ``real``; a clear error if it is missing or a folder."""
    if not real.exists():
        raise ToolError(f"{shown} does not exist. Use list_files to see what is there.")
    if real.is_dir():
        raise ToolError(f"{shown} is a folder, not a file. Use list_files to see its contents.")
    if not real.is_file():  # a pipe or device would block or never end
        raise ToolError(f"{shown} is not a regular file (a pipe, socket or device); not read.")
    return real.stat().st_size


def read_text(real: Path, shown: str, *, max_bytes: int) -> str:
    """The whole text of a file, refusing oversized and binary files."""
    size = require_file(real, shown)
    if size > max_bytes:
        raise ToolError(
            f"{shown} is {size:,} bytes, over the {max_bytes:,}-byte limit for whole files. "
            "Read part of it with start_line/end_line, or find the lines with search_files."
        )
    return decode_text(real.read_bytes(), shown)


def sniff_binary(data: bytes) -> bool:
    """Whether ``data`` looks binary (a NUL byte near the start)."""
    return b"\x00" in data[:_SNIFF_BYTES]


def decode_text(data: bytes, shown: str) -> str:
    """``data`` as UTF-8 text; binary or undecodable content is refused."""
    if b"\x00" in data:
        raise ToolError(
            f"{shown} is a binary file (it contains NUL bytes); file tools read text only."
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not UTF-8 text (undecodable byte at offset {exc.start}); "
            "it is probably binary. Use run_python to inspect it if you need to."
        ) from exc


def read_searchable(path: Path, max_bytes: int) -> str | None:
    """The file's text, or ``None`` for files search skips (binary, big, unreadable, outside)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > max_bytes:
            return None
        data = path.read_bytes()
        if sniff_binary(data):
            return None
        return decode_text(data, path.name)
    except (OSError, ToolError):
        return None
