"""What a task's run cost and did, read from its archive after the run (not its output).

The archive is the notebook's SQLite file (DESIGN §3): ``model_calls`` is the cost ledger
(tokens, cost, model, the error of a failed request), ``conversation_turns`` holds the
person's turns and every tool call. A delegation's sub-agents write their own sessions in
the same file: their calls and tools count, their prompts are not the person's turns.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Measures", "Tokens", "find_archive", "measure"]

_SUB_AGENTS = "SELECT child_session_id FROM subtasks WHERE child_session_id IS NOT NULL"


@dataclass(frozen=True)
class Tokens:
    """Tokens of every request: input, output, read from and written to the prompt cache."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True)
class Measures:
    """A run's numbers from its archive."""

    turns: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float = 0.0
    model: str = ""
    requests: int = 0
    last_error: str | None = None  # the newest request's error, when it failed


def find_archive(archive_dir: Path, notebook_name: str) -> Path | None:
    """The notebook's archive under the task's ``archive_dir`` (``None`` before any turn)."""
    found = sorted(archive_dir.glob(f"*/{notebook_name}.sqlite"))
    return found[0] if found else None


def measure(archive: Path | None) -> Measures:
    """The numbers of the archive at ``archive`` (all zero when there is none)."""
    if archive is None or not archive.is_file():
        return Measures()
    db = sqlite3.connect(f"file:{archive}?mode=ro", uri=True, timeout=10)
    try:
        return _measure(db)
    finally:
        db.close()


def _measure(db: sqlite3.Connection) -> Measures:
    sums = db.execute(
        "SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),"
        " coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_creation_tokens), 0),"
        " coalesce(sum(cost_usd), 0) FROM model_calls"
    ).fetchone()
    return Measures(
        turns=_turns(db),
        tool_calls=_tools(db),
        tokens=Tokens(int(sums[1]), int(sums[2]), int(sums[3]), int(sums[4])),
        cost_usd=float(sums[5]),
        model=_model(db),
        requests=int(sums[0]),
        last_error=_last_error(db),
    )


def _turns(db: sqlite3.Connection) -> int:
    row = db.execute(
        "SELECT count(*) FROM conversation_turns WHERE role = 'user'"
        f" AND session_id NOT IN ({_SUB_AGENTS})"
    ).fetchone()
    return int(row[0])


def _tools(db: sqlite3.Connection) -> dict[str, int]:
    rows = db.execute(
        "SELECT tool_name, count(*) FROM conversation_turns"
        " WHERE role = 'tool' AND tool_name IS NOT NULL GROUP BY tool_name ORDER BY tool_name"
    ).fetchall()
    return {str(name): int(n) for name, n in rows}


def _model(db: sqlite3.Connection) -> str:
    row = db.execute(
        "SELECT model FROM model_calls GROUP BY model ORDER BY count(*) DESC, model LIMIT 1"
    ).fetchone()
    if row is None:
        row = db.execute("SELECT model FROM cowork_sessions ORDER BY created_at LIMIT 1").fetchone()
    return str(row[0]) if row else ""


def _last_error(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT error FROM model_calls ORDER BY id DESC LIMIT 1").fetchone()
    return str(row[0]) if row and row[0] else None
