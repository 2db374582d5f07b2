"""Whether git tracks a file, read from the repository's index file — git is never run.

Running git inside a folder that came from elsewhere runs what its configuration says
(``core.fsmonitor``, …), so Loom reads ``<repo>/.git/index`` itself: the repository is the
nearest folder up from the file holding ``.git`` (a folder, or a ``gitdir: …`` file as in
worktrees and submodules, followed once). The index format is git's
(https://git-scm.com/docs/index-format): a ``DIRC`` header, versions 2, 3 and 4 (4
prefix-compresses paths), SHA-1 or SHA-256 object names, and the split index (``link``
extension: a ``sharedindex.<hash>`` file and a delete bitmap). An index that cannot be
read says "not tracked": this only adds a line to the banner.
"""

from __future__ import annotations

import os
import shlex
import stat
import struct
from pathlib import Path

__all__ = ["MAX_INDEX_BYTES", "index_paths", "is_tracked", "tracked_note"]

MAX_INDEX_BYTES = 256 * 1024 * 1024
"""A larger index is not read (a repository of millions of files)."""

_GITDIR_FILE_BYTES = 4096
_HEADER = struct.Struct(">4sII")
_HASH_SIZES = (20, 32)  # SHA-1, SHA-256
_STAT_BYTES = 40  # ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each)
_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF


class _Malformed(ValueError):
    """Not an index file this reader understands."""


def tracked_note(archive: Path) -> str | None:
    """The banner's line when git tracks ``archive`` (``None`` when it does not)."""
    if not is_tracked(archive):
        return None
    shown = f"{archive.parent.name}/{archive.name}"
    return (
        f"This conversation's archive {shown} is tracked by git (committed to the "
        "repository): its history came with the repository and your new turns would be "
        f"committed too. `git rm --cached {shlex.quote(shown)}` in the notebook's folder "
        "stops tracking it."
    )


def is_tracked(path: Path) -> bool:
    """Whether the index of the repository holding ``path`` has an entry for it."""
    found = _repository(path)
    if found is None:
        return False
    root, gitdir = found
    try:
        relative = Path(path).absolute().relative_to(root)
    except ValueError:
        return False
    wanted = os.fsencode("/".join(relative.parts))
    data = _read_regular(gitdir / "index", MAX_INDEX_BYTES)
    if data is None:
        return False
    if data[4:8] in (b"\0\0\0\2", b"\0\0\0\3") and wanted not in data and b"link" not in data:
        return False  # versions 2 and 3 store whole paths: a quick no for the usual case
    try:
        return wanted in _all_paths(data, gitdir)
    except _Malformed:
        return False


def index_paths(data: bytes) -> list[bytes]:
    """The paths of an index file's entries, in order (a split index's own entries only;
    replaced entries may have empty paths). Raises :class:`ValueError` on a malformed file."""
    return _parse(data)[0]


# -- finding the repository ---------------------------------------------------------------


def _repository(path: Path) -> tuple[Path, Path] | None:
    """The repository's root and its git folder, for the file at ``path``."""
    start = Path(path).absolute().parent
    for folder in (start, *start.parents):
        dotgit = folder / ".git"
        try:
            info = dotgit.stat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            return folder, dotgit
        if stat.S_ISREG(info.st_mode):
            gitdir = _gitdir_file(dotgit)
            return (folder, gitdir) if gitdir is not None else None
        return None
    return None


def _gitdir_file(dotgit: Path) -> Path | None:
    """A worktree's or submodule's ``.git`` file: ``gitdir: <path>`` (relative to it)."""
    data = _read_regular(dotgit, _GITDIR_FILE_BYTES)
    if data is None or not data.startswith(b"gitdir: "):
        return None
    target = data[len(b"gitdir: ") :].split(b"\n", 1)[0].strip()
    if not target:
        return None
    gitdir = dotgit.parent / os.fsdecode(target)
    return gitdir if gitdir.is_dir() else None


def _read_regular(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (``None`` when missing, not a regular file or too large)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit + 1)[:limit]
    except OSError:
        return None
    finally:
        os.close(fd)


# -- reading the index --------------------------------------------------------------------


