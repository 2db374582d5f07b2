"""The archive's journal on real FUSE mounts: the rollback journal where WAL is unsafe,
WAL where it is not, and an existing WAL archive switched only when nobody holds it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fuse_mounts import DIRECT_IO, LOCKS_FRESH_NAMES, LOCKS_NO_CACHE, LOCKS_SHARED

from loom_jupyter.archive import Archive
from loom_jupyter.archive.failures import map_sqlite_error
from loom_jupyter.archive.filesystem import Filesystem
from loom_jupyter.archive.journal import ArchiveStorage
from loom_jupyter.errors import ArchiveBusyError, ArchiveError, LoomConfigError
from loom_jupyter.messages import TurnDraft
from loom_jupyter.session.turn import ROLLBACK_PARTIAL_SECONDS, partial_interval
from loom_jupyter.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Iterator

    from fuse_mounts import BindMounts

HOLDER = Path(__file__).with_name("holder.py")
NAME = "nb.ipynb.sqlite"


def _header_journal(path: Path) -> str:
    """What the file's header says (bytes 18-19: 2 for WAL, 1 for a rollback journal)."""
    return "wal" if path.read_bytes()[18] == 2 else "delete"


async def _wal_archive(path: Path, turns: int = 3) -> str:
    """A WAL archive with one session of ``turns`` turns, made on the local disk."""
    async with Archive.open(path) as archive:
        assert archive.journal_mode == "wal"
        sid = await archive.create_session(notebook_path="/nb.ipynb", model="m")
        for n in range(turns):
            await archive.append_turn(sid, TurnDraft(role="user", content=f"turn {n}"))
    return sid


@pytest.fixture
def holder() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes holding an archive open (``holder.py``); each closed afterwards."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(timeout=60)


