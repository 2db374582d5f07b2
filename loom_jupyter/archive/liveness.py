"""Who holds a lease, and whether that holder is still alive: the one rule.

A lease owner names its process as ``host:pid:start:token``. ``start`` is
``boot/ticks/pidns``: the machine's boot id, the process's start time in clock ticks
since boot (from ``/proc``), so a pid reused by another process after a crash is not
taken for the old kernel, and the inode of its pid namespace. On the same machine and
in the same pid namespace a holder is alive exactly when a process with that pid and
that start time exists: a kernel killed with SIGKILL (or by the OOM killer) holds
nothing, at once. A hostname alone does not say "same machine": two containers given
one hostname (on one machine, or on two) see different processes under the same pid,
so a pid is believed only when the boot id and the pid namespace are ours too. Across
hosts (an archive on a shared file system), across containers, and for owners that do
not follow the format, only the heartbeat can tell: a holder that has not renewed for
``stale_after`` seconds is dead. Owners written before the pid namespace was recorded
(``boot/ticks``) are judged by their pid on a same-named host, as they always were.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["LeaseOwner", "holder_is_alive", "pid_exists", "process_start", "this_process_owner"]

_PROC = Path("/proc")


@dataclass(frozen=True)
class LeaseOwner:
    """The process behind a lease."""

    host: str
    pid: int
    start: str  # "boot/ticks/pidns"; older owners "boot/ticks"; "" without /proc
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

    def same_machine_and_namespace(self) -> bool | None:
        """Whether this owner's pid means a process here: its boot id and pid namespace are
        ours. ``None`` for an owner that does not record them (the older ``boot/ticks``)."""
        parts = self.start.split("/")
        if len(parts) != 3:
            return None
        boot, _, namespace = parts
        return boot == _boot_id() and namespace == _pid_namespace()

    @property
    def process_start(self) -> str:
        """``boot/ticks``, comparable with :func:`process_start`."""
        return "/".join(self.start.split("/")[:2])


def kernel_process(owner: str) -> str:
    """``host:pid:start`` of an owner name, without its coworker's token: the process
    whose namespace holds the variables (an extension reload keeps it); other text as is."""
    parsed = LeaseOwner.parse(owner)
    return owner if parsed is None else f"{parsed.host}:{parsed.pid}:{parsed.start}"


def this_process_owner() -> LeaseOwner:
    """A fresh owner naming this process (a new token each call: one per coworker)."""
    start = _start_of("self")
    if start:
        start = f"{start}/{_pid_namespace()}"
    return LeaseOwner(socket.gethostname(), os.getpid(), start or "", uuid.uuid4().hex[:8])


def process_start(pid: int) -> str | None:
    """``boot-id/ticks`` for a running process, ``""`` without ``/proc``, ``None`` if gone."""
    if not _PROC.is_dir():
        return "" if pid_exists(pid) else None
    return _start_of(str(pid))


def _start_of(pid: str) -> str | None:
    """``boot-id/ticks`` of ``/proc/PID`` (``self``: this process, whatever pid namespace
    ``/proc`` was mounted from); ``None`` if gone, ``""`` without ``/proc``."""
    if not _PROC.is_dir():
        return ""
    try:
        stat = (_PROC / pid / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat.rpartition(")")[2].split()
    if fields and fields[0] == "Z":  # a zombie has exited; only its parent has not reaped it
        return None
    return f"{_boot_id()}/{fields[19]}" if len(fields) > 19 else None


def holder_is_alive(holder: str, *, heartbeat_age: float | None, stale_after: float) -> bool:
    """Whether the lease ``holder`` may still be writing.

    Same host, same boot and same pid namespace: its process (pid + start time) exists.
    Otherwise: its heartbeat is younger than ``stale_after`` seconds.
    """
    owner = LeaseOwner.parse(holder)
    here = owner is not None and owner.host == socket.gethostname()
    if owner is not None and here and owner.same_machine_and_namespace() is not False:
        start = process_start(owner.pid)
        if start is None:
            return False
        if start and owner.start:
            return start == owner.process_start
    return heartbeat_age is not None and heartbeat_age < stale_after


def pid_exists(pid: int) -> bool:
    """Whether a process with this id runs (on this machine, whoever owns it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@cache
def _pid_namespace() -> str:
    """The inode of this process's pid namespace (``""`` where it cannot be read)."""
    try:
        return str((_PROC / "self" / "ns" / "pid").stat().st_ino)
    except OSError:
        return ""


@cache
def _boot_id() -> str:
    try:
        return (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()[:8]
    except OSError:
        return "boot"
