"""The ``executions`` table: every execution's code, names and duration (issue 21)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.lineage import ExecutionRecord
from loom_jupyter.readers import ExecutionReader

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive


async def test_an_execution_round_trips(archive: Archive, session: str) -> None:
    first = await archive.record_execution(
        ExecutionRecord(
            id=0,
            source="cell",
            code="df = load()\ndf.dropna(inplace=True)",
            reads=("load",),
            sets=("df",),
            mutates=("frame",),
            effects=("reads files",),
            fingerprints={"n": "abc123"},
            duration_s=1.25,
            session_id=session,
            execution_count=4,
            kernel_run="k1",
        )
    )
    second = await archive.record_execution(
        ExecutionRecord(id=0, source="run_python", code="1/0", error="ZeroDivisionError", turn=3)
    )
    assert second > first
    records = await archive.executions()
    assert [r.id for r in records] == [first, second]
    kept = records[0]
    assert kept.code == "df = load()\ndf.dropna(inplace=True)"
    assert kept.reads == ("load",)
    assert kept.sets == ("df",)
    assert kept.mutates == ("frame",)
    assert kept.effects == ("reads files",)
    assert kept.fingerprints == {"n": "abc123"}
    assert kept.duration_s == 1.25
    assert kept.execution_count == 4
    assert kept.kernel_run == "k1"
    assert kept.label == "cell [4]"
    assert records[1].label == "run_python (turn 3)"
    assert records[1].error == "ZeroDivisionError"
    assert kept.created_at


async def test_the_newest_executions_come_back_oldest_first(archive: Archive) -> None:
    for n in range(5):
        await archive.record_execution(ExecutionRecord(id=0, source="cell", code=f"x{n} = {n}"))
    records = await archive.executions(limit=2)
    assert [r.code for r in records] == ["x3 = 3", "x4 = 4"]


async def test_the_archive_is_an_execution_reader(archive: Archive) -> None:
    assert isinstance(archive, ExecutionReader)


async def test_executions_outlive_a_reopen(archive_file: Path) -> None:
    from loom_jupyter.archive import Archive

    archive_file.parent.mkdir(exist_ok=True)
    async with Archive.open(archive_file) as first:
        await first.record_execution(ExecutionRecord(id=0, source="cell", code="a = 1"))
    async with Archive.open(archive_file) as again:
        assert [r.code for r in await again.executions()] == ["a = 1"]


async def test_a_cell_recorded_late_says_so(archive: Archive) -> None:
    """Issue 30: a cell run before Loom loaded is kept as recorded late (no timing)."""
    await archive.record_execution(
        ExecutionRecord(
            id=0, source="cell", code="a = 1", sets=("a",), execution_count=2, late=True
        )
    )
    (kept,) = await archive.executions()
    assert kept.late is True
    assert kept.label == "cell [2] (before Loom loaded)"
