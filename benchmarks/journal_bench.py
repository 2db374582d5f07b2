"""``append_turn`` per journal mode and filesystem (issues 28 and 39.4): the ``--journals``
table of ``archive_bench.py``.

WAL and the rollback journal (``DELETE``, ``synchronous=FULL``: what ``journal_mode: auto``
picks on network and virtual filesystems), on the local disk and on real FUSE mounts
(bindfs, as root with ``/dev/fuse``; ``tests/fuse_mounts.py``): one with lock forwarding,
one with lock forwarding and no caching (``direct_io``: the stand-in for NFS with working
locks, where WAL cannot run at all).

Each setup appends its turns in rounds, the setups taking turns, so a change in the
machine's load falls on all of them alike. Beside each, SQLite's floor on the same
filesystem and journal: a one-row INSERT of the same text into a bare table, plain
``sqlite3`` (the fsyncs, locks and journal file every commit pays, whatever it writes),
each right after an append, so the pair sees the same disk; ``above`` is the median of
their differences, what the archive adds to SQLite's floor, which the fsyncs of other
processes on the same disk move far less than the p50 itself.
Then the pages one append writes, counted on the local disk with the rollback journal:
every page of the file that differs after the append.

Goals: append p50 <= 3 ms on FUSE with the rollback journal, <= 0.5 ms with WAL on the
local disk. The benchmark prints; it never asserts.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.archive import Archive
from loom_jupyter.messages import TurnDraft, TurnRole
from tests.fuse_mounts import LOCKS_NO_CACHE, LOCKS_SHARED, BindMounts, missing_fuse

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.settings import JournalMode

ROUNDS = 5
NOTEBOOK = "/data/projects/sales/analysis.ipynb"
_ROLES: tuple[TurnRole, ...] = ("user", "assistant", "tool", "assistant")
_FUSE: tuple[tuple[str, str, tuple[str, ...], tuple[JournalMode, ...]], ...] = (
    ("fuse", "locks forwarded", LOCKS_SHARED, ("wal", "delete")),
    ("nocache", "locks forwarded, no cache", LOCKS_NO_CACHE, ("delete",)),
)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


@dataclass(frozen=True)
class JournalRow:
    """``append_turn`` on one filesystem with one journal, and SQLite's floor there (ms)."""

    where: str
    journal: str
    p50: float
    p95: float
    floor: float
    above: float  # median of (append - the floor insert right after it)

    @property
    def goal(self) -> str:
        if self.journal == "delete" and self.where.startswith("fuse"):
            return "p50 <= 3 ms"
        return "p50 <= 0.5 ms" if self.journal == "wal" and self.where.startswith("local") else ""

    def line(self) -> str:
        return (
            f"{self.where:<44} {self.journal:<8} {self.p50:>8.3f} {self.p95:>8.3f} "
            f"{self.floor:>8.3f} {self.above:>8.3f}   {self.goal}"
        )


@dataclass(frozen=True)
class JournalTable:
    """The rows, the turns appended, the pages one append writes, why FUSE is missing."""

    rows: list[JournalRow]
    turns: int
    mean_bytes: float
    pages: float
    note: str = ""

    def print(self) -> None:
        print(
            f"\njournal modes: append_turn, {self.turns} turns of ~{self.mean_bytes / 1000:.1f} KB"
            f" each in {ROUNDS} rounds; floor: p50 of a one-row INSERT there, each right after an"
            " append; above: p50 of (append - that insert); times in ms"
        )
        head = f"{'filesystem':<44} {'journal':<8} {'p50':>8} {'p95':>8} {'floor':>8} {'above':>8}"
        print(head + "   goal")
        print("-" * 102)
        for row in self.rows:
            print(row.line())
        print(f"pages written per append (rollback journal, local disk): {self.pages:.2f}")
        if self.note:
            print(self.note)


