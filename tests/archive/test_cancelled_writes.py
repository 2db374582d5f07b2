"""Writers cancelled at any moment (an interrupt, a Stop cancelling parallel subtasks) never
leave a transaction open for the next writer, and nothing half-written survives."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import TYPE_CHECKING

from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive


async def cancel_after(steps: int, coro_task: asyncio.Task[object], *, twice: bool) -> None:
    for _ in range(steps):
        await asyncio.sleep(0)
    coro_task.cancel()
    if twice:  # a second cancel while the first one is being handled
        await asyncio.sleep(0)
        coro_task.cancel()


async def test_transactions_cancelled_at_every_point_leave_the_archive_writable(
    archive: Archive, session: str
) -> None:
    outcomes: list[str] = []
    for steps in range(0, 24):
        for twice in (False, True):
            writers = [
                asyncio.ensure_future(archive.create_task(session, goal=f"goal {steps} {n}"))
                for n in range(3)
            ]
            await cancel_after(steps, writers[1], twice=twice)  # type: ignore[arg-type]
            results = await asyncio.gather(*writers, return_exceptions=True)
            outcomes += [type(r).__name__ for r in results]
            # The next writer always finds the connection out of any transaction.
            await archive.append_turn(session, TurnDraft(role="user", content=f"after {steps}"))
    assert set(outcomes) <= {"str", "CancelledError"}, outcomes
    assert "CancelledError" in outcomes
    tasks = await archive.list_tasks(session)
    assert len(tasks) == outcomes.count("str")  # a cancelled task left no row behind
    assert await archive.last_turn_number(session) == 48


async def test_a_writer_cancelled_while_its_begin_waits_for_the_file_lock(
    archive: Archive, archive_file: Path, session: str
) -> None:
    other = sqlite3.connect(archive_file, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    writer = asyncio.ensure_future(archive.create_task(session, goal="cancelled"))
    # Wait until the writer holds the archive (its BEGIN then waits on the file lock).
    while not archive._db._lock.locked():  # noqa: ASYNC110 - no event to wait on here
        await asyncio.sleep(0.01)
    await asyncio.sleep(0)
    writer.cancel()
    other.execute("ROLLBACK")  # the BEGIN still running on aiosqlite's thread now succeeds
    other.close()
    results = await asyncio.gather(writer, return_exceptions=True)
    assert isinstance(results[0], asyncio.CancelledError)
    task = await archive.create_task(session, goal="next")  # not "within a transaction"
    assert [t.id for t in await archive.list_tasks(session)] == [task]
