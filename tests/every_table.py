"""An archive with rows in every declared table, and what a damaged copy's pages still hold.

:func:`build_every_table` writes through the Archive API — sessions with turns of every
role, model calls, delegations (tasks, subtasks, sub-agents' sessions), the agent's cell
changes, executions (cells and ``run_python``, some before any session) and outside
agents' calls — then fails when a table of ``archive/tables.py`` is left without a row,
so a table declared later must be given rows here. Everything is seeded: the file's page
layout, and so what a given damage hits, is the same on every run.

:func:`held` counts a table's rows that a damaged copy's pages still hold whole (the
leaf page and every overflow page as they were): what a recovery can at least save.
Used by ``tests/archive/test_every_table.py`` and ``benchmarks/recovery_tables.py``.
"""

from __future__ import annotations

import random
import sqlite3
import uuid
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING
from unittest.mock import patch

from damaged_archive import DAMAGES as ISSUE_29
from damaged_archive import (
    checkpoint,
    overwrite_page,
    page_size,
    root_page,
    zero_header,
    zero_pages,
)
from damaged_archive import damage as issue_29_damage

from loom_jupyter.archive import Archive
from loom_jupyter.archive.salvage_pages import leaf_rows, load_image, tree_pages
from loom_jupyter.archive.tables import TABLES, Verbatim
from loom_jupyter.cells import RevertStep
from loom_jupyter.lineage import ExecutionRecord
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, TurnDraft, Usage

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DAMAGES",
    "Built",
    "build_every_table",
    "counts",
    "damage",
    "held",
    "verbatim_tables",
]

_WORDS = ("revenue", "region", "churn", "forecast", "cohort", "median", "pivot", "plot", "model")
CLIENT = "Claude Code"


@dataclass(frozen=True)
class Built:
    """What :func:`build_every_table` wrote."""

    sessions: tuple[str, ...]  # the person's sessions with turns, oldest first
    quiet: str  # the latest active session: cells ran in it, no message yet
    cell_turn: tuple[str, int]  # a session and a turn of it that changed cells
    outside_turn: tuple[str, int]  # a session and a turn an outside agent made


def verbatim_tables() -> tuple[str, ...]:
    """The tables a recovery copies row by row (every declared one but the derived)."""
    return tuple(t.name for t in TABLES if isinstance(t.remake, Verbatim))


async def build_every_table(path: Path, notebook: str, *, turns: int = 240) -> Built:
    """Fill a new archive at ``path``: four sessions of ``turns`` turns each and rows in
    every declared table; raises ``AssertionError`` when a declared table has none."""
    ids_rng = random.Random(31)
    seeded = lambda: uuid.UUID(int=ids_rng.getrandbits(128), version=4)  # noqa: E731
    with patch("uuid.uuid4", seeded):
        async with Archive.open(path) as archive:
            built = await _fill(archive, notebook, turns, random.Random(23))
    checkpoint(path)
    empty = [table for table, rows in counts(path).items() if rows == 0]
    if empty:
        raise AssertionError(f"declared tables without a row in the fixture: {empty}")
    return built


async def _fill(archive: Archive, notebook: str, turns: int, rng: random.Random) -> Built:
    await _executions(archive, None, 20, rng)  # cells run before the first message
    sessions, cell_turn, outside_turn = [], ("", 0), ("", 0)
    for _ in range(4):
        sid = await archive.create_session(notebook_path=notebook, model="claude-sonnet")
        sessions.append(sid)
        for step in range(turns):
            changed, outside = await _turn(archive, sid, step, rng)
            cell_turn = (sid, changed) if changed else cell_turn
            outside_turn = (sid, outside) if outside else outside_turn
        await _delegations(archive, sid, notebook, 6)
        await _executions(archive, sid, 90, rng)
    quiet = await archive.create_session(notebook_path=notebook, model="claude-sonnet")
    await _executions(archive, quiet, 10, rng)  # cells run in a session before its first message
    return Built(tuple(sessions), quiet, cell_turn, outside_turn)


async def _turn(archive: Archive, sid: str, step: int, rng: random.Random) -> tuple[int, int]:
    """One turn of ``sid``; now and then with a model call, cell changes, outside calls
    after it. The turn that changed cells, the last outside call's (0: none)."""
    text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(10, 160)))
    kind = step % 4
    if kind == 0:
        await _append(archive, sid, TurnDraft(role="user", content=f"ask {step}: {text}"))
    elif kind == 1:
        call = ToolUseBlock(f"tu_{step}", "edit_cell", {"cell_id": f"c{step}"})
        blocks = (TextBlock(text), call)
        number = await _append(
            archive, sid, TurnDraft(role="assistant", content=text, blocks=blocks)
        )
        await archive.record_model_call(
            sid,
            model="claude-sonnet",
            usage=Usage(1000 + step, 200),
            stop_reason="tool_use",
            latency_ms=900.0,
            turn_number=number,
        )
        if step % 8 == 1:
            for n in range(5):
                await archive.record_cell_change(sid, number, call.id, _step(step, n))
            return number, 0
    elif kind == 2:
        result = ToolResultBlock(f"tu_{step - 1}", (TextBlock(text),), False)
        draft = TurnDraft(role="tool", content=text, blocks=(result,), tool_name="edit_cell")
        await _append(archive, sid, draft)
    else:
        await _append(archive, sid, TurnDraft(role="assistant", content=text))
        if step % 8 == 7:
            return 0, await _outside(archive, sid, step, text)
    return 0, 0


