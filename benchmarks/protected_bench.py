"""Rails checked after the fact (issue 38): the cost of watching the protected places.

    python benchmarks/protected_bench.py            # 200 calls per row
    python benchmarks/protected_bench.py --calls 50

A temporary git repository (``git init``: its sample hooks, then 2,000 files committed)
with a ``loom.yaml`` and ``CLAUDE.md`` at the root, the notebook one folder down beside a
``.loom/`` holding a real SQLite archive and ``instructions.md``, a skill folder, and a
person's home (``HOME``, ``XDG_CONFIG_HOME``) with their ``loom.yaml``, ``trust.json``
and a skill. Each row times ``before()`` + ``after()`` of one :class:`ProtectedWatch`
around a call, the call itself left out:

- **first snapshot**: a new watch's first ``before()``, reading every protected file;
- **no change**: the steady state, files older than the racy window (2 s), so each
  snapshot is ``lstat``s and folder listings with no file read;
- **one file changed**: ``CLAUDE.md`` rewritten during each call (read again after it,
  and before the next call too, being that recent), plus the ``undo`` of that change.

Goal: no change <= 2 ms per call at p50 (issue 38). The benchmark prints; it never asserts.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loom_jupyter.tools.protected import ProtectedWatch, undo

REPO_FILES = 2_000
RACY_WAIT = 2.2  # seconds: past the racy window, so unchanged files are trusted by stat


def build(base: Path) -> Path:
    """The repository and the person's home under ``base``; returns the notebook's path."""
    home = base / "home"
    os.environ["HOME"] = str(home)
    os.environ["XDG_CONFIG_HOME"] = str(home / ".config")
    repo = base / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for index in range(REPO_FILES):
        write(repo / f"src/pkg{index // 100}/mod{index % 100}.py", f"VALUE = {index}\n" * 20)
    write(repo / "loom.yaml", "thinking: adaptive\neffort: high\n")
    write(repo / "CLAUDE.md", "# Project\n\nUse pandas; plots in matplotlib.\n" * 10)
    write(repo / ".claude/skills/plot/SKILL.md", "---\nname: plot\n---\nMake plots.\n")
    write(repo / ".claude/skills/plot/scripts/style.py", "STYLE = 'ggplot'\n")
    notebook = repo / "analysis" / "report.ipynb"
    write(notebook, '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
    write(notebook.parent / ".loom/.gitignore", "*\n")
    write(notebook.parent / ".loom/instructions.md", "Answer briefly.\n")
    with sqlite3.connect(notebook.parent / ".loom/report.ipynb.sqlite") as db:
        db.execute("CREATE TABLE turns (id INTEGER PRIMARY KEY, body TEXT)")
        db.executemany("INSERT INTO turns (body) VALUES (?)", [("x" * 200,)] * 500)
    write(home / ".config/loom/loom.yaml", "approval: ask\n")
    write(home / ".config/loom/trust.json", "{}\n")
    write(home / ".config/loom/skills/mine/SKILL.md", "---\nname: mine\n---\n")
    git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "files"], check=True)
    return notebook


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def ms(seconds: list[float]) -> tuple[str, str]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered) * 1e3:.3f}", f"{p95 * 1e3:.3f}"


def steady(watch: ProtectedWatch, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        watch.before()
        changes = watch.after()
        times.append(time.perf_counter() - start)
        assert changes == (), changes
    return times


def one_change(watch: ProtectedWatch, target: Path, calls: int) -> tuple[list[float], list[float]]:
    watched, undone = [], []
    for index in range(calls):
        start = time.perf_counter()
        watch.before()
        middle = time.perf_counter()
        target.write_text(f"# Project\n\nplanted {index}\n")
        resumed = time.perf_counter()
        changes = watch.after()
        end = time.perf_counter()
        assert [change.path for change in changes] == [target], changes
        assert undo(changes) == ()
        undone.append(time.perf_counter() - end)
        watched.append(middle - start + end - resumed)
    return watched, undone


def through_gate(watch: ProtectedWatch, calls: int) -> list[float]:
    """What the gate adds to a call, no change: its shared watch's begin and end on the
    event loop (each a hop to a worker thread and back)."""
    import asyncio

    from loom_jupyter.engine.gate import FolderWatch

    async def timed() -> list[float]:
        shared, times = FolderWatch(watch), []
        for _ in range(calls):
            start = time.perf_counter()
            await shared.begin()
            changes = await shared.end()
            times.append(time.perf_counter() - start)
            assert changes == (), changes
        return times

    return asyncio.run(timed())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory(prefix="loom-protected-") as folder:
        notebook = build(Path(folder))
        time.sleep(RACY_WAIT)
        start = time.perf_counter()
        watch = ProtectedWatch.for_notebook(notebook)
        first = watch.before()
        cold = time.perf_counter() - start
        watch.after()
        files = sum(state.kind == "file" for state in first.states.values())
        hooks = len(list((notebook.parent.parent / ".git/hooks").iterdir()))
        print(
            f"{REPO_FILES:,} repository files; {len(first.states)} protected entries watched "
            f"({files} files, {hooks} in .git/hooks, {len(watch.places.files)} file places, "
            f"{len(watch.places.folders)} folder places); {calls} calls per row.\n"
        )
        quiet = steady(watch, calls)
        gated = through_gate(watch, calls)
        changed, undone = one_change(watch, notebook.parent.parent / "CLAUDE.md", calls)
    print("| per call | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    print(f"| first snapshot (reads every protected file) | {cold * 1e3:.3f} | |")
    print("| before() + after(), no change | {} | {} |".format(*ms(quiet)))
    print("| the gate's check around a call, no change | {} | {} |".format(*ms(gated)))
    print("| before() + after(), CLAUDE.md changed | {} | {} |".format(*ms(changed)))
    print("| undo() of that change | {} | {} |".format(*ms(undone)))


if __name__ == "__main__":
    main()
