"""A real archive with a long history, and the damage a disk or a sync tool can do to it.

Used by the recovery tests (archive, CLI, IPython) and ``benchmarks/archive_bench.py``.
The archive is built through the Archive API: sessions, turns of every role
(assistant blocks, tool calls with their input), a model call per answer, a
delegated task whose subtask ran in a sub-agent session. Everything is seeded,
so the file's page layout, and so what a given damage hits, is the same on
every run.
"""

from __future__ import annotations

import random
import sqlite3
import uuid
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import patch

from loom_jupyter.archive import Archive
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, TurnDraft, Usage

LEDGER = ("cowork_sessions", "conversation_turns", "tasks", "subtasks", "model_calls")
_WORDS = (
    "revenue",
    "region",
    "churn",
    "merge",
    "outlier",
    "forecast",
    "pivot",
    "median",
    "cohort",
    "quarter",
    "sales",
    "customer",
    "threshold",
    "model",
    "feature",
    "residual",
    "seasonal",
    "baseline",
    "variance",
    "notebook",
    "plot",
)


@dataclass(frozen=True)
class Ledger:
    """What :func:`build_ledger` wrote."""

    sessions: tuple[str, ...]  # oldest first; the last is the latest active one
    child: str  # the sub-agent's session
    turns: int


async def build_ledger(
    path: Path, notebook: str, *, turns: int = 2000, sessions: int = 4
) -> Ledger:
    """Fill a new archive at ``path`` with ``turns`` turns over ``sessions`` sessions.

    Ids are seeded too (the page layout follows them), so a damage seed hits the
    same pages on every run.
    """
    rng = random.Random(17)
    ids_rng = random.Random(29)
    seeded = lambda: uuid.UUID(int=ids_rng.getrandbits(128), version=4)  # noqa: E731
    with patch("uuid.uuid4", seeded):
        return await _fill(path, notebook, turns, sessions, rng)


async def _fill(path: Path, notebook: str, turns: int, sessions: int, rng: random.Random) -> Ledger:
    async with Archive.open(path) as archive:
        ids = []
        for _ in range(sessions):
            sid = await archive.create_session(notebook_path=notebook, model="claude-sonnet")
            ids.append(sid)
            for number in range(turns // sessions):
                await archive.append_turn(sid, _draft(number, rng))
                if number % 4 == 1:
                    await archive.record_model_call(
                        sid,
                        model="claude-sonnet",
                        usage=Usage(1000 + number, 200),
                        stop_reason="tool_use",
                        latency_ms=900.0,
                        cost_usd=0.01,
                        turn_number=number + 1,
                    )
        child = await _delegation(archive, ids[-1], notebook)
    return Ledger(tuple(ids), child, turns)


def _draft(number: int, rng: random.Random) -> TurnDraft:
    text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 400)))
    kind = number % 4
    if kind == 0:
        return TurnDraft(role="user", content=f"question {number}: {text}", token_count=50)
    call = ToolUseBlock(f"tu_{number}", "run_python", {"code": f"df.describe()  # {number}"})
    if kind == 1:
        return TurnDraft(role="assistant", content=text, blocks=(TextBlock(text), call))
    if kind == 2:
        result = ToolResultBlock(call.id, (TextBlock(text),), False)
        return TurnDraft(
            role="tool",
            content=text,
            blocks=(result,),
            tool_name="run_python",
            tool_call_id=call.id,
            tool_input=call.input,
        )
    return TurnDraft(role="assistant", content=text, blocks=(TextBlock(text),))


async def _delegation(archive: Archive, session: str, notebook: str) -> str:
    task = await archive.create_task(session, goal="split the sales work", status="done")
    sub = await archive.create_subtask(task, subtask_key="a", description="clean the data")
    child = await archive.create_session(
        notebook_path=notebook, model="claude-sonnet", parent_session_id=session
    )
    await archive.append_turn(child, TurnDraft(role="user", content="clean the data"))
    await archive.close_session(child)
    await archive.update_subtask(sub, status="done", child_session_id=child, result="clean")
    return child


def page_size(path: Path) -> int:
    """The page size the file's header gives (bytes 16-17; 1 means 65536)."""
    with path.open("rb") as handle:
        head = handle.read(18)
    size = int.from_bytes(head[16:18], "big")
    return 65536 if size == 1 else size