class _Setup:
    """One filesystem and journal: its archive, appended to round by round, each append
    followed by a floor insert (the pair sees the same disk and the same load)."""

    def __init__(self, folder: Path, label: str, journal: JournalMode) -> None:
        self.folder, self.label, self.journal = folder, label, journal
        self.session: str | None = None
        self.said = ("", "")
        self.times: list[float] = []
        self.floor: list[float] = []

    async def append(self, texts: list[str], first: int) -> None:
        path = self.folder / f"{self.journal}.sqlite"
        floor = self._floor()
        try:
            async with Archive.open(path, journal_mode=self.journal) as archive:
                if self.session is None:
                    self.session = await archive.create_session(notebook_path=NOTEBOOK, model="m")
                for i, text in enumerate(texts, start=first):
                    draft = TurnDraft(role=_ROLES[i % 4], content=text, token_count=200)
                    start = time.perf_counter()
                    await archive.append_turn(self.session, draft)
                    self.times.append((time.perf_counter() - start) * 1000)
                    start = time.perf_counter()
                    floor.execute("INSERT INTO t (body) VALUES (?)", [text])
                    self.floor.append((time.perf_counter() - start) * 1000)
                self.said = (archive.filesystem.fs_type, str(archive.journal_mode))
        finally:
            floor.close()

    def _floor(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.folder / f"floor-{self.journal}.sqlite", isolation_level=None)
        db.execute(f"PRAGMA journal_mode = {self.journal}")
        db.execute(f"PRAGMA synchronous = {'NORMAL' if self.journal == 'wal' else 'FULL'}")
        db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT)")
        return db

    def row(self) -> JournalRow:
        fs_type, journal = self.said
        where = f"local disk ({fs_type})" if self.label == "local" else f"{fs_type} ({self.label})"
        above = [t - f for t, f in zip(self.times, self.floor, strict=True)]
        return JournalRow(
            where, journal, statistics.median(self.times), _pct(self.times, 95),
            statistics.median(self.floor), statistics.median(above),
        )  # fmt: skip


async def _pages_per_append(folder: Path, texts: list[str]) -> float:
    """Pages of the file that differ after each append (rollback journal, local disk)."""
    path = folder / "pages.sqlite"
    changed = 0
    async with Archive.open(path, journal_mode="delete") as archive:
        sid = await archive.create_session(notebook_path=NOTEBOOK, model="m")
        size = int.from_bytes(path.read_bytes()[16:18], "big")
        for i, text in enumerate(texts):
            before = path.read_bytes()
            await archive.append_turn(sid, TurnDraft(role=_ROLES[i % 4], content=text))
            after = path.read_bytes()
            changed += sum(
                before[at : at + size] != after[at : at + size] for at in range(0, len(after), size)
            )
    return changed / len(texts)


async def bench_journals(folder: Path, texts: list[str]) -> JournalTable:
    """``append_turn`` p50/p95 per journal mode, on the local disk and on FUSE mounts."""
    size = statistics.mean(len(t.encode()) for t in texts)
    local = folder / "local"
    local.mkdir()
    setups = [_Setup(local, "local", mode) for mode in ("wal", "delete")]
    pages = await _pages_per_append(folder, texts[:60])
    why = missing_fuse()
    if why is not None:
        await _rounds(setups, texts)
        return JournalTable([s.row() for s in setups], len(texts), size, pages, f"FUSE: {why}")
    with BindMounts(folder / "fuse") as mounts:
        for name, label, options, modes in _FUSE:
            mount = mounts.mount(name, *options)
            setups += [_Setup(mount, label, mode) for mode in modes]
        await _rounds(setups, texts)
    return JournalTable([s.row() for s in setups], len(texts), size, pages)


async def _rounds(setups: list[_Setup], texts: list[str]) -> None:
    chunk = -(-len(texts) // ROUNDS)
    for first in range(0, len(texts), chunk):
        for setup in setups:
            await setup.append(texts[first : first + chunk], first)
