"""Real processes: a writer killed with SIGKILL loses nothing it acknowledged, and two
writers share one archive."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from loom_jupyter.archive import Archive
from loom_jupyter.messages import TurnDraft

WRITER = Path(__file__).with_name("writer.py")


def _spawn(path: Path, count: int, label: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(count), label],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _session_id(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    first = process.stdout.readline().split()
    assert first[0] == "session", first
    return first[1]


def _finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The rest of the output, read through the same buffered streams as ``_session_id``.

    (``communicate()`` reads the raw pipes and misses lines ``readline`` already buffered.)
    """
    assert process.stdout is not None
    assert process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()
    process.wait(timeout=120)
    return out, err


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])


async def test_sigkill_loses_no_acknowledged_turn(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    writer = _spawn(path, 0, "crash")
    sid = _session_id(writer)
    assert writer.stdout is not None
    acked: list[int] = []
    while len(acked) < 150:
        acked.append(int(writer.stdout.readline().split()[1]))
    writer.send_signal(signal.SIGKILL)  # mid-run: it keeps appending until it dies
    writer.wait()
    acked += [int(line.split()[1]) for line in writer.stdout if line.startswith("ack")]
    assert writer.returncode == -signal.SIGKILL
    assert acked == list(range(1, len(acked) + 1))
    assert _integrity(path) == "ok"
    async with Archive.open(path) as archive:
        numbers = [t.turn_number for t in await archive.get_turns(sid)]
        assert set(acked) <= set(numbers)
        assert numbers == list(range(1, len(numbers) + 1))
        assert (await archive.get_session(sid)).turn_count == len(numbers)
        assert (
            await archive.append_turn(sid, TurnDraft(role="user", content="after"))
            == len(numbers) + 1
        )
        hits = await archive.search(sid, f"message {acked[-1]}", limit=50)
        assert any(h.turn_number == acked[-1] for h in hits)


async def test_two_processes_write_different_sessions(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    async with Archive.open(path):
        pass  # create the schema first, so both writers only append
    writers = [_spawn(path, 200, label) for label in ("left", "right")]
    sessions = [_session_id(w) for w in writers]
    for writer in writers:
        out, err = _finish(writer)
        assert writer.returncode == 0, err
        assert out.splitlines()[-1] == "ack 200"
    assert _integrity(path) == "ok"
    async with Archive.open(path) as archive:
        for sid, label in zip(sessions, ("left", "right"), strict=True):
            turns = await archive.get_turns(sid)
            assert [t.turn_number for t in turns] == list(range(1, 201))
            assert all(t.content.startswith(f"{label} message {t.turn_number} ") for t in turns)
            assert [t.created_at for t in turns] == sorted(t.created_at for t in turns)


async def test_two_processes_create_one_archive_at_once(tmp_path: Path) -> None:
    path = tmp_path / "fresh.sqlite"
    writers = [_spawn(path, 50, label) for label in ("a", "b")]
    for writer in writers:
        _, err = _finish(writer)
        assert writer.returncode == 0, err
    assert _integrity(path) == "ok"
    async with Archive.open(path) as archive:
        sessions = await archive.list_sessions()
        assert sorted(s.turn_count for s in sessions) == [50, 50]
