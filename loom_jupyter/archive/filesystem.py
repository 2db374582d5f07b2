"""Which filesystem holds a folder, and whether SQLite's WAL is safe there.

On Linux the answer comes from ``/proc/self/mountinfo``: the mount whose mount point is
the longest prefix of the folder's real path (the last one listed wins a tie: it is
mounted on top), its type as the mount table names it (``ext4``, ``nfs4``,
``fuse.sshfs``, ``virtiofs``, …) and its mount and super options. Where that table
cannot be read, ``statfs`` says it: its magic number on Linux, ``f_fstypename`` on macOS
and the BSDs (through ``ctypes``). When nothing can be read the folder counts as a
local disk, and :attr:`Filesystem.known` says so.

Network and virtual filesystems — NFS, SMB/CIFS, 9p, virtiofs, Ceph, GlusterFS, Lustre,
GPFS, BeeGFS, AFS and any FUSE mount — share no memory between the machines (or the
VM and its host) using a file, and WAL's index is shared memory: there the archive
uses the rollback journal (``archive/journal.py``).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

__all__ = ["MOUNTINFO", "Filesystem", "filesystem_of", "parse_mountinfo", "statfs_magic"]

MOUNTINFO = Path("/proc/self/mountinfo")

_NETWORK = (
    *("nfs", "cifs", "smb", "ceph", "glusterfs", "lustre", "gpfs", "beegfs", "afs"),
    *("afpfs", "webdav"),  # macOS's names for AFP and WebDAV shares
)
_VIRTUAL = ("9p", "virtiofs", "fuse")
"""Type prefixes: ``nfs``/``nfs4``, ``smb3``/``smbfs``, ``fuse``/``fuseblk``/``fuse.*``."""

_UNSAFE_LOCKS = ("nolock", "local_lock=all", "local_lock=posix", "nobrl")
"""Mount options under which byte-range locks never reach other machines."""

# statfs(2) f_type values (linux/magic.h and the filesystems' own headers).
_MAGIC = {
    0xEF53: "ext4",
    0x58465342: "xfs",
    0x9123683E: "btrfs",
    0x01021994: "tmpfs",
    0x794C7630: "overlay",
    0x2FC12FC1: "zfs",
    0x6969: "nfs",
    0x517B: "smbfs",
    0xFF534D42: "cifs",
    0xFE534D42: "smb3",
    0x01021997: "9p",
    0x65735546: "fuse",
    0x00C36400: "ceph",
    0x0BD00BD0: "lustre",
    0x47504653: "gpfs",
    0x19830326: "beegfs",
    0x5346414F: "afs",
    0x6B414653: "afs",
}

_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class Filesystem:
    """The filesystem a path is on, as the mount table names it."""

    fs_type: str  # "ext4", "nfs4", "fuse.bindfs", … ("unknown" when nothing could tell)
    mount_point: str  # where it is mounted ("" when unknown)
    source: str = ""  # what is mounted: a device, "server:/export", …
    options: tuple[str, ...] = ()  # the mount's options, then the filesystem's own
    known: bool = True  # False: no mount table or statfs could be read (taken as local)

    @property
    def kind(self) -> str:
        """``network``, ``virtual`` (9p, virtiofs, FUSE) or ``local``."""
        base = self.fs_type.lower()
        if base.startswith(_NETWORK):
            return "network"
        if base.startswith(_VIRTUAL):
            return "virtual"
        return "local"

    @property
    def shared(self) -> bool:
        """Whether this is a network or virtual filesystem (WAL is unsafe on it)."""
        return self.kind != "local"

    @property
    def unsafe_lock_option(self) -> str | None:
        """The option (``nolock``, ``local_lock=all|posix``, ``nobrl``) that keeps locks
        from reaching other machines, if the mount has one."""
        return next((o for o in self.options if o in _UNSAFE_LOCKS), None)

    def describe(self) -> str:
        """``nfs4 (mounted at /home)``, for messages."""
        if not self.known:
            return "an unknown filesystem (the mount table could not be read)"
        return (
            f"{self.fs_type} (mounted at {self.mount_point})" if self.mount_point else self.fs_type
        )


def filesystem_of(path: str | os.PathLike[str]) -> Filesystem:
    """The filesystem holding ``path`` (its nearest existing folder, links resolved)."""
    real = _existing(Path(os.path.realpath(path)))
    try:
        table = MOUNTINFO.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        table = ""
    found = _longest_mount(parse_mountinfo(table), str(real)) if table else None
    if found is not None:
        return found
    return _from_statfs(real)


def parse_mountinfo(text: str) -> list[Filesystem]:
    """Every mount of a ``/proc/<pid>/mountinfo`` text, in its order.

    A line is ``id parent major:minor root MOUNT_POINT OPTIONS [optional…] - TYPE SOURCE
    SUPER_OPTIONS``; spaces, tabs, newlines and backslashes in paths are octal escapes.
    """
    mounts = []
    for line in text.splitlines():
        fields = line.split(" ")
        dash = fields.index("-", 6) if "-" in fields[6:] else 0
        if not dash or len(fields) < dash + 3:
            continue
        super_options = fields[dash + 3].split(",") if len(fields) > dash + 3 else []
        mounts.append(
            Filesystem(
                fs_type=_unescape(fields[dash + 1]),
                mount_point=_unescape(fields[4]),
                source=_unescape(fields[dash + 2]),
                options=(*fields[5].split(","), *super_options),
            )
        )
    return mounts


def statfs_magic(path: str | os.PathLike[str]) -> int | None:
    """Linux ``statfs(2)``'s ``f_type`` for ``path`` (``None`` elsewhere or on failure)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # deferred: only where the mount table cannot be read

    libc = _libc()
    if libc is None:
        return None
    buffer = ctypes.create_string_buffer(256)  # struct statfs is 120 bytes on 64-bit Linux
    if libc.statfs(os.fsencode(path), buffer) != 0:
        return None
    return int(ctypes.c_long.from_buffer(buffer).value) & 0xFFFFFFFF  # f_type comes first


