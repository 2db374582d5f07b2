"""WAL checkpoints happen when the archive is idle, not inside an append."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive
from loom_jupyter.archive.checkpoint import IDLE_SECONDS
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from loom_jupyter.archive.db import Tx


def _turns_in_main_file(path: Path) -> int:
    """Turns already written back to the database file (``immutable`` ignores the WAL)."""
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return int(db.execute("SELECT count(*) FROM conversation_turns").fetchone()[0])
    finally:
        db.close()


async def test_idle_archive_is_checkpointed(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path="n", model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content="hello"))
        assert _turns_in_main_file(path) == 0  # committed to the WAL; no write-back yet
        for _ in range(100):  # wait (up to ~20 s on a loaded machine) for the idle checkpoint
            await asyncio.sleep(IDLE_SECONDS)
            if _turns_in_main_file(path) == 1:
                break
        assert _turns_in_main_file(path) == 1
        assert await archive.append_turn(sid, TurnDraft(role="user", content="still writable")) == 2
    assert _turns_in_main_file(path) == 2  # close checkpoints the rest


def _segments(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT count(DISTINCT segid) FROM turns_fts_idx").fetchone()[0])
    finally:
        db.close()


async def test_idle_time_merges_the_index_then_rests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import loom_jupyter.archive.db as db_module
    from loom_jupyter.archive.checkpoint import idle_upkeep

    calls: list[bool] = []

    async def counted(tx: Tx) -> bool:
        calls.append(await idle_upkeep(tx))
        return calls[-1]

    monkeypatch.setattr(db_module, "idle_upkeep", counted)
    path = tmp_path / "a.sqlite"
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path="n", model="m")
        for n in range(200):  # each commit adds a segment; automerge keeps several
            await archive.append_turn(sid, TurnDraft(role="user", content=f"note {n} on sales"))
        assert _segments(path) > 2
        for _ in range(200):  # up to ~100 s on a loaded machine
            await asyncio.sleep(IDLE_SECONDS)
            if _segments(path) <= 2 and calls and not calls[-1]:
                break
        assert _segments(path) <= 2
        assert calls[-1] is False  # the last upkeep found nothing left to merge...
        settled = len(calls)
        await asyncio.sleep(4 * IDLE_SECONDS)
        assert len(calls) == settled  # ...and nothing re-arms it until the next write
        hits = await archive.search(sid, "note 150 sales", limit=3)
        assert hits[0].turn_number == 151
