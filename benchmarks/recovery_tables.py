"""Recovery per table (issue 39): rows of every declared table before and after each damage.

An archive with rows in every table (``tests/every_table.py``: four sessions of 240 turns,
model calls, 24 delegations with 48 subtasks and their sub-agents, 600 cell changes, 390
executions, 600 outside agents' marks; 64 turns a session with ``--quick``) is damaged in
each way of ``every_table.DAMAGES``, with several seeds, and recovered. Printed per table
and damage: the rows saved of the rows before (the worst seed), and how many the damaged
file's intact pages still held (what a recovery must at least save), then the time.

    python benchmarks/recovery_tables.py [--quick] [--seeds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from every_table import (  # noqa: E402
    DAMAGES,
    build_every_table,
    counts,
    damage,
    held,
    verbatim_tables,
)

from loom_jupyter.archive.salvage import recover_archive  # noqa: E402

LABELS = {
    "zero header": "header zeroed",
    "page 1 destroyed": "page 1 lost",
    "zero 4 pages": "4 pages zeroed",
    "zero 12 pages": "12 zeroed",
    "copy 6 pages": "6 pages copied",
    "cut 5 %": "end 5 % cut",
    "a leaf of each table": "a leaf each",
    "every session row": "sessions lost",
}


@dataclass(frozen=True)
class Trial:
    """One damaged copy recovered: per table the rows saved, and those its pages held."""

    damage: str
    seed: int
    saved: dict[str, int]
    held: dict[str, int]
    seconds: float


async def trial(pristine: Path, folder: Path, kind: str, seed: int) -> Trial:
    path = folder / f"{kind.replace(' ', '-').replace('%', 'pct')}-{seed}" / ".loom" / "a.sqlite"
    path.parent.mkdir(parents=True)
    shutil.copyfile(pristine, path)
    damage(path, kind, seed)
    whole = held(pristine, path)
    start = time.perf_counter()
    report = await recover_archive(path)
    seconds = time.perf_counter() - start
    saved = {table: report.tally(table).saved for table in verbatim_tables()}
    return Trial(kind, seed, saved, whole, seconds)


def print_table(before: dict[str, int], trials: list[Trial]) -> None:
    """Per table and damage: ``saved/before`` of the worst seed, ``held`` beneath."""
    width = 15
    head = f"{'table':<20}{'before':>8}" + "".join(f"{LABELS[k]:>{width}}" for k in DAMAGES)
    print(head)
    print("-" * len(head))
    for table in verbatim_tables():
        cells, floors = [], []
        for kind in DAMAGES:
            mine = [t for t in trials if t.damage == kind]
            worst = min(mine, key=lambda t: t.saved[table])
            share = 100 * worst.saved[table] / before[table]
            cells.append(f"{worst.saved[table]} {share:5.1f}%")
            floors.append(f"held {worst.held[table]}")
        print(f"{table:<20}{before[table]:>8}" + "".join(f"{c:>{width}}" for c in cells))
        print(f"{'':<28}" + "".join(f"{f:>{width}}" for f in floors))
    times = [
        f"{1000 * statistics.median(t.seconds for t in trials if t.damage == k):.0f} ms"
        for k in DAMAGES
    ]
    print(f"{'recover (median)':<28}" + "".join(f"{t:>{width}}" for t in times))
    below = [(t.damage, t.seed, n) for t in trials for n in t.saved if t.saved[n] < t.held[n]]
    print(f"tables that kept fewer rows than their intact pages held: {below or 'none'}")


async def main(quick: bool, seeds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="loom-recovery-") as tmp:
        folder = Path(tmp)
        pristine = folder / "pristine.sqlite"
        await build_every_table(pristine, "/work/analysis.ipynb", turns=64 if quick else 240)
        before = {t: n for t, n in counts(pristine).items() if t in verbatim_tables()}
        with sqlite3.connect(pristine) as db:
            pages = db.execute("PRAGMA page_count").fetchone()[0]
        trials = [
            await trial(pristine, folder, kind, seed) for kind in DAMAGES for seed in range(seeds)
        ]
    print(
        f"Recovery per table (SQLite {sqlite3.sqlite_version}; {os.cpu_count()} CPUs, "
        f"{seeds} seed(s) per damage, an archive of {pages} pages): rows saved of the rows "
        "before, the worst seed; beneath, the rows the damaged file's intact pages held"
    )
    print_table(before, trials)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller archive, one seed")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per damage (default 3)")
    args = parser.parse_args()
    asyncio.run(main(args.quick, args.seeds or (1 if args.quick else 3)))
