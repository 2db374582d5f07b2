"""The notebook's rhythm: pauses between an answer and the next message, across sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive
from loom_jupyter.archive import turns as turns_module
from loom_jupyter.archive.project import neighbour_pauses
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


class Stamps:
    """``utc_now`` for the archive's turns: minutes after 10:00, as the test sets them."""

    def __init__(self) -> None:
        self.minute = 0.0

    def __call__(self) -> str:
        hours, minutes = divmod(int(self.minute), 60)
        seconds = round((self.minute % 1) * 60)
        return f"2026-01-01T{10 + hours:02d}:{minutes:02d}:{seconds:02d}+00:00"


async def _say(archive: Archive, session: str, stamps: Stamps, at: float, role: str) -> None:
    stamps.minute = at
    await archive.append_turn(session, TurnDraft(role=role, content=f"{role} at {at}"))  # type: ignore[arg-type]


async def test_pauses_span_sessions_oldest_first(
    archive: Archive, session: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamps = Stamps()
    monkeypatch.setattr(turns_module, "utc_now", stamps)
    for at, role in [(0, "user"), (1, "assistant"), (21, "user"), (22, "assistant"), (24, "user")]:
        await _say(archive, session, stamps, at, role)
    later = await archive.create_session(notebook_path="/work/analysis.ipynb", model="m")
    for at, role in [(30, "user"), (31, "assistant"), (41, "user")]:
        await _say(archive, later, stamps, at, role)

    assert await archive.recent_pauses() == (1200.0, 120.0, 600.0)
    assert await archive.recent_pauses(limit=2) == (120.0, 600.0)


async def test_forked_copies_and_sub_agents_are_not_the_persons_rhythm(
    archive: Archive, session: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamps = Stamps()
    monkeypatch.setattr(turns_module, "utc_now", stamps)
    for at, role in [(0, "user"), (1, "assistant"), (3, "user"), (4, "assistant")]:
        await _say(archive, session, stamps, at, role)
    fork = await archive.fork_session(session)  # copies the 2-minute pause
    await _say(archive, fork, stamps, 20, "user")  # 16 minutes after the copied answer
    task = await archive.create_task(session, goal="split the work")
    subtask = await archive.create_subtask(task, subtask_key="a", description="part a")
    child = await archive.create_session(notebook_path="/n", model="m", parent_session_id=session)
    await archive.update_subtask(subtask, child_session_id=child)
    for at, role in [(21, "user"), (21.1, "assistant"), (21.2, "user")]:
        await _say(archive, child, stamps, at, role)

    assert await archive.recent_pauses() == (120.0, 960.0)


async def test_an_archive_without_conversation_has_no_rhythm(archive: Archive) -> None:
    assert await archive.recent_pauses() == ()


async def test_the_notebooks_beside_give_their_pauses_and_a_broken_one_is_skipped(
    archive: Archive, session: str, archive_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamps = Stamps()
    monkeypatch.setattr(turns_module, "utc_now", stamps)
    async with Archive.open(archive_file.with_name("other.ipynb.sqlite")) as other:
        sid = await other.create_session(notebook_path="/work/other.ipynb", model="m")
        for at, role in [(0, "user"), (1, "assistant"), (31, "user")]:
            await _say(other, sid, stamps, at, role)
    archive_file.with_name("broken.ipynb.sqlite").write_bytes(b"not a database at all")
    await _say(archive, session, stamps, 40, "user")  # this notebook's own: not a neighbour's

    assert await neighbour_pauses(archive_file) == (1800.0,)