def checkpoint(path: Path) -> None:
    """Fold the WAL into the file, so every page is where the damage will hit it."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def overwrite_pages(path: Path, count: int, *, seed: int = 5, hits: str | None = None) -> list[int]:
    """Fold the WAL in, then :func:`damage_pages`."""
    checkpoint(path)
    return damage_pages(path, count, seed=seed, hits=hits)


def damage_pages(path: Path, count: int, *, seed: int = 5, hits: str | None = None) -> list[int]:
    """Overwrite ``count`` pages from the middle third of the file with random bytes.

    With ``hits``, a page stays overwritten only when reading that table then
    fails (the layout depends on the random session ids; this makes sure the
    damage lands in the table).
    """
    size = page_size(path)
    pages = path.stat().st_size // size
    rng = random.Random(seed)
    candidates = rng.sample(range(pages // 3, 2 * pages // 3), pages // 3)
    hit: list[int] = []
    for page in candidates:
        before = _page(path, page + 1, size)
        overwrite_page(path, page + 1, bytes(rng.randrange(256) for _ in range(size)))
        if hits is None or not _reads(path, hits):
            hit.append(page)
        else:
            overwrite_page(path, page + 1, before)
        if len(hit) == count:
            return sorted(hit)
    raise AssertionError(f"only {len(hit)} pages of {hits} found in the middle of {path}")


def _page(path: Path, number: int, size: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek((number - 1) * size)
        return handle.read(size)


def _reads(path: Path, table: str) -> bool:
    """Whether every row of ``table`` reads (read-only: no -wal/-shm made, a WAL left as is)."""
    mode = "mode=ro" if Path(f"{path}-wal").exists() else "immutable=1"
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?{mode}", uri=True)) as db:
            db.execute(f'SELECT * FROM "{table}"').fetchall()
    except sqlite3.Error:
        return False
    return True


def overwrite_page(path: Path, number: int, data: bytes) -> None:
    """Write ``data`` over page ``number`` (pages count from 1)."""
    size = page_size(path)
    with path.open("r+b") as handle:
        handle.seek((number - 1) * size)
        handle.write(data[:size].ljust(size, b"\0"))


def truncate(path: Path, keep: float) -> None:
    """Cut the file to the first ``keep`` share of its bytes (a copy that stopped early)."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def root_page(path: Path, table: str) -> int:
    """The page holding the root of ``table``'s b-tree."""
    with closing(sqlite3.connect(path)) as db:
        return int(
            db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", [table]).fetchone()[0]
        )


def rows(path: Path, table: str) -> set[tuple[object, ...]]:
    """Every row of ``table``, whole."""
    with closing(sqlite3.connect(path)) as db:
        return set(db.execute(f'SELECT * FROM "{table}"').fetchall())


def count(path: Path, table: str) -> int:
    """The number of rows in ``table``."""
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])


def integrity(path: Path) -> list[tuple[object, ...]]:
    """``PRAGMA integrity_check`` of the file."""
    with closing(sqlite3.connect(path)) as db:
        return db.execute("PRAGMA integrity_check").fetchall()


def zero_pages(path: Path, count: int, *, seed: int) -> list[int]:
    """Fold the WAL in, then zero ``count`` pages spread over the file (never page 1)."""
    checkpoint(path)
    pages = path.stat().st_size // page_size(path)
    hit = sorted(random.Random(seed).sample(range(2, pages + 1), count))
    for number in hit:
        overwrite_page(path, number, b"")
    return hit


def copy_pages(path: Path, count: int, *, seed: int) -> list[int]:
    """Fold the WAL in, then overwrite ``count`` pages with copies of other valid pages.

    A structurally valid page in the wrong place: what a torn copy, a sync tool
    or two hosts writing one WAL leave. Sources are taken before any write.
    """
    checkpoint(path)
    size = page_size(path)
    pages = path.stat().st_size // size
    rng = random.Random(seed)
    picked = rng.sample(range(2, pages + 1), 2 * count)
    targets, sources = picked[:count], picked[count:]
    copies = [_page(path, source, size) for source in sources]
    for target, data in zip(targets, copies, strict=True):
        overwrite_page(path, target, data)
    return sorted(targets)


def zero_header(path: Path) -> None:
    """Fold the WAL in, then zero page 1's 100-byte header (every other byte intact)."""
    checkpoint(path)
    with path.open("r+b") as handle:
        handle.write(bytes(100))


DAMAGES = ("zero 12 pages", "copy 6 pages", "cut 5 %", "zero header")
"""The four damages of issue 29, by name (:func:`damage`)."""


def damage(path: Path, kind: str, seed: int) -> None:
    """Damage ``path`` in one of the :data:`DAMAGES` ways (seeded)."""
    if kind == "zero 12 pages":
        zero_pages(path, 12, seed=seed)
    elif kind == "copy 6 pages":
        copy_pages(path, 6, seed=seed)
    elif kind == "cut 5 %":
        checkpoint(path)
        truncate(path, 0.95)
    elif kind == "zero header":
        zero_header(path)
    else:
        raise ValueError(kind)
