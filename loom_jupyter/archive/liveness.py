"""Who holds a lease, and whether that holder is still alive: the one rule.

A lease owner names its process as ``host:pid:start:token``. ``start`` is the
process's start time as the kernel counts it (boot id + clock ticks since boot,
from ``/proc``), so a pid reused by another process after a crash is not taken
for the old kernel. On the same host a holder is alive exactly when a process
with that pid and that start time exists: a kernel killed with SIGKILL (or by
the OOM killer) holds nothing, at once. Across hosts (an archive on a shared
file system), and for owners that do not follow the format, only the heartbeat
can tell: a holder that has not renewed for ``stale_after`` seconds is dead.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["LeaseOwner", "holder_is_alive", "process_start", "this_process_owner"]

_PROC = Path("/proc")


@dataclass(frozen=True)
class LeaseOwner:
    """The process behind a lease."""

    host: str
    pid: int
    start: str  # "" where the platform cannot tell (no /proc)
    token: str

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}:{self.token}"

    @classmethod
    def parse(cls, text: str) -> LeaseOwner | None:
        """The owner named by ``text``; ``None`` for a name in another format."""
        parts = text.rsplit(":", 3)
        if len(parts) != 4 or not parts[1].isdigit():
            return None
        host, pid, start, token = parts
        return cls(host, int(pid), start, token)


def kernel_process(owner: str) -> str:
    """``host:pid:start`` of an owner name, without its coworker's token: the process
    whose namespace holds the variables (an extension reload keeps it); other text as is."""
    parsed = LeaseOwner.parse(owner)
    return owner if parsed is None else f"{parsed.host}:{parsed.pid}:{parsed.start}"


def this_process_owner() -> LeaseOwner:
    """A fresh owner naming this process (a new token each call: one per coworker)."""
    pid = os.getpid()
    return LeaseOwner(socket.gethostname(), pid, process_start(pid) or "", uuid.uuid4().hex[:8])


def process_start(pid: int) -> str | None:
    """``boot-id/ticks`` for a running process, ``""`` without ``/proc``, ``None`` if gone."""
    if not _PROC.is_dir():
        return "" if _pid_exists(pid) else None
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat.rpartition(")")[2].split()
    if fields and fields[0] == "Z":  # a zombie has exited; only its parent has not reaped it
        return None
    return f"{_boot_id()}/{fields[19]}" if len(fields) > 19 else None


def holder_is_alive(holder: str, *, heartbeat_age: float | None, stale_after: float) -> bool:
    """Whether the lease ``holder`` may still be writing.

    Same host: its process (pid + start time) exists. Otherwise: its heartbeat
    is younger than ``stale_after`` seconds.
    """
    owner = LeaseOwner.parse(holder)
    if owner is not None and owner.host == socket.gethostname():
        start = process_start(owner.pid)
        if start is None:
            return False
        if start and owner.start:
            return start == owner.start
    return heartbeat_age is not None and heartbeat_age < stale_after


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@cache
def _boot_id() -> str:
    try:
        return (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()[:8]
    except OSError:
        return "boot"
