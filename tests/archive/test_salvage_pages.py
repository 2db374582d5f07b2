"""The page pass of a recovery: our reader against SQLite's own files, then the four damages.

The reader is checked on files SQLite wrote (page sizes, overflow chains, every
integer width, the WAL); the recoveries on real archives built with the Archive
API and damaged in the four ways of issue 29, each with several seeds.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import shutil
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from damaged_archive import (
    DAMAGES,
    Ledger,
    build_ledger,
    checkpoint,
    count,
    damage,
    integrity,
    overwrite_page,
    page_size,
    root_page,
    rows,
)

from loom_jupyter.archive import Archive
from loom_jupyter.archive.salvage import archive_health, recover_archive
from loom_jupyter.archive.salvage_pages import (
    find_page_size,
    load_image,
    page_rows,
    schema_roots,
    table_shape,
)
from loom_jupyter.errors import ArchiveCorruptError
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path

NOTEBOOK = "/work/analysis.ipynb"
TURNS = 600  # about 640 pages: 12 pages are 2 % of the file
_INTS = (0, 1, -1, 127, -129, 2**15, -(2**23) - 1, 2**31, 2**47, -(2**63), 2**63 - 1)


def _fill(db: sqlite3.Connection, rng: random.Random, count: int) -> None:
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INTEGER, c REAL, d BLOB)")
    for i in range(count):
        text = None if i % 7 == 0 else "é" * rng.randint(0, 12_000)  # long ones overflow
        blob = rng.randbytes(rng.randint(0, 300))
        db.execute(
            "INSERT INTO t (a, b, c, d) VALUES (?, ?, ?, ?)",
            (text, rng.choice(_INTS), rng.random(), blob),
        )


def _page_pass(path: Path, shape_db: sqlite3.Connection) -> dict[int, tuple[object, ...]]:
    image = load_image(path)
    assert image is not None
    found = page_rows(image, {"t": table_shape(shape_db, "t")}, schema_roots(image))["t"]
    return {rowid: (rowid, *row.values[1:]) for rowid, row in found.items()}


@pytest.mark.parametrize("size", [512, 4096, 65536])
@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_the_reader_reads_what_sqlite_wrote(tmp_path: Path, size: int, journal: str) -> None:
    path = tmp_path / "t.sqlite"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute(f"PRAGMA page_size = {size}")
        db.execute(f"PRAGMA journal_mode = {journal}")
        db.execute("PRAGMA wal_autocheckpoint = 0")  # the rows stay in the -wal while open
        _fill(db, random.Random(size), 300)
        db.execute("UPDATE t SET a = 'changed' WHERE id = 5")
        db.execute("DELETE FROM t WHERE id = 9")
        expected = {row[0]: row for row in db.execute("SELECT * FROM t")}
        assert _page_pass(path, db) == expected


def test_a_later_wal_frame_wins(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode = wal")
        db.execute("PRAGMA wal_autocheckpoint = 0")
        _fill(db, random.Random(1), 20)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the main file holds the old row
        db.execute("UPDATE t SET a = 'newest' WHERE id = 3")
        image = load_image(path)
        assert image is not None
        row = page_rows(image, {"t": table_shape(db, "t")}, schema_roots(image))["t"][3]
    assert row.values[1] == "newest"
    assert row.rank[0] > 0  # from the WAL, over the main file's page


@pytest.mark.parametrize("size", [1024, 4096, 8192])
def test_the_page_size_is_found_from_the_pages(tmp_path: Path, size: int) -> None:
    path = tmp_path / "t.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA page_size = {size}")
        _fill(db, random.Random(2), 200)
        db.commit()
    data = bytearray(path.read_bytes())
    data[:100] = bytes(100)
    assert find_page_size(bytes(data)) == size


def test_random_bytes_have_no_sqlite_page(tmp_path: Path) -> None:
    path = tmp_path / "noise.sqlite"
    path.write_bytes(random.Random(3).randbytes(300_000))
    assert load_image(path) is None
    assert archive_health(path) == "unreadable"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Ledger]:
    """A 600-turn archive built once for the module (its layout is seeded)."""
    path = tmp_path_factory.mktemp("pristine") / "analysis.ipynb.sqlite"
    ledger = asyncio.run(build_ledger(path, NOTEBOOK, turns=TURNS))
    checkpoint(path)
    return path, ledger


def _copy(pristine: tuple[Path, Ledger], tmp_path: Path) -> Path:
    path = tmp_path / ".loom" / "analysis.ipynb.sqlite"
    path.parent.mkdir()
    shutil.copyfile(pristine[0], path)
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("seed", [0, 1, 2, 4, 5])
@pytest.mark.parametrize("kind", DAMAGES)
async def test_each_damage_keeps_its_turns(
    pristine: tuple[Path, Ledger], tmp_path: Path, kind: str, seed: int
) -> None:
    original, ledger = pristine
    path = _copy(pristine, tmp_path)
    damage(path, kind, seed)
    damaged = _digest(path)
    assert archive_health(path) == "damaged"

    report = await recover_archive(path)

    turns = report.tally("conversation_turns")
    total = ledger.turns + 1  # the sub-agent's turn too
    assert report.outcome == "recovered"
    assert turns.saved == count(path, "conversation_turns")
    assert turns.saved >= (0.94 if kind == "cut 5 %" else 0.95) * total
    assert turns.saved + turns.lost == total
    assert turns.from_pages + turns.from_trees == turns.saved
    assert report.header_rebuilt == (kind == "zero header")
    assert rows(path, "conversation_turns") <= rows(original, "conversation_turns")  # verbatim
    assert integrity(path) == [("ok",)]
    assert report.damaged_copy is not None
    assert _digest(report.damaged_copy) == damaged  # kept beside it, as it was
    assert report.damaged_copy.parent == path.parent
    async with Archive.open(path) as archive:
        latest = await archive.latest_active_session()
        assert latest is not None
        assert latest.id == ledger.sessions[-1]
        hits = await archive.search(latest.id, "revenue forecast", limit=3)
        assert hits  # the full-text index was rebuilt from the saved turns
        saved = await archive.get_turn(latest.id, hits[0].turn_number)
        assert "revenue" in saved.content


@pytest.mark.parametrize("seed", [4, 10])
async def test_misplaced_pages_cost_only_their_own_rows(
    pristine: tuple[Path, Ledger], tmp_path: Path, seed: int
) -> None:
    """Copies of valid pages over interior pages hide whole rowid ranges from the tree pass:
    six pages anywhere, and the turns' root (interior: the layout may move, the root stays)."""
    path = _copy(pristine, tmp_path)
    root, size, image = root_page(path, "conversation_turns"), page_size(path), path.read_bytes()
    assert image[(root - 1) * size] == 0x05  # an interior table page
    source = random.Random(seed).choice([n for n in range(2, len(image) // size) if n != root])
    damage(path, "copy 6 pages", seed)
    overwrite_page(path, root, image[(source - 1) * size : source * size])
    report = await recover_archive(path)
    turns = report.tally("conversation_turns")
    assert turns.from_pages > 100  # the page pass found what the tree could not reach
    assert turns.lost <= 12  # six pages hold a few turns each


async def test_a_destroyed_first_page_is_read_by_shape(
    pristine: tuple[Path, Ledger], tmp_path: Path
) -> None:
    """Page 1 (header and schema) overwritten: every row is mapped to its table by its shape."""
    original, ledger = pristine
    path = _copy(pristine, tmp_path)
    overwrite_page(path, 1, random.Random(4).randbytes(4096))
    assert archive_health(path) == "damaged"
    with pytest.raises(ArchiveCorruptError, match="%cowork recover"):
        async with Archive.open(path):
            pass

    report = await recover_archive(path)

    assert report.header_rebuilt
    for table in ("cowork_sessions", "conversation_turns", "model_calls", "tasks", "subtasks"):
        tally = report.tally(table)
        assert (tally.saved, tally.lost) == (count(original, table), 0), table
        assert tally.from_pages == tally.saved, table
        assert rows(path, table) == rows(original, table), table
    assert integrity(path) == [("ok",)]
    assert report.latest_session_id == ledger.sessions[-1]


async def test_a_zeroed_header_with_turns_in_the_wal(tmp_path: Path) -> None:
    """The header rebuilt and the -wal's committed frames laid over the pages: nothing lost."""
    live = tmp_path / "live.sqlite"
    copy = tmp_path / ".loom" / "nb.ipynb.sqlite"
    copy.parent.mkdir()
    async with Archive.open(live) as archive:
        sid = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        for n in range(100):
            await archive.append_turn(sid, TurnDraft(role="user", content=f"early {n} " * 30))
        await archive._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        await archive.append_turn(sid, TurnDraft(role="user", content="only in the wal"))
        for suffix in ("", "-wal"):  # the files as a crash leaves them
            shutil.copyfile(f"{live}{suffix}", f"{copy}{suffix}")
    with copy.open("r+b") as handle:
        handle.write(bytes(100))

    report = await recover_archive(copy)

    assert report.header_rebuilt
    assert report.tally("conversation_turns").saved == 101
    async with Archive.open(copy) as archive:
        assert (await archive.get_turn(sid, 101)).content == "only in the wal"


async def test_random_bytes_are_still_left_as_they_were(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb.sqlite"
    path.write_bytes(random.Random(5).randbytes(200_000))
    before = _digest(path)
    with pytest.raises(ArchiveCorruptError, match="--move-aside"):
        await recover_archive(path)
    assert _digest(path) == before
    assert _names(tmp_path) == [path.name]
