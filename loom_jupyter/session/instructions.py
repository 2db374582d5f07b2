"""Project instructions: ``AGENTS.md``, ``CLAUDE.md`` and ``.loom/instructions.md``.

Those files in the notebook's folder and every parent up to the project root (the
nearest folder holding ``.git``, :func:`loom_jupyter.archive.project.project_root`) go
into the system prompt, outermost first, so a nearer folder's file comes later and can
refine what a farther one says (DESIGN §10).

:class:`ProjectInstructions` is asked once per turn. It only ``stat``\\s the files;
a file is read again only when its size, time or identity changed, and the prompt
text is rebuilt only then, byte for byte the same when nothing did, so the cached
prefix (tools + system prompt) keeps hitting. The whole text is capped at
``instructions_max_chars`` characters: the model gets the first part and the person a
notice, once. Files must be regular UTF-8 text files inside the project root (a
symlink pointing elsewhere is not followed) and at most ``INSTRUCTION_MAX_BYTES`` (256 KiB,
decided by ``stat`` before a byte is read); others are skipped with a notice. In a
folder the person does not trust (:mod:`loom_jupyter.trust`) the files are listed as
``untrusted`` and nothing of them is sent.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from loom_jupyter.folders import (
    INSTRUCTION_FILES,
    INSTRUCTION_MAX_BYTES,
    instruction_candidates,
    project_root,
)

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.trust import FolderTrust

__all__ = [
    "INSTRUCTION_FILES",
    "InstructionFile",
    "Instructions",
    "ProjectInstructions",
    "instructions_root",
]


FileStatus = Literal["included", "cut", "left out", "empty", "duplicate", "skipped", "untrusted"]

_HEADING = (
    "\n\n# Project instructions\n"
    "The person's project gives these instructions, from its root folder down to the "
    "notebook's folder: a later file is nearer the notebook and more specific. Follow them "
    "unless the person says otherwise.\n"
)

_Signature = tuple[int, int, int, int, int] | None  # dev, inode, mode, size, mtime_ns
_UNTRUSTED = "the folder is not trusted; %cowork trust shows what it asks for"


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file that exists, and what became of it."""

    path: Path
    name: str  # relative to the project root, with / separators
    status: FileStatus
    chars: int = 0  # characters in the file (read); 0 when skipped
    included: int = 0  # characters of it in the system prompt
    whole: bool = True  # False when only the first part was read (a very large file)
    reason: str = ""  # why skipped, or which file it duplicates


@dataclass(frozen=True)
class Instructions:
    """The project instructions as loaded: the files and the system prompt's part."""

    root: Path
    files: tuple[InstructionFile, ...]
    text: str  # appended to the static system prompt; "" when there is nothing
    max_chars: int

    @property
    def included_chars(self) -> int:
        """Characters of instructions in the system prompt."""
        return sum(f.included for f in self.files)

    @property
    def total_chars(self) -> int:
        """Characters of every readable instruction file."""
        return sum(
            f.chars for f in self.files if f.status not in ("skipped", "duplicate", "untrusted")
        )

    @property
    def cut(self) -> bool:
        """Whether the cap left part of the instructions out."""
        return any(f.status in ("cut", "left out") for f in self.files)

    def notices(self) -> tuple[str, ...]:
        """What the person should be told about this load (cuts, skipped files)."""
        found = [
            f"Project instructions: {f.name} was skipped ({f.reason})."
            for f in self.files
            if f.status == "skipped"
        ]
        if self.cut:
            cut = [f.name for f in self.files if f.status == "cut"]
            out = [f.name for f in self.files if f.status == "left out"]
            parts = []
            if cut:
                parts.append(f"{_names(cut)} {'was' if len(cut) == 1 else 'were'} cut")
            if out:
                parts.append(f"{_names(out)} {'was' if len(out) == 1 else 'were'} left out")
            found.append(
                f"Project instructions hold {self.total_chars:,} characters, more than "
                f"instructions_max_chars ({self.max_chars:,}): the model gets the first "
                f"{self.max_chars:,}; {' and '.join(parts)}. %cowork instructions shows "
                "what is loaded."
            )
        return tuple(found)


def instructions_root(notebook_path: Path) -> Path:
    """The project root the instruction files are looked for under."""
    try:
        return project_root(notebook_path)
    except OSError:  # a parent we may not look into: no project above the notebook's folder
        return notebook_path.parent


