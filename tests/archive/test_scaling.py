"""Work per call must not grow with the archive: counted in SQLite VM steps, not time."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path


def _fill(path: Path, session_id: str, turns: int) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO conversation_turns (session_id, turn_number, role, content, token_count,"
        " created_at) VALUES (?, ?, 'user', ?, 50, '2026-01-01')",
        [(session_id, n, f"turn {n} about revenue") for n in range(1, turns + 1)],
    )
    db.execute("COMMIT")
    db.close()


async def _session_of(path: Path, turns: int) -> str:
    async with Archive.open(path) as archive:
        sid = await archive.create_session(notebook_path="n", model="m")
    _fill(path, sid, turns)
    return sid


async def _vm_steps(path: Path, sid: str, call: Callable[[Archive, str], Awaitable[object]]) -> int:
    """SQLite VM steps (units of 10 instructions) ``call`` takes on session ``sid``."""
    async with Archive.open(path) as archive:
        steps = 0

        def count() -> int:
            nonlocal steps
            steps += 1
            return 0  # 0 = keep going

        await archive._db._link.conn.set_progress_handler(count, 10)
        await call(archive, sid)
        return steps


async def _window(archive: Archive, sid: str) -> object:
    turns = await archive.recent_turns(sid, token_budget=1000)
    assert len(turns) == 20
    return turns


async def _everything(archive: Archive, sid: str) -> object:
    return await archive.get_turns(sid)


async def test_recent_window_work_is_flat_in_session_size(tmp_path: Path) -> None:
    small, big = tmp_path / "small.sqlite", tmp_path / "big.sqlite"
    small_sid, big_sid = await _session_of(small, 200), await _session_of(big, 4_000)
    window_small = await _vm_steps(small, small_sid, _window)
    window_big = await _vm_steps(big, big_sid, _window)
    assert window_big < window_small * 1.3  # 20x the turns, about the same work
    # The counter does see work that grows: reading the whole session.
    all_small = await _vm_steps(small, small_sid, _everything)
    all_big = await _vm_steps(big, big_sid, _everything)
    assert all_big > all_small * 10
