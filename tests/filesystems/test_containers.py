"""Liveness across containers: a hostname alone does not make a pid comparable.

Two containers given one hostname on one folder see different processes under the same
pid. The lease owner records the boot id and the pid namespace, and a pid is believed
only when both are ours; otherwise the heartbeat decides. The other "container" here is
a real one for pids: ``unshare --pid --fork --mount-proc`` (root), with its own ``/proc``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive
from loom_jupyter.archive.liveness import (
    LeaseOwner,
    holder_is_alive,
    kernel_process,
    process_start,
    this_process_owner,
)
from loom_jupyter.errors import LeaseHeldError

if TYPE_CHECKING:
    from collections.abc import Callable

PROBE = Path(__file__).with_name("lease_probe.py")


@pytest.fixture
def in_container(tmp_path: Path) -> Callable[[str, str], str]:
    """Runs ``lease_probe.py ARCHIVE SESSION ACTION`` in a new pid namespace (same
    hostname, same boot) and returns what it printed."""
    if os.geteuid() != 0:
        pytest.fail("unshare --pid needs root (CI runs as root)")

    def run(session: str, action: str) -> str:
        command = ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, str(PROBE)]
        done = subprocess.run(
            [*command, str(tmp_path / "nb.sqlite"), session, action],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    return run


async def test_a_kernel_in_another_pid_namespace_does_not_take_a_live_lease(
    tmp_path: Path, in_container: Callable[[str, str], str]
) -> None:
    async with Archive.open(tmp_path / "nb.sqlite") as archive:
        sid = await archive.create_session(notebook_path="/nb.ipynb", model="m")
        await archive.acquire_lease(sid, str(this_process_owner()))
    # Our pid means nothing in the container's namespace: only our heartbeat can tell.
    assert in_container(sid, "take") == "held"


async def test_a_lease_from_another_pid_namespace_is_judged_by_its_heartbeat(
    tmp_path: Path, in_container: Callable[[str, str], str]
) -> None:
    async with Archive.open(tmp_path / "nb.sqlite") as archive:
        sid = await archive.create_session(notebook_path="/nb.ipynb", model="m")
    said = in_container(sid, "hold")  # takes the lease and exits without releasing it
    holder = LeaseOwner.parse(said.removeprefix("owner "))
    assert holder is not None
    assert holder.host == socket.gethostname()
    assert holder.pid == 1  # the container's first process, as a kernel in a container is
    assert holder.same_machine_and_namespace() is False
    ours = str(this_process_owner())
    async with Archive.open(tmp_path / "nb.sqlite") as archive:
        with pytest.raises(LeaseHeldError):  # its pid 1 is not our pid 1: not judged dead
            await archive.acquire_lease(sid, ours, stale_after=3600)
        taken = await archive.acquire_lease(sid, ours, stale_after=0)  # its heartbeat: stale
    assert taken is not None
    assert taken.owner == str(holder)


def test_another_boot_is_judged_by_the_heartbeat_and_this_process_by_its_pid() -> None:
    me = this_process_owner()
    boot, ticks, namespace = me.start.split("/")
    assert (boot, ticks) == tuple((process_start(os.getpid()) or "").split("/"))
    assert namespace == str(Path("/proc/self/ns/pid").stat().st_ino)
    assert me.same_machine_and_namespace() is True
    assert holder_is_alive(str(me), heartbeat_age=None, stale_after=30)  # by its pid
    other_boot = "0" * 8 if boot != "0" * 8 else "1" * 8
    rebooted = LeaseOwner(me.host, me.pid, f"{other_boot}/{ticks}/{namespace}", "t")
    assert rebooted.same_machine_and_namespace() is False
    assert holder_is_alive(str(rebooted), heartbeat_age=5, stale_after=30)
    assert not holder_is_alive(str(rebooted), heartbeat_age=31, stale_after=30)
    assert not holder_is_alive(str(rebooted), heartbeat_age=None, stale_after=30)
    assert kernel_process(str(me)) == f"{me.host}:{me.pid}:{me.start}"


def test_owners_written_before_the_namespace_was_recorded_still_read() -> None:
    old = LeaseOwner.parse(f"{socket.gethostname()}:{os.getpid()}:{process_start(os.getpid())}:k")
    assert old is not None
    assert old.same_machine_and_namespace() is None
    assert holder_is_alive(str(old), heartbeat_age=None, stale_after=30)  # its pid: alive
    gone = f"{socket.gethostname()}:{os.getpid()}:gone/0:k"  # a start no live process has
    assert not holder_is_alive(gone, heartbeat_age=1, stale_after=30)