def _all_paths(data: bytes, gitdir: Path) -> set[bytes]:
    """Every path the index holds; a split index's shared part read too."""
    own, link = _parse(data)
    paths = {p for p in own if p}
    if link is None:
        return paths
    shared_hash, deleted = link
    if not shared_hash.strip(b"\0"):
        return paths
    shared = _read_regular(gitdir / f"sharedindex.{shared_hash.hex()}", MAX_INDEX_BYTES)
    if shared is None:
        raise _Malformed("the shared index is missing")
    paths.update(p for i, p in enumerate(_parse(shared)[0]) if i not in deleted)
    return paths


def _parse(data: bytes) -> tuple[list[bytes], tuple[bytes, set[int]] | None]:
    """An index file's paths and its split-index link (shared hash, deleted positions).

    SHA-1 and SHA-256 entries differ in size and the header does not say which: the one
    whose entries, extensions and checksum end exactly at the end of the file is it."""
    if len(data) < _HEADER.size:
        raise _Malformed("too short")
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise _Malformed("not a version 2, 3 or 4 index")
    for hash_size in _HASH_SIZES:
        try:
            paths, end = _entries(data, version, count, hash_size)
            link = _extensions(data, end, hash_size)
        except (ValueError, struct.error, IndexError):  # _Malformed is a ValueError
            continue
        return paths, link
    raise _Malformed("the entries do not parse")


def _entries(data: bytes, version: int, count: int, hash_size: int) -> tuple[list[bytes], int]:
    """The entries' paths and where the extensions start."""
    flags_at = _STAT_BYTES + hash_size
    paths: list[bytes] = []
    previous = b""
    at = _HEADER.size
    for _ in range(count):
        start = at
        (flags,) = struct.unpack_from(">H", data, start + flags_at)
        at = start + flags_at + 2
        if flags & _EXTENDED:
            if version < 3:
                raise _Malformed("extended flags in a version 2 index")
            at += 2
        if version == 4:
            strip, at = _varint(data, at)
            if strip > len(previous):
                raise _Malformed("a prefix longer than the previous path")
            nul = data.index(b"\0", at)
            path = previous[: len(previous) - strip] + data[at:nul]
            at = nul + 1
        else:
            nul = data.index(b"\0", at)
            path = data[at:nul]
            length = flags & _NAME_MASK
            if length < _NAME_MASK and length != len(path):
                raise _Malformed("a name's length differs from its flags")
            at = start + ((nul - start) // 8 + 1) * 8  # 1-8 NULs to a multiple of 8
            if data[nul:at].strip(b"\0") or at > len(data):
                raise _Malformed("padding is not NUL")
        paths.append(path)
        previous = path
    return paths, at


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """Git's offset encoding (as OFS_DELTA in packs): 7 bits a byte, +1 per continuation."""
    byte = data[at]
    at += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[at]
        at += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, at


def _extensions(data: bytes, at: int, hash_size: int) -> tuple[bytes, set[int]] | None:
    """Walk the extensions up to the checksum; the split index's ``link``, if any."""
    end = len(data) - hash_size
    link = None
    while at < end:
        if at + 8 > end:
            raise _Malformed("a cut extension header")
        signature, size = struct.unpack_from(">4sI", data, at)
        body = data[at + 8 : at + 8 + size]
        at += 8 + size
        if at > end:
            raise _Malformed("an extension runs past the checksum")
        if signature == b"link":
            shared = body[:hash_size]
            deleted, _ = _ewah_bits(body, hash_size) if len(body) > hash_size else (set(), 0)
            link = (shared, deleted)
    if at != end:
        raise _Malformed("the extensions do not end at the checksum")
    return link


def _ewah_bits(data: bytes, at: int) -> tuple[set[int], int]:
    """The set bits of an EWAH bitmap (git's ``ewah/ewah_io.c`` layout) and where it ends."""
    _bit_size, words = struct.unpack_from(">II", data, at)
    at += 8
    buffer = struct.unpack_from(f">{words}Q", data, at)
    at += 8 * words + 4  # the words, then the last run-length word's position
    bits: set[int] = set()
    position = 0
    i = 0
    while i < len(buffer):
        marker = buffer[i]
        run = (marker >> 1) & 0xFFFFFFFF
        literals = marker >> 33
        if marker & 1:
            bits.update(range(position, position + run * 64))
        position += run * 64
        for word in buffer[i + 1 : i + 1 + literals]:
            bits.update(position + b for b in range(64) if word >> b & 1)
            position += 64
        i += 1 + literals
    return bits, at