def _longest_mount(mounts: list[Filesystem], real: str) -> Filesystem | None:
    best: Filesystem | None = None
    for mount in mounts:
        point = mount.mount_point
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best.mount_point)):
            best = mount
    return best


def _from_statfs(real: Path) -> Filesystem:
    magic = statfs_magic(real)
    if magic is not None:
        return Filesystem(_MAGIC.get(magic, f"0x{magic:x}"), "")
    named = _bsd_statfs(real)
    if named is not None:
        return named
    return Filesystem("unknown", "", known=False)


def _bsd_statfs(real: Path) -> Filesystem | None:
    """macOS (and the BSDs') ``statfs``: ``f_fstypename`` and ``f_mntonname``."""
    if sys.platform != "darwin":
        return None
    import ctypes

    libc = _libc()
    if libc is None:
        return None
    # struct statfs (64-bit inodes): 8 x 4-byte fields and 5 x 8-byte counts, then the
    # names: f_fstypename[16], f_mntonname[1024], f_mntfromname[1024].
    head = 4 + 4 + 8 * 5 + 8 + 4 + 4 + 4 + 4
    buffer = ctypes.create_string_buffer(head + 16 + 1024 + 1024 + 64)
    function = getattr(libc, "statfs$INODE64", None) or libc.statfs
    if function(os.fsencode(real), buffer) != 0:
        return None
    raw = buffer.raw
    return _bsd_names(raw, head)


def _bsd_names(raw: bytes, head: int) -> Filesystem:
    def text(start: int, size: int) -> str:
        return raw[start : start + size].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")

    fs_type = text(head, 16)
    # macOS names every FUSE mount by its library (macfuse, osxfuse): say FUSE.
    if "fuse" in fs_type and not fs_type.startswith("fuse"):
        fs_type = f"fuse.{fs_type}"
    return Filesystem(fs_type, text(head + 16, 1024), text(head + 16 + 1024, 1024))


def _libc() -> ctypes.CDLL | None:
    """The C library's symbols, as loaded into this process (no search, no subprocess)."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), text)
