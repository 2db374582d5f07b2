"""Opening: file mode, .loom/.gitignore, pragmas, lazy import, and the failure paths."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import subprocess
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive, archive_path_for, opening
from loom_jupyter.errors import (
    ArchiveBusyError,
    ArchiveCorruptError,
    ArchiveError,
    ArchiveReadOnlyError,
    SessionNotFoundError,
)
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@contextmanager
def _read_only(folder: Path) -> Iterator[Path]:
    """Make ``folder`` unwritable for everyone, root included, for the block.

    chmod does not stop root, so as root the folder is made immutable
    (``chattr +i``); either way we check that writing really fails.
    """
    root = os.geteuid() == 0
    if root:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
    try:
        with pytest.raises(OSError, match=r"denied|not permitted"):
            (folder / "probe").write_text("x")
        yield folder
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


@contextmanager
def _read_only_file(path: Path) -> Iterator[Path]:
    """Make the file ``path`` unwritable for everyone (root included) for the block."""
    root = os.geteuid() == 0
    path.chmod(0o400)
    if root:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        with pytest.raises(OSError, match=r"denied|not permitted"), path.open("ab"):
            pass
        yield path
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(0o600)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """An empty folder nobody can create files in."""
    folder = tmp_path / "locked"
    folder.mkdir()
    with _read_only(folder):
        yield folder


def test_archive_path_for_makes_an_ignored_folder(tmp_path: Path) -> None:
    notebook = tmp_path / "work" / "Sales 2024.ipynb"
    notebook.parent.mkdir()
    path = archive_path_for(notebook)
    assert path == tmp_path / "work" / ".loom" / "Sales 2024.ipynb.sqlite"
    assert (path.parent / ".gitignore").read_text() == "*\n"
    assert not path.exists()
    assert archive_path_for(str(notebook)) == path  # idempotent
    assert archive_path_for(tmp_path / "x.ipynb", create=False).parent.exists() is False


async def test_new_archive_is_private_and_in_wal_mode(tmp_path: Path) -> None:
    path = archive_path_for(tmp_path / "nb.ipynb")
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path="nb.ipynb", model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content="x"))
        assert archive.path == path
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        for side in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            assert stat.S_IMODE(side.stat().st_mode) == 0o600
        db = archive._db
        assert (await db.fetchone("PRAGMA journal_mode"))[0] == "wal"  # type: ignore[index]
        assert (await db.fetchone("PRAGMA synchronous"))[0] == 1  # type: ignore[index]  NORMAL
        assert (await db.fetchone("PRAGMA foreign_keys"))[0] == 1  # type: ignore[index]
        assert (await db.fetchone("PRAGMA busy_timeout"))[0] == 5000  # type: ignore[index]


async def test_open_is_also_awaitable_and_close_is_idempotent(tmp_path: Path) -> None:
    archive = await Archive.open(tmp_path / "a.sqlite", busy_timeout=0.5)
    sid = await archive.create_session(notebook_path="n", model="m")
    await archive.close()
    await archive.close()
    with pytest.raises(ArchiveError, match=r"is closed; open it again"):
        await archive.get_session(sid)
    async with Archive.open(tmp_path / "a.sqlite") as again:
        assert (await again.get_session(sid)).model == "m"


def test_importing_the_archive_does_not_import_aiosqlite() -> None:
    code = "import sys, loom_jupyter.archive; print('aiosqlite' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "content",
    [
        b"this is a notebook, not a database\n" * 100,
        b"SQLite format 3\x00" + bytes(range(256)) * 40,
        b"SQLite",
    ],
    ids=["text", "header-then-garbage", "truncated-header"],
)
async def test_corrupt_file_is_refused_and_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "nb.ipynb.sqlite"
    path.write_bytes(content)
    before = _digest(path)
    with pytest.raises(ArchiveCorruptError) as caught:
        async with Archive.open(path):
            pass
    assert str(path) in str(caught.value)
    assert "left untouched" in str(caught.value)
    assert _digest(path) == before
    assert _names(tmp_path) == ["nb.ipynb.sqlite"]  # no -wal/-shm created


async def test_damage_found_later_stops_all_writes(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path="n", model="m")
        for i in range(300):
            await archive.append_turn(sid, TurnDraft(role="user", content=f"turn {i} " * 40))
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 16384] = b"\xff" * 16384
    path.write_bytes(bytes(data))
    before = _digest(path)
    async with Archive.open(path) as archive:
        with pytest.raises(ArchiveCorruptError, match="malformed"):
            await archive.get_turns(sid)
        with pytest.raises(ArchiveCorruptError):
            await archive.append_turn(sid, TurnDraft(role="user", content="more"))
    assert _digest(path) == before


async def test_read_only_folder(read_only_dir: Path) -> None:
    with pytest.raises(ArchiveReadOnlyError, match=r"cannot be written.*writable"):
        async with Archive.open(read_only_dir / "nb.ipynb.sqlite"):
            pass
    with pytest.raises(ArchiveReadOnlyError, match="cannot create the archive folder"):
        archive_path_for(read_only_dir / "nb.ipynb")


async def test_existing_archive_in_a_folder_made_read_only(tmp_path: Path) -> None:
    folder = tmp_path / "nb"
    folder.mkdir()
    path = folder / "a.sqlite"
    async with Archive.open(path) as archive:
        await archive.create_session(notebook_path="n", model="m")
    before = _digest(path)
    with _read_only(folder), pytest.raises(ArchiveReadOnlyError, match=str(folder)):
        async with Archive.open(path):
            pass
    assert _digest(path) == before


async def test_read_only_archive_file_reads_but_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path="n", model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content="kept"))
    before = _digest(path)
    with _read_only_file(path):
        async with Archive.open(path) as archive:
            assert [t.content for t in await archive.get_turns(sid)] == ["kept"]
            with pytest.raises(ArchiveReadOnlyError, match="cannot be written"):
                await archive.append_turn(sid, TurnDraft(role="user", content="lost?"))
    assert _digest(path) == before


async def test_busy_archive_times_out_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    async with Archive.open(path, busy_timeout=0.2) as archive:
        sid = await archive.create_session(notebook_path="n", model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content="before the lock"))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
        try:
            with pytest.raises(ArchiveBusyError, match=r"locked by another process.*0\.2 s"):
                await archive.append_turn(sid, TurnDraft(role="user", content="blocked"))
            assert [t.content for t in await archive.get_turns(sid)] == ["before the lock"]
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert await archive.append_turn(sid, TurnDraft(role="user", content="after")) == 2


async def test_unknown_session(archive: Archive) -> None:
    with pytest.raises(SessionNotFoundError, match="nope"):
        await archive.get_turns("nope")


def test_a_locked_switch_to_wal_is_tried_again_until_the_lock_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two processes creating one archive can both be told "locked" at once (SQLite skips
    # the busy handler where waiting could deadlock); here a zero busy timeout does the same.
    path = tmp_path / "fresh.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    ours = sqlite3.connect(path, isolation_level=None, timeout=0)
    waits: list[float] = []

    def wait(seconds: float) -> None:  # the other process lets go while we wait
        waits.append(seconds)
        holder.execute("COMMIT")

    monkeypatch.setattr(opening.time, "sleep", wait)
    try:
        opening._set_wal(ours, path, busy_timeout=30.0)
        assert ours.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert len(waits) == 1
    finally:
        ours.close()
        holder.close()