class ProjectInstructions:
    """The notebook's project instructions, re-read only when a file changed."""

    def __init__(self, notebook_path: Path, *, max_chars: int) -> None:
        self.notebook_path = notebook_path
        self.max_chars = max(int(max_chars), 0)
        self._signature: tuple[object, ...] | None = None
        self._loaded: Instructions | None = None
        self._reads: dict[Path, tuple[_Signature, _Read]] = {}
        self._told: frozenset[str] = frozenset()
        self._pending: list[str] = []
        self.trusted = True  # False: list the files, send none (an untrusted folder)
        self._shown: tuple[str, dict[Path, bytes | None]] | None = None  # see bind()

    def bind(self, trust: FolderTrust) -> None:
        """Follow the folder's trust: send nothing of an untrusted folder's files, and of a
        trusted one exactly the bytes its trust was decided on (a file edited since is sent
        as it was when trusted until the next check; never a later read)."""
        self.trusted = trust.trusted
        request = trust.request
        shown = {f.path: f.data for f in request.instructions}
        if self._shown is None or self._shown[0] != request.digest:
            self._shown, self._reads = (request.digest, shown), {}

    def current(self) -> Instructions:
        """The instructions now: ``stat`` only, files read again only when they changed."""
        root = instructions_root(self.notebook_path)
        candidates = instruction_candidates(root, self.notebook_path.parent)
        stats = tuple((path, _stat(path)) for path in candidates)
        signature = (root, self.trusted, self._shown and self._shown[0], stats)
        if self._loaded is not None and signature == self._signature:
            return self._loaded
        loaded = self._load(root, stats)
        self._signature, self._loaded = signature, loaded
        notices = loaded.notices()
        self._pending += [n for n in notices if n not in self._told and n not in self._pending]
        self._told = frozenset(notices)
        return loaded

    def take_notices(self) -> list[str]:
        """Notices about the loads since the last call, each told once."""
        pending, self._pending = self._pending, []
        return pending

    # -- reading ------------------------------------------------------------

    def _load(self, root: Path, candidates: tuple[tuple[Path, _Signature], ...]) -> Instructions:
        files: list[InstructionFile] = []
        pieces: list[str] = []
        seen: dict[tuple[int, int], str] = {}
        left = self.max_chars
        real_root = _resolve(root)
        reads: dict[Path, tuple[_Signature, _Read]] = {}
        for path, sig in candidates:
            if sig is None:
                continue
            name = path.relative_to(root).as_posix()
            if not self.trusted:
                files.append(InstructionFile(path, name, "untrusted", reason=_UNTRUSTED))
                continue
            cached = self._reads.get(path)
            read = cached[1] if cached and cached[0] == sig else self._read(path, real_root)
            reads[path] = (sig, read)
            if read.reason:
                files.append(InstructionFile(path, name, "skipped", reason=read.reason))
                continue
            if sig[:2] in seen:  # AGENTS.md linked to CLAUDE.md: once is enough
                files.append(InstructionFile(path, name, "duplicate", reason=seen[sig[:2]]))
                continue
            seen[sig[:2]] = name
            chars, whole = len(read.text), read.whole
            if not read.text.strip():
                files.append(InstructionFile(path, name, "empty", chars, 0, whole))
                continue
            if left <= 0:
                files.append(InstructionFile(path, name, "left out", chars, 0, whole))
                continue
            taken = read.text[:left]
            cut = len(taken) < chars or not whole
            left -= len(taken)
            pieces.append(_block(name, taken, cut))
            status: FileStatus = "cut" if cut else "included"
            files.append(InstructionFile(path, name, status, chars, len(taken), whole))
        self._reads = reads
        text = (_HEADING + "".join(pieces)) if pieces else ""
        return Instructions(root, tuple(files), text, self.max_chars)

    def _read(self, path: Path, real_root: Path) -> _Read:
        """The file's text: checked on disk, its bytes those the trust was decided on."""
        read = _read(path, real_root, self._limit)
        if read.reason or self._shown is None:
            return read
        data = self._shown[1].get(path)
        if data is None:
            return _Read(reason="it appeared or changed after the folder's trust was checked")
        return _decoded(data, self._limit)

    @property
    def _limit(self) -> int:
        """Bytes read of one file: enough for ``max_chars`` characters of UTF-8."""
        return 4 * self.max_chars + 4


@dataclass(frozen=True)
class _Read:
    text: str = ""
    whole: bool = True
    reason: str = ""  # set when the file cannot be used


def _stat(path: Path) -> _Signature:
    try:
        found = path.stat()
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino, found.st_mode, found.st_size, found.st_mtime_ns)


def _resolve(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _read(path: Path, real_root: Path, limit: int) -> _Read:
    real = _resolve(path)
    if not real.is_relative_to(real_root):
        return _Read(reason=f"it points outside the project root {real_root}, not followed")
    try:
        refused = _refused(real.stat())
        if refused:
            return _Read(reason=refused)
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO never blocks
        with os.fdopen(fd, "rb") as handle:
            refused = _refused(os.fstat(handle.fileno()))  # what was opened is what was checked
            if refused:
                return _Read(reason=refused)
            data = handle.read(limit + 1)
    except OSError as error:
        return _Read(reason=f"cannot be read: {error.strerror or error}")
    return _decoded(data, limit)


def _decoded(data: bytes, limit: int) -> _Read:
    """At most ``limit`` bytes of ``data`` as UTF-8 text (cut at a character boundary)."""
    whole = len(data) <= limit
    data = data[:limit]
    if b"\x00" in data:
        return _Read(reason="a binary file, not UTF-8 text")
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=whole)
    except UnicodeDecodeError:
        return _Read(reason="not UTF-8 text")
    return _Read(text.removeprefix("\ufeff"), whole)


def _refused(found: os.stat_result) -> str:
    """Why a file is not read, by its ``stat`` alone ("" to read it)."""
    if not stat.S_ISREG(found.st_mode):
        return "not a regular file"
    if found.st_size > INSTRUCTION_MAX_BYTES:
        return (
            f"larger than {INSTRUCTION_MAX_BYTES // 1024} KiB ({found.st_size:,} bytes): not read"
        )
    return ""


def _block(name: str, text: str, cut: bool) -> str:
    body = text if text.endswith("\n") else text + "\n"
    if cut:
        body += (
            "[... cut here: the project instructions are longer than instructions_max_chars; "
            "the rest is not shown ...]\n"
        )
    return f'\n<project_instructions file="{name}">\n{body}</project_instructions>\n'


def _names(names: list[str]) -> str:
    return ", ".join(names)