async def _append(archive: Archive, sid: str, draft: TurnDraft, client: str = "") -> int:
    """Append a turn (an outside agent's call with ``client``) and index it at once, so the
    file's layout (and what a seeded damage hits) does not depend on when the archive was
    idle enough to index by itself."""
    if client:
        number = await archive.append_outside_call(sid, draft, client)
    else:
        number = await archive.append_turn(sid, draft)
    await archive.index_turns()
    return number


def _step(number: int, step: int) -> RevertStep:
    cell = f"c{number}-{step}"
    if step % 2:
        return RevertStep(cell, "inserted", after=f"x_{number} = {step}", index=step)
    return RevertStep(cell, "edited", before=f"y = {step}", after=f"y = {number}", index=step)


async def _outside(archive: Archive, sid: str, number: int, text: str) -> int:
    """Five outside agents' calls between turns (each a ``tool`` turn, marked); the last's
    turn number."""
    last = 0
    for call in range(5):
        draft = TurnDraft(
            role="tool",
            content=f"outside {number}.{call}: {text[:200]}",
            tool_name="read_notebook",
            tool_call_id=f"out_{number}_{call}",
            tool_input={"history": call},
        )
        last = await _append(archive, sid, draft, CLIENT)
    return last


async def _delegations(archive: Archive, sid: str, notebook: str, count: int) -> None:
    for n in range(count):
        task = await archive.create_task(sid, goal=f"split the work {n}", status="done")
        for key in ("a", "b"):
            sub = await archive.create_subtask(task, subtask_key=key, description=f"step {key}")
            child = await archive.create_session(
                notebook_path=notebook, model="claude-sonnet", parent_session_id=sid
            )
            await _append(archive, child, TurnDraft(role="user", content=f"do step {key}"))
            await archive.close_session(child)
            await archive.update_subtask(sub, status="done", child_session_id=child)


async def _executions(archive: Archive, sid: str | None, count: int, rng: random.Random) -> None:
    for n in range(count):
        name = f"v{rng.randrange(40)}"
        code = f"{name} = {n} + " + " + ".join(f"w{rng.randrange(40)}" for _ in range(3))
        record = ExecutionRecord(
            id=0,
            source="cell" if n % 3 else "run_python",
            code=code,
            sets=(name,),
            reads=("w1",),
            duration_s=0.01,
            session_id=sid,
            execution_count=n + 1,
            kernel_run="k1",
        )
        await archive.record_execution(record)


def counts(path: Path) -> dict[str, int]:
    """Rows per declared table."""
    with closing(sqlite3.connect(path)) as db:
        return {
            t.name: int(db.execute(f'SELECT count(*) FROM "{t.name}"').fetchone()[0])
            for t in TABLES
        }


DAMAGES = (
    "zero header",
    "page 1 destroyed",
    "zero 4 pages",
    "zero 12 pages",
    "copy 6 pages",
    "cut 5 %",
    "a leaf of each table",
    "every session row",
)
"""The damages checked per table: a destroyed header (its 100 bytes, or all of page 1),
a few zeroed pages, those of issue 29 (``damaged_archive.DAMAGES``), a zeroed leaf page
in each table's b-tree, and every leaf page of ``cowork_sessions`` zeroed (every session
row lost: the rows that name them need a home, or stand alone)."""


def damage(path: Path, kind: str, seed: int) -> None:
    """Damage ``path`` in one of the :data:`DAMAGES` ways (seeded)."""
    if kind == "zero header":
        zero_header(path)
    elif kind == "page 1 destroyed":
        checkpoint(path)
        overwrite_page(path, 1, random.Random(seed).randbytes(page_size(path)))
    elif kind == "zero 4 pages":
        zero_pages(path, 4, seed=seed)
    elif kind in ISSUE_29:
        issue_29_damage(path, kind, seed)
    elif kind == "a leaf of each table":
        for page in leaf_of_each_table(path, seed):
            overwrite_page(path, page, b"")
    elif kind == "every session row":
        checkpoint(path)
        image = load_image(path)
        assert image is not None
        for page in tree_pages(image, root_page(path, "cowork_sessions")):
            overwrite_page(path, page, b"")
    else:
        raise ValueError(kind)


def leaf_of_each_table(path: Path, seed: int) -> list[int]:
    """A leaf page of each copied table's b-tree, picked by ``seed`` (the file checkpointed)."""
    checkpoint(path)
    image = load_image(path)
    assert image is not None
    rng = random.Random(seed)
    return [
        rng.choice(sorted(tree_pages(image, root_page(path, table)))) for table in verbatim_tables()
    ]


def held(pristine: Path, damaged: Path) -> dict[str, int]:
    """Rows per copied table that the damaged file's pages still hold as the pristine file
    held them: the same rowid and values read from the same leaf page (its overflow chain
    intact)."""
    before, after = load_image(pristine), load_image(damaged)
    assert before is not None
    assert after is not None
    with closing(sqlite3.connect(pristine)) as db:
        roots = dict(db.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'"))
    found = {}
    for table in verbatim_tables():
        rows = 0
        for page in tree_pages(before, int(roots[table])):
            rows += len(set(leaf_rows(before, page)) & set(leaf_rows(after, page)))
        found[table] = rows
    return found
