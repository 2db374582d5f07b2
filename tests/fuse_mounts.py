"""Real FUSE mounts for tests and benchmarks: ``bindfs`` views of one backing folder.

Two mounts of one folder behave like two machines sharing a network filesystem: each
has its own page cache and its own ``mmap`` (BUILDING.md, "Filesystems, hosts and
kernels"). Needs Debian's ``bindfs`` and ``fuse3``, root and ``/dev/fuse`` (``.ci/run``
installs the packages). Every mount is made with ``-o subtype=bindfs``, so the mount
table names it ``fuse.bindfs`` as it names ``fuse.sshfs`` or ``fuse.gcsfuse``.

A bindfs quirk: a process that starts a subprocess while it holds a lock through bindfs
loses all its locks. Hold locks through a mount in a separate process, and start every
process before opening anything through a mount in the test's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

__all__ = [
    "DIRECT_IO",
    "LOCKS_FRESH_NAMES",
    "LOCKS_NO_CACHE",
    "LOCKS_SHARED",
    "BindMounts",
    "missing_fuse",
]

LOCKS_SHARED = ("--multithreaded", "--enable-lock-forwarding")
"""Byte-range locks conflict across mounts (two hosts whose locks work); caches and
``mmap`` stay per mount."""

LOCKS_NO_CACHE = (
    *LOCKS_SHARED,
    "-o",
    "direct_io,attr_timeout=0,entry_timeout=0,negative_timeout=0",
)
"""Working locks and no caching: the closest stand-in for NFS with working locks."""

LOCKS_FRESH_NAMES = (
    *LOCKS_SHARED,
    "-o",
    "attr_timeout=0,entry_timeout=0,negative_timeout=0",
)
"""Working locks, shared ``mmap`` (WAL can run) and no cached names or attributes, so a
file another process deleted through the backing folder is gone here too."""

DIRECT_IO = ("-o", "direct_io")
"""No shared ``mmap`` (WAL fails with ``SQLITE_IOERR_SHMMAP``), like SMB ``cache=none``."""


def missing_fuse() -> str | None:
    """Why real FUSE mounts cannot be made here, or ``None`` when they can."""
    if shutil.which("bindfs") is None or shutil.which("fusermount3") is None:
        return "bindfs and fusermount3 are missing: apt-get install -y bindfs fuse3"
    if not Path("/dev/fuse").exists():
        return "/dev/fuse is missing"
    if os.geteuid() != 0:
        return "FUSE mounts with allow_other need root here"
    return None


class BindMounts:
    """Mounts of ``backing`` made under ``root``; :meth:`close` unmounts them all."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.backing = root / "backing"
        self.backing.mkdir(parents=True, exist_ok=True)
        self._mounted: list[Path] = []

    def mount(self, name: str, *options: str) -> Path:
        """A new mount of the backing folder at ``root/name`` with bindfs ``options``."""
        target = self.root / name
        target.mkdir(parents=True)
        subprocess.run(
            ["bindfs", "-o", "subtype=bindfs", *options, str(self.backing), str(target)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        self._mounted.append(target)
        return target

    def close(self) -> None:
        """Unmount everything (``fusermount3 -u``, else a lazy ``umount``)."""
        while self._mounted:
            target = self._mounted.pop()
            done = subprocess.run(
                ["fusermount3", "-u", str(target)], capture_output=True, timeout=60, check=False
            )
            if done.returncode != 0:
                subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)

    def __enter__(self) -> BindMounts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
