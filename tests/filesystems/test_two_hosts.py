"""Two kernels on two "machines" writing one notebook's archive (issue 28).

Each kernel is its own process, writing through its own bindfs mount of one folder
with working locks and no caching (``LOCKS_NO_CACHE``: the stand-in for NFS with
working locks); the second runs under another hostname (``unshare --uts``). Under WAL
(as shipped before) this lost 28 of 40 acknowledged turns or destroyed the file; with
``journal_mode: auto`` the archive uses the rollback journal there.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fuse_mounts import LOCKS_NO_CACHE

from loom_jupyter.archive import Archive

if TYPE_CHECKING:
    from fuse_mounts import BindMounts

WRITER = Path(__file__).with_name("kernel_writer.py")
TURNS = 40


class Kernel:
    """A ``kernel_writer.py`` process and the lines it printed."""

    def __init__(self, archive: Path, label: str, *extra: str, host: str | None = None) -> None:
        command = [sys.executable, str(WRITER), str(archive), label, str(TURNS), *extra]
        if host is not None:
            command = ["unshare", "--uts", *command, "--hostname", host]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def line(self) -> str:
        assert self.process.stdout is not None
        text = self.process.stdout.readline().strip()
        assert text, self.finish()
        return text

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def acks(self) -> list[int]:
        """The turn numbers acknowledged, read until ``done``."""
        numbers = []
        while (text := self.line()) != "done":
            word, number = text.split()
            assert word == "ack", text
            numbers.append(int(number))
        return numbers

    def finish(self) -> str:
        assert self.process.stdin is not None
        assert self.process.stderr is not None
        self.process.stdin.close()
        self.process.wait(timeout=120)
        return self.process.stderr.read()


async def test_two_kernels_through_two_mounts_keep_every_acknowledged_turn(
    mounts: BindMounts,
) -> None:
    one = mounts.mount("host-a", *LOCKS_NO_CACHE)
    two = mounts.mount("host-b", *LOCKS_NO_CACHE)
    (mounts.backing / ".loom").mkdir()
    name = Path(".loom") / "analysis.ipynb.sqlite"
    first = Kernel(one / name, "alpha")
    second = None
    try:
        assert first.line() == "journal delete fuse.bindfs"
        alpha = first.line().removeprefix("session ")
        second = Kernel(two / name, "beta", "--take", alpha, host="another-host")
        assert second.line() == "journal delete fuse.bindfs"
        assert second.line() == "lease held"  # the first kernel's heartbeat is fresh
        beta = second.line().removeprefix("session ")
        first.go()
        second.go()
        acked = {alpha: first.acks(), beta: second.acks()}
    finally:
        errors = [kernel.finish() for kernel in (first, second) if kernel is not None]
    assert acked == {alpha: list(range(1, TURNS + 1)), beta: list(range(1, TURNS + 1))}, errors
    backing = mounts.backing / name
    with sqlite3.connect(backing) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    async with Archive.open(backing, journal_mode="delete") as archive:
        for sid, label in ((alpha, "alpha"), (beta, "beta")):
            turns = await archive.get_turns(sid)
            assert [t.turn_number for t in turns] == list(range(1, TURNS + 1))
            assert all(t.content.startswith(f"{label} turn {t.turn_number} ") for t in turns)
            assert (await archive.get_session(sid)).turn_count == TURNS
