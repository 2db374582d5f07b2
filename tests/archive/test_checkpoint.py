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
