"""Recovering damaged archives: real files, real damage, real SQLite checks afterwards."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from damaged_archive import (
    LEDGER,
    Ledger,
    build_ledger,
    checkpoint,
    count,
    damage_pages,
    integrity,
    overwrite_page,
    overwrite_pages,
    root_page,
    rows,
    truncate,
)

from loom_jupyter.archive import Archive
from loom_jupyter.archive.liveness import LeaseOwner, process_start
from loom_jupyter.archive.salvage import archive_health, recover_archive
from loom_jupyter.errors import ArchiveCorruptError, LeaseHeldError
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

NOTEBOOK = "/work/analysis.ipynb"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Ledger]:
    """A 2,000-turn archive built once for the module (about a second)."""
    path = tmp_path_factory.mktemp("pristine") / "analysis.ipynb.sqlite"
    ledger = asyncio.run(build_ledger(path, NOTEBOOK))
    checkpoint(path)
    return path, ledger


@pytest.fixture
def archive_copy(pristine: tuple[Path, Ledger], tmp_path: Path) -> Path:
    """The test's own copy of the pristine archive, in a notebook's .loom folder."""
    path = tmp_path / ".loom" / "analysis.ipynb.sqlite"
    path.parent.mkdir()
    shutil.copyfile(pristine[0], path)
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


async def test_pages_overwritten_mid_file(
    pristine: tuple[Path, Ledger], archive_copy: Path
) -> None:
    original, ledger = pristine
    overwrite_pages(archive_copy, 5, hits="conversation_turns")
    damaged = _digest(archive_copy)
    assert archive_health(archive_copy) == "damaged"

    report = await recover_archive(archive_copy)

    turns = report.tally("conversation_turns")
    assert report.outcome == "recovered"
    assert turns.total == ledger.turns + 1  # the sub-agent's turn too
    assert turns.lost > 0
    assert turns.saved >= 0.9 * turns.total
    for table in LEDGER:  # what the report says is what the new file holds
        assert report.tally(table).saved == count(archive_copy, table), table
        assert rows(archive_copy, table) <= rows(original, table), table  # verbatim
    assert integrity(archive_copy) == [("ok",)]
    assert report.damaged_copy is not None
    assert _digest(report.damaged_copy) == damaged
    assert _names(archive_copy.parent) == sorted([archive_copy.name, report.damaged_copy.name])
    assert report.latest_session_id == ledger.sessions[-1]
    assert report.recreated_sessions == ()


async def test_the_recovered_archive_opens_searches_and_goes_on(
    pristine: tuple[Path, Ledger], archive_copy: Path
) -> None:
    _, ledger = pristine
    overwrite_pages(archive_copy, 5)
    await recover_archive(archive_copy)
    async with Archive.open(archive_copy) as archive:
        latest = await archive.latest_active_session()
        assert latest is not None
        assert latest.id == ledger.sessions[-1]
        hits = await archive.search(latest.id, "revenue forecast", limit=3)
        assert hits  # the full-text index was rebuilt with the turns
        number = await archive.append_turn(latest.id, TurnDraft(role="user", content="and now?"))
        assert number == ledger.turns // len(ledger.sessions) + 1  # numbering goes on


async def test_lost_session_rows_get_a_home(
    pristine: tuple[Path, Ledger], archive_copy: Path
) -> None:
    original, ledger = pristine
    checkpoint(archive_copy)
    overwrite_page(archive_copy, root_page(archive_copy, "cowork_sessions"), b"\xff" * 64)

    report = await recover_archive(archive_copy)

    assert report.tally("cowork_sessions").saved == 0
    assert report.tally("conversation_turns").lost == 0
    assert set(report.recreated_sessions) == {*ledger.sessions, ledger.child}
    assert report.latest_session_id == ledger.sessions[-1]
    assert integrity(archive_copy) == [("ok",)]
    async with Archive.open(original) as before, Archive.open(archive_copy) as after:
        for sid in ledger.sessions:
            old, new = await before.get_session(sid), await after.get_session(sid)
            assert new.title == f"(recovered) {old.title}"[:100]
            assert (new.turn_count, new.input_tokens, new.cost_usd) == (
                old.turn_count,
                old.input_tokens,
                pytest.approx(old.cost_usd),
            )
            assert old.created_at <= new.created_at <= new.last_active_at == old.last_active_at
            assert new.status == "active"
        child = await after.get_session(ledger.child)
        assert child.status == "closed"  # a sub-agent's session stays out of the way
        listed = await after.list_sessions(delegated=False)
        assert ledger.child not in [s.id for s in listed]


async def test_a_lost_task_row_is_recreated_for_its_subtasks(
    pristine: tuple[Path, Ledger], archive_copy: Path
) -> None:
    _, ledger = pristine
    checkpoint(archive_copy)
    for table in ("tasks", "cowork_sessions"):
        overwrite_page(archive_copy, root_page(archive_copy, table), b"\x00\x07" * 100)
    report = await recover_archive(archive_copy)
    assert (report.tally("tasks").lost, report.tally("subtasks").lost) == (1, 0)
    assert report.tally("subtasks").saved == report.tally("subtasks").orphans == 1
    assert len(report.recreated_tasks) == 1
    assert report.tally("conversation_turns").lost == 0
    assert integrity(archive_copy) == [("ok",)]
    async with Archive.open(archive_copy) as archive:  # the sub-agent's session stays closed
        assert (await archive.get_session(ledger.child)).status == "closed"
        latest = await archive.latest_active_session()
        assert latest is not None
        assert latest.id == ledger.sessions[-1]


async def test_a_truncated_archive(pristine: tuple[Path, Ledger], archive_copy: Path) -> None:
    """Cut off: the b-trees' ends are gone; the sessions' turn counts say how many were lost."""
    truncate(archive_copy, 2 / 3)
    report = await recover_archive(archive_copy)
    turns = report.tally("conversation_turns")
    assert turns.saved == count(archive_copy, "conversation_turns") > 0
    assert turns.lost > 0
    assert turns.total == pristine[1].turns + 1
    assert integrity(archive_copy) == [("ok",)]


async def test_turns_still_in_the_wal_are_saved(tmp_path: Path) -> None:
    """A kernel killed mid-session leaves its last turns in the -wal: they are read too."""
    live = tmp_path / "live.sqlite"
    async with Archive.open(live) as archive:
        sid = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        for n in range(200):
            await archive.append_turn(sid, TurnDraft(role="user", content=f"early {n} " * 30))
        await archive._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        await archive.append_turn(sid, TurnDraft(role="user", content="only in the wal"))
        copy = tmp_path / ".loom" / "nb.ipynb.sqlite"
        copy.parent.mkdir()
        for suffix in ("", "-wal"):  # the files as a crash leaves them
            shutil.copyfile(f"{live}{suffix}", f"{copy}{suffix}")
    damage_pages(copy, 1, hits="conversation_turns")  # the -wal stays as it is

    report = await recover_archive(copy)

    assert report.outcome == "recovered"
    async with Archive.open(copy) as archive:
        assert (await archive.get_turn(sid, 201)).content == "only in the wal"
    assert report.damaged_copy is not None
    assert report.damaged_copy.with_name(report.damaged_copy.name + "-wal").is_file()


async def test_an_intact_archive_is_left_alone(archive_copy: Path) -> None:
    before, names = _digest(archive_copy), _names(archive_copy.parent)
    report = await recover_archive(archive_copy)
    assert report.outcome == "intact"
    assert report.damaged_copy is None
    assert (_digest(archive_copy), _names(archive_copy.parent)) == (before, names)


async def test_a_file_that_is_not_sqlite_moves_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb.sqlite"
    path.write_bytes(b"PK\x03\x04 a zip file, not a database" * 50)
    before = _digest(path)
    with pytest.raises(ArchiveCorruptError, match="--move-aside") as caught:
        await recover_archive(path)
    assert "left untouched" in str(caught.value)
    assert (_digest(path), _names(tmp_path)) == (before, ["nb.ipynb.sqlite"])

    report = await recover_archive(path, move_aside=True)

    assert report.outcome == "moved_aside"
    assert report.damaged_copy is not None
    assert _digest(report.damaged_copy) == before
    assert not path.exists()
    async with Archive.open(path) as archive:  # a new archive starts in its place
        assert await archive.list_sessions() == []


@pytest.fixture
def other_process() -> Iterator[int]:
    """A live process that is not this one (its pid)."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=-1)
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


async def test_recovery_waits_for_a_live_writer(
    pristine: tuple[Path, Ledger], archive_copy: Path, other_process: int
) -> None:
    _, ledger = pristine
    import socket

    holder = LeaseOwner(
        socket.gethostname(), other_process, process_start(other_process) or "", "k"
    )
    async with Archive.open(archive_copy) as archive:
        await archive.acquire_lease(ledger.sessions[-1], str(holder))
    overwrite_pages(archive_copy, 5)
    before, names = _digest(archive_copy), _names(archive_copy.parent)
    with pytest.raises(LeaseHeldError, match=f"live process.*{other_process}.*nothing was changed"):
        await recover_archive(archive_copy)
    assert (_digest(archive_copy), _names(archive_copy.parent)) == (before, names)
