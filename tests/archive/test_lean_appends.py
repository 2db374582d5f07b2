"""An append writes its turn and nothing else; the rest follows in batches (issue 39.4).

The session's turn count and activity time are read from its turns, the stored columns
and the full-text index catch up when the archive is idle, before a search and at close.
Nothing is lost: a writer killed with SIGKILL at any moment leaves a tail that counts at
once and is indexed by the next indexing, and the index then matches the turns exactly.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive
from loom_jupyter.archive.clock import ManualClock
from loom_jupyter.archive.schema import lighten_appends, migrate
from loom_jupyter.archive.tables import MIGRATIONS
from loom_jupyter.messages import TurnDraft

if TYPE_CHECKING:
    from loom_jupyter.settings import JournalMode

NOTEBOOK = "/work/analysis.ipynb"
WRITER = Path(__file__).with_name("writer.py")
JOURNALS = pytest.mark.parametrize("journal", ["wal", "delete"])


def _stored(path: Path, session_id: str) -> tuple[int, str]:
    """The session row's stored ``turn_count`` and ``last_active_at``, read raw."""
    with closing(sqlite3.connect(path)) as db:
        row = db.execute(
            "SELECT turn_count, last_active_at FROM cowork_sessions WHERE id = ?", [session_id]
        ).fetchone()
    return int(row[0]), str(row[1])


def _indexed(path: Path) -> list[int]:
    """The turn ids the full-text index holds."""
    with closing(sqlite3.connect(path)) as db:
        return [int(r[0]) for r in db.execute("SELECT id FROM turns_fts_docsize ORDER BY id")]


