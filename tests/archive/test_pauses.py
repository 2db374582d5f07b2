"""The notebook's rhythm: pauses between an answer and the next message, across sessions.

Turns are written through archives on a :class:`ManualClock` set to the minute each
turn is said at (no patched clock, no sleeping)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive
from loom_jupyter.archive.clock import ManualClock
from loom_jupyter.archive.project import neighbour_pauses
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

import pytest


class Minutes:
    """A manual clock moved to minutes after 10:00, as the test says turns happen."""

    def __init__(self) -> None:
        self.clock = ManualClock("2026-01-01T10:00:00.000000+00:00")
        self.minute = 0.0

    async def say(self, archive: Archive, session: str, at: float, role: str) -> None:
        self.clock.advance((at - self.minute) * 60)
        self.minute = at
        await archive.append_turn(session, TurnDraft(role=role, content=f"{role} at {at}"))  # type: ignore[arg-type]


@pytest.fixture
def minutes() -> Minutes:
    return Minutes()


@pytest.fixture
async def timed(archive_file: Path, minutes: Minutes) -> AsyncIterator[Archive]:
    """The test's archive, on the manual clock."""
    archive_file.parent.mkdir(exist_ok=True)
    async with Archive.open(archive_file, clock=minutes.clock) as opened:
        yield opened


async def test_pauses_span_sessions_oldest_first(timed: Archive, minutes: Minutes) -> None:
    archive = timed
    session = await archive.create_session(notebook_path="/work/analysis.ipynb", model="m")
    for at, role in [(0, "user"), (1, "assistant"), (21, "user"), (22, "assistant"), (24, "user")]:
        await minutes.say(archive, session, at, role)
    later = await archive.create_session(notebook_path="/work/analysis.ipynb", model="m")
    for at, role in [(30, "user"), (31, "assistant"), (41, "user")]:
        await minutes.say(archive, later, at, role)

    assert await archive.recent_pauses() == (1200.0, 120.0, 600.0)
    assert await archive.recent_pauses(limit=2) == (120.0, 600.0)


async def test_forked_copies_and_sub_agents_are_not_the_persons_rhythm(
    timed: Archive, minutes: Minutes
) -> None:
    archive = timed
    session = await archive.create_session(notebook_path="/work/analysis.ipynb", model="m")
    for at, role in [(0, "user"), (1, "assistant"), (3, "user"), (4, "assistant")]:
        await minutes.say(archive, session, at, role)
    fork = await archive.fork_session(session)  # copies the 2-minute pause
    await minutes.say(archive, fork, 20, "user")  # 16 minutes after the copied answer
    task = await archive.create_task(session, goal="split the work")
    subtask = await archive.create_subtask(task, subtask_key="a", description="part a")
    child = await archive.create_session(notebook_path="/n", model="m", parent_session_id=session)
    await archive.update_subtask(subtask, child_session_id=child)
    for at, role in [(21, "user"), (21.1, "assistant"), (21.2, "user")]:
        await minutes.say(archive, child, at, role)

    assert await archive.recent_pauses() == (120.0, 960.0)


async def test_an_archive_without_conversation_has_no_rhythm(archive: Archive) -> None:
    assert await archive.recent_pauses() == ()


async def test_the_notebooks_beside_give_their_pauses_and_a_broken_one_is_skipped(
    timed: Archive, archive_file: Path, minutes: Minutes
) -> None:
    other_file = archive_file.with_name("other.ipynb.sqlite")
    async with Archive.open(other_file, clock=minutes.clock) as other:
        sid = await other.create_session(notebook_path="/work/other.ipynb", model="m")
        for at, role in [(0, "user"), (1, "assistant"), (31, "user")]:
            await minutes.say(other, sid, at, role)
    archive_file.with_name("broken.ipynb.sqlite").write_bytes(b"not a database at all")
    session = await timed.create_session(notebook_path="/work/analysis.ipynb", model="m")
    await minutes.say(timed, session, 40, "user")  # this notebook's own: not a neighbour's

    assert await neighbour_pauses(archive_file) == (1800.0,)
