"""Schema versions: a fresh file gets every migration; a v1 file is upgraded in place."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive
from loom_jupyter.archive.schema import Migration, migrate, schema_version
from loom_jupyter.archive.tables import MIGRATIONS
from loom_jupyter.errors import ArchiveError
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master")}


def test_migration_names_are_unique_and_functions() -> None:
    names = [m.name for m in MIGRATIONS]
    assert len(names) == len(set(names))
    assert all(callable(m.apply) for m in MIGRATIONS)


async def test_fresh_archive_is_at_the_latest_version(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    async with Archive.open(path):
        pass
    with sqlite3.connect(path) as db:
        assert schema_version(db) == len(MIGRATIONS)
    assert {
        "cowork_sessions",
        "conversation_turns",
        "turns_fts",
        "model_calls",
        "tasks",
        "subtasks",
    } <= _tables(path)


async def test_upgrade_from_version_1_keeps_the_data(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    assert migrate(db, MIGRATIONS[:1]) == ["create_sessions_and_turns"]
    db.execute(
        "INSERT INTO cowork_sessions (id, notebook_path, title, model, created_at, last_active_at,"
        " turn_count) VALUES ('s1', '/nb.ipynb', 'old', 'm', '2024-01-01', '2024-01-01', 2)"
    )
    db.executemany(
        "INSERT INTO conversation_turns (session_id, turn_number, role, content, created_at)"
        " VALUES ('s1', ?, ?, ?, '2024-01-01')",
        [(1, "user", "what is the median income"), (2, "assistant", "the median is 42")],
    )
    db.close()
    assert schema_version(sqlite3.connect(path)) == 1
    assert "turns_fts" not in _tables(path)

    async with Archive.open(path) as archive:
        info = await archive.get_session("s1")
        assert (info.title, info.turn_count) == ("old", 2)
        assert [t.content for t in await archive.get_turns("s1")] == [
            "what is the median income",
            "the median is 42",
        ]
        hits = await archive.search("s1", "median", limit=5)  # FTS built from old rows
        assert {h.turn_number for h in hits} == {1, 2}
        assert await archive.append_turn("s1", TurnDraft(role="user", content="thanks")) == 3
        assert (await archive.get_session("s1")).turn_count == 3
        await archive.create_task("s1", goal="new tables work")
    with sqlite3.connect(path) as check:
        assert schema_version(check) == len(MIGRATIONS)
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_each_migration_is_atomic(tmp_path: Path) -> None:
    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    db = sqlite3.connect(tmp_path / "a.sqlite", isolation_level=None)
    steps = [*MIGRATIONS[:1], Migration("broken", broken)]
    with pytest.raises(RuntimeError, match="boom"):
        migrate(db, steps)
    assert schema_version(db) == 1
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in names


async def test_a_newer_archive_is_refused_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    async with Archive.open(path):
        pass
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 3}")
    before = path.read_bytes()
    with pytest.raises(ArchiveError, match=r"newer loom_jupyter.*pip install -U"):
        async with Archive.open(path):
            pass
    assert path.read_bytes() == before