def _index_matches_the_turns(path: Path) -> bool:
    """FTS5's own check of the index against the turns' text (``rank`` 1: the content)."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("INSERT INTO turns_fts (turns_fts, rank) VALUES ('integrity-check', 1)")
        turns = db.execute("SELECT count(*) FROM conversation_turns").fetchone()[0]
        indexed = db.execute("SELECT count(*) FROM turns_fts_docsize").fetchone()[0]
    return bool(turns == indexed)


def _spawn_writer(path: Path, journal: JournalMode) -> subprocess.Popen[str]:
    """``writer.py`` appending to ``path`` until killed."""
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(path), "0", "crash", journal],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def _wait_for(check: object, what: str, seconds: float = 60.0) -> None:
    """Poll ``check()`` until true (the idle indexing runs on the archive's own loop)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():  # type: ignore[operator]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"waited {seconds:.0f} s for {what}")
        await asyncio.sleep(0.05)


@JOURNALS
async def test_an_append_leaves_the_session_row_and_the_index_for_later(
    tmp_path: Path, journal: JournalMode
) -> None:
    path, clock = tmp_path / "a.sqlite", ManualClock()
    async with Archive.open(path, clock=clock, journal_mode=journal) as archive:
        sid = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        made = _stored(path, sid)
        for text in ("what is the churn", "churn is 4 %", "and by region?"):
            clock.advance(60)
            await archive.append_turn(sid, TurnDraft(role="user", content=text))
        assert _stored(path, sid) == made  # the row was not written
        assert _indexed(path) == []
        info = await archive.get_session(sid)
        assert (info.turn_count, info.last_active_at) == (3, clock.now())
        assert info.title == "what is the churn"
        assert await archive.last_turn_number(sid) == 3
        hits = await archive.search(sid, "region")  # a search indexes the tail first
        assert hits[0].turn_number == 3
        assert _stored(path, sid) == (3, clock.now())  # brought up to date in that batch
    assert _index_matches_the_turns(path)


async def test_the_latest_session_is_the_one_with_the_newest_turn(tmp_path: Path) -> None:
    clock = ManualClock()
    async with Archive.open(tmp_path / "a.sqlite", clock=clock) as archive:
        first = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        clock.advance(60)
        second = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        clock.advance(60)
        await archive.append_turn(first, TurnDraft(role="user", content="back to the first"))
        latest = await archive.latest_active_session(NOTEBOOK)
        assert latest is not None
        assert latest.id == first
        listed = await archive.list_sessions(NOTEBOOK)
        assert [s.id for s in listed] == [first, second]


async def test_a_turn_number_a_recovery_lost_is_never_reused(archive_file: Path) -> None:
    archive_file.parent.mkdir()
    async with Archive.open(archive_file) as archive:
        sid = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        for n in range(3):
            await archive.append_turn(sid, TurnDraft(role="user", content=f"turn {n}"))
        await archive._db.execute("UPDATE cowork_sessions SET turn_count = 10 WHERE id = ?", [sid])
        assert (await archive.get_session(sid)).turn_count == 10
        assert await archive.append_turn(sid, TurnDraft(role="user", content="next")) == 11


@JOURNALS
async def test_idle_indexing_waits_for_a_streaming_answer(
    tmp_path: Path, journal: JournalMode
) -> None:
    path = tmp_path / "a.sqlite"
    async with Archive.open(path, journal_mode=journal) as archive:
        sid = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        await archive.append_turn(sid, TurnDraft(role="user", content="plot the revenue"))
        await _wait_for(lambda: len(_indexed(path)) == 1, "the question indexed once idle")
        draft = TurnDraft(role="assistant", content="Plotting reve", status="partial")
        number = await archive.append_turn(sid, draft)
        await archive.append_turn(sid, TurnDraft(role="user", content="later question"))
        await asyncio.sleep(1.0)  # idle: the streaming row and what follows wait
        assert len(_indexed(path)) == 1
        done = TurnDraft(role="assistant", content="Plotted the quarterly revenue")
        await archive.update_turn(sid, number, done)
        await _wait_for(lambda: len(_indexed(path)) == 3, "the finished answer indexed")
        assert (await archive.search(sid, "quarterly"))[0].turn_number == number
        assert await archive.search(sid, "reve") == []
    assert _index_matches_the_turns(path)


async def test_a_search_finds_a_streaming_answer_and_then_its_final_text(
    archive: Archive, session: str, archive_file: Path
) -> None:
    draft = TurnDraft(role="assistant", content="the median is", status="partial")
    number = await archive.append_turn(session, draft)
    assert (await archive.search(session, "median"))[0].turn_number == number
    final = TurnDraft(role="assistant", content="the mean is 41.5")  # the indexed row, rewritten
    await archive.update_turn(session, number, final)
    assert await archive.search(session, "median") == []
    assert (await archive.search(session, "mean"))[0].turn_number == number
    assert _index_matches_the_turns(archive_file)


@JOURNALS
async def test_deleting_sessions_with_turns_not_yet_indexed_keeps_the_index_whole(
    tmp_path: Path, journal: JournalMode
) -> None:
    path = tmp_path / "a.sqlite"
    async with Archive.open(path, journal_mode=journal) as archive:
        kept = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        gone = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        for n in range(4):
            await archive.append_turn(gone, TurnDraft(role="user", content=f"gone {n} apples"))
            await archive.append_turn(kept, TurnDraft(role="user", content=f"kept {n} apples"))
        await archive.index_turns()
        await archive.append_turn(gone, TurnDraft(role="user", content="gone late apples"))
        await archive.append_turn(kept, TurnDraft(role="user", content="kept late apples"))
        await archive.delete_session(gone)  # indexed and unindexed turns at once
        hits = await archive.search(kept, "apples", limit=20, all_sessions=True)
        assert sorted(h.turn_number for h in hits) == [1, 2, 3, 4, 5]
        assert {h.session_id for h in hits} == {kept}
        assert await archive.search(kept, "gone", all_sessions=True) == []
    assert _index_matches_the_turns(path)


@JOURNALS
async def test_a_writer_killed_at_any_moment_leaves_a_tail_that_counts_and_is_indexed(
    tmp_path: Path, journal: JournalMode
) -> None:
    """SIGKILL lands anywhere: between appends, inside one, inside an index batch."""
    path = tmp_path / "a.sqlite"
    writer = _spawn_writer(path, journal)
    assert writer.stdout is not None
    sid = writer.stdout.readline().split()[1]
    acked = [int(writer.stdout.readline().split()[1]) for _ in range(150)]  # 2+ index batches
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    acked += [int(line.split()[1]) for line in writer.stdout if line.startswith("ack")]
    async with Archive.open(path, journal_mode=journal) as archive:
        numbers = [t.turn_number for t in await archive.get_turns(sid)]
        assert numbers == list(range(1, len(numbers) + 1))
        assert set(acked) <= set(numbers)
        info = await archive.get_session(sid)
        assert info.turn_count == len(numbers)
        newest = (await archive.get_turn(sid, len(numbers))).created_at
        assert info.last_active_at == newest
        assert await archive.append_turn(sid, TurnDraft(role="user", content="after")) == (
            len(numbers) + 1
        )
        await archive.index_turns()
        assert _stored(path, sid)[0] == len(numbers) + 1
    assert _index_matches_the_turns(path)


async def test_an_archive_of_version_10_keeps_its_counts_titles_and_index(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        migrate(db, MIGRATIONS[:10])  # the triggers count, title and index every turn
        db.execute(
            "INSERT INTO cowork_sessions (id, notebook_path, model, created_at, last_active_at)"
            " VALUES ('s1', ?, 'm', '2025-01-01', '2025-01-01')",
            [NOTEBOOK],
        )
        for number, (role, text) in enumerate(
            [("user", "forecast the sales"), ("assistant", "sales rise 3 %")], start=1
        ):
            db.execute(
                "INSERT INTO conversation_turns (session_id, turn_number, role, content,"
                " created_at) VALUES ('s1', ?, ?, ?, ?)",
                [number, role, text, f"2025-01-0{number + 1}"],
            )
    assert MIGRATIONS[10] is lighten_appends
    async with Archive.open(path) as archive:
        info = await archive.get_session("s1")
        assert (info.turn_count, info.last_active_at, info.title) == (
            2,
            "2025-01-03",
            "forecast the sales",
        )
        assert await archive.append_turn("s1", TurnDraft(role="user", content="why?")) == 3
        hits = await archive.search("s1", "sales")
        assert sorted(h.turn_number for h in hits[:2]) == [1, 2]
    with closing(sqlite3.connect(path)) as db:
        triggers = {
            r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
    assert triggers == {"turns_title", "turns_fts_delete", "turns_fts_update"}
    assert _index_matches_the_turns(path)