def _hold(path: Path, started: list[subprocess.Popen[str]]) -> str:
    process = subprocess.Popen(
        [sys.executable, str(HOLDER), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started.append(process)
    assert process.stdout is not None
    return process.stdout.readline().strip()


def _release(started: list[subprocess.Popen[str]]) -> None:
    process = started.pop()
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=60) == 0


async def test_a_local_disk_keeps_wal_and_says_nothing(tmp_path: Path) -> None:
    async with Archive.open(tmp_path / NAME) as archive:
        storage = archive.storage
        assert storage is not None
        assert (archive.journal_mode, storage.synchronous) == ("wal", "NORMAL")
        assert not archive.filesystem.shared
        assert storage.plain
        assert storage.notes() == ()
        assert archive._db._checkpointer is not None  # idle WAL checkpoints, as before
        assert (await archive._db.fetchone("PRAGMA synchronous"))[0] == 1  # NORMAL
    assert _header_journal(tmp_path / NAME) == "wal"


async def test_a_direct_io_mount_opens_and_works_with_the_rollback_journal(
    mounts: BindMounts,
) -> None:
    mount = mounts.mount("dio", *DIRECT_IO)
    path = mount / NAME
    async with Archive.open(path) as archive:
        assert archive.journal_mode == "delete"
        assert archive.filesystem.fs_type == "fuse.bindfs"
        assert archive._db._checkpointer is None  # nothing to checkpoint without WAL
        assert (await archive._db.fetchone("PRAGMA synchronous"))[0] == 2  # FULL
        sid = await archive.create_session(notebook_path="/nb.ipynb", model="m")
        for n in range(1, 6):
            assert await archive.append_turn(sid, TurnDraft(role="user", content=f"pear {n}")) == n
        assert [h.turn_number for h in await archive.search(sid, "pear 4", limit=1)] == [4]
        notes = archive.storage.notes() if archive.storage else ()
    assert notes == (
        f"Archive: {path} · filesystem fuse.bindfs (mounted at {mount}) · journal delete "
        "(the rollback journal: WAL is unsafe on network and virtual filesystems).",
    )
    async with Archive.open(path) as again:
        assert len(await again.get_turns(sid)) == 5
    assert _header_journal(mounts.backing / NAME) == "delete"
    assert not (mounts.backing / f"{NAME}-wal").exists()


async def test_forced_wal_on_a_mount_without_shared_memory_fails_naming_the_filesystem(
    mounts: BindMounts,
) -> None:
    mount = mounts.mount("dio", *DIRECT_IO)
    with pytest.raises(ArchiveError) as failed:
        await Archive.open(mount / NAME, journal_mode="wal")
    message = str(failed.value)
    assert f"failed on fuse.bindfs (mounted at {mount})" in message
    assert "WAL journal needs memory shared through the file" in message
    assert "LOOM_JOURNAL_MODE=delete" in message
    assert "archive_dir" in message
    async with Archive.open(mount / NAME) as archive:  # auto: the rollback journal works
        assert archive.journal_mode == "delete"
        sid = await archive.create_session(notebook_path="/nb.ipynb", model="m")
        assert await archive.append_turn(sid, TurnDraft(role="user", content="x")) == 1


async def test_a_wal_archive_on_a_mount_without_shared_memory_is_switched_when_alone(
    mounts: BindMounts,
) -> None:
    sid = await _wal_archive(mounts.backing / NAME)
    mount = mounts.mount("dio", *DIRECT_IO)
    async with Archive.open(mount / NAME) as archive:
        assert archive.journal_mode == "delete"
        assert [t.content for t in await archive.get_turns(sid)] == ["turn 0", "turn 1", "turn 2"]
    assert _header_journal(mounts.backing / NAME) == "delete"


async def test_a_wal_archive_held_open_elsewhere_stays_wal_and_the_banner_says_so(
    mounts: BindMounts, holder: list[subprocess.Popen[str]]
) -> None:
    sid = await _wal_archive(mounts.backing / NAME)
    mount = mounts.mount("locks", *LOCKS_FRESH_NAMES)  # shared mmap works: WAL still can
    assert _hold(mounts.backing / NAME, holder) == "holding wal"  # another kernel, this machine
    async with Archive.open(mount / NAME) as archive:
        storage = archive.storage
        assert storage is not None
        assert (archive.journal_mode, storage.kept_wal) == ("wal", True)
        assert archive._db._checkpointer is not None  # still WAL: still checkpointed
        assert await archive.append_turn(sid, TurnDraft(role="user", content="more")) == 4
        notes = storage.notes()
    assert notes[0] == (
        f"Archive: {mount / NAME} · filesystem fuse.bindfs (mounted at {mount}) · journal wal."
    )
    assert notes[1].startswith("This archive stays in WAL mode: another kernel or loom-jupyter")
    assert "restart this kernel" in notes[1]
    assert "LOOM_ARCHIVE_DIR" in notes[1]
    assert _header_journal(mounts.backing / NAME) == "wal"  # never switched under the holder
    _release(holder)
    async with Archive.open(mount / NAME) as archive:  # alone now: switched
        assert archive.storage is not None
        assert (archive.journal_mode, archive.storage.kept_wal) == ("delete", False)
        assert len(await archive.get_turns(sid)) == 4
    assert _header_journal(mounts.backing / NAME) == "delete"


async def test_a_held_wal_archive_on_a_mount_without_shared_memory_is_refused_untouched(
    mounts: BindMounts, holder: list[subprocess.Popen[str]]
) -> None:
    await _wal_archive(mounts.backing / NAME)
    mount = mounts.mount("nocache", *LOCKS_NO_CACHE)  # locks reach the holder; no shared mmap
    assert _hold(mounts.backing / NAME, holder) == "holding wal"
    before = (mounts.backing / NAME).read_bytes()
    with pytest.raises(ArchiveBusyError) as refused:
        await Archive.open(mount / NAME)
    message = str(refused.value)
    assert "is in WAL mode and another kernel or loom-jupyter command has it open" in message
    assert f"fuse.bindfs (mounted at {mount}) cannot share WAL's memory index" in message
    assert (mounts.backing / NAME).read_bytes() == before


async def test_forced_delete_on_a_local_disk_and_forced_wal_on_fuse_are_said(
    tmp_path: Path, mounts: BindMounts
) -> None:
    async with Archive.open(tmp_path / NAME, journal_mode="delete") as archive:
        assert archive.storage is not None
        assert archive.journal_mode == "delete"
        assert archive.storage.notes()[0].endswith("journal delete (journal_mode: delete).")
    mount = mounts.mount("locks", *LOCKS_SHARED)
    async with Archive.open(mount / NAME, journal_mode="wal") as archive:
        assert archive.storage is not None
        assert archive.journal_mode == "wal"
        notes = archive.storage.notes()
    assert notes[0].endswith("· journal wal.")
    assert notes[1].startswith("journal_mode is wal on fuse.bindfs: safe only while every kernel")


def test_mount_options_no_journal_is_safe_under_get_one_line(tmp_path: Path) -> None:
    nfs = Filesystem("nfs4", "/home", "srv:/home", ("rw", "vers=4.2", "local_lock=all"))
    lines = ArchiveStorage(tmp_path / NAME, nfs, "delete").notes()
    assert len(lines) == 2
    assert lines[1].startswith("nfs4 (mounted at /home) is mounted with local_lock=all: file locks")
    assert "cannot be kept out of this archive in any journal mode" in lines[1]
    smb = Filesystem("cifs", "/mnt/s", "//s/x", ("rw", "nobrl"))
    assert "nobrl" in ArchiveStorage(tmp_path / NAME, smb, "delete").notes()[1]
    local = Filesystem("ext4", "/", "/dev/vda", ("rw", "nolock"))  # odd, but said as well
    assert ArchiveStorage(tmp_path / NAME, local, "wal").notes()[0].startswith("ext4 (mounted")


def test_lock_errors_on_a_mount_name_it(mounts: BindMounts) -> None:
    mount = mounts.mount("locks", *LOCKS_SHARED)
    error = sqlite3.OperationalError("disk I/O error")
    error.sqlite_errorcode = 3850  # SQLITE_IOERR_LOCK
    message = str(map_sqlite_error(error, mount / NAME, 5.0))
    assert f"failed on fuse.bindfs (mounted at {mount}): disk I/O error" in message
    assert "refused a file lock" in message
    plain = sqlite3.OperationalError("disk I/O error")
    plain.sqlite_errorcode = 10
    assert "network and virtual filesystems" in str(map_sqlite_error(plain, mount / NAME, 5.0))
    assert str(map_sqlite_error(plain, mounts.backing / NAME, 5.0)).endswith(
        "failed: disk I/O error"
    )  # a local disk's I/O error stays as it was


def test_journal_mode_setting_and_the_partial_row_interval() -> None:
    assert Settings().journal_mode == "auto"
    assert Settings.load(env={"LOOM_JOURNAL_MODE": "delete"}).journal_mode == "delete"
    assert Settings.load(env={}).source_of("journal_mode") == "default"
    with pytest.raises(LoomConfigError, match="LOOM_JOURNAL_MODE: journal_mode must be one of"):
        Settings.load(env={"LOOM_JOURNAL_MODE": "truncate"})
    defaults = Settings()
    assert partial_interval(defaults, "wal") == defaults.partial_save_seconds
    assert partial_interval(defaults, "delete") == ROLLBACK_PARTIAL_SECONDS
    chosen = Settings.load(env={"LOOM_PARTIAL_SAVE_SECONDS": "0.5"})
    assert partial_interval(chosen, "delete") == 0.5  # the person's value stands
