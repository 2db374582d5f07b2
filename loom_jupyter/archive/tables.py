"""Every table of the archive, declared once: what the migrations, fork, recovery, export
and ``docs/architecture.md`` read about it.

A :class:`ArchiveTable` names the migrations that make it, the rows of one session it holds
(``session_rows``), what a fork does with them (:data:`ForkRule`), how a recovery makes
it again (:data:`Remake`) and what it does with a row whose parent row was lost
(:class:`Ref`). :data:`TABLES` is in the order rows go into a new archive (parents
first). :data:`MIGRATIONS` is derived from the declarations; :func:`undeclared` names
any table of a file that has no declaration, so a new table cannot be left behind by
recovery, fork or export.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from loom_jupyter.archive.schema import (
    Migration,
    add_delegation_details,
    create_cell_changes,
    create_executions,
    create_model_calls,
    create_outside_calls,
    create_sessions_and_turns,
    create_tasks,
    create_turns_fts,
    lighten_appends,
    mark_late_executions,
    one_index_per_append,
    track_turns_by_trigger,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "MIGRATIONS",
    "TABLES",
    "ArchiveTable",
    "Copied",
    "Derived",
    "Follows",
    "ForkRule",
    "Left",
    "OwnRow",
    "ParentLost",
    "Ref",
    "Remake",
    "Verbatim",
    "copied_tables",
    "ordered_migrations",
    "table",
    "undeclared",
]

ParentLost = Literal["home", "alone"]
"""A row whose parent row a recovery lost is kept: ``home``: its parent is recreated (a
session "(recovered) …", a task "(recovered task)": ``salvage_homes.py``); ``alone``: with
the reference cleared (it stands on its own)."""


@dataclass(frozen=True)
class Ref:
    """A column that names a row of another table (or of its own)."""

    column: str
    parent: str
    lost: ParentLost
    key: str = "id"


@dataclass(frozen=True)
class OwnRow:
    """A fork makes its own row of this table (the session itself)."""


@dataclass(frozen=True)
class Copied:
    """A fork copies the rows of turns up to the fork's, under the fork's session id."""

    session: str = "session_id"
    turn: str = "turn_number"


@dataclass(frozen=True)
class Left:
    """A fork leaves the rows with the session they were made in."""

    why: str


@dataclass(frozen=True)
class Follows:
    """Kept in step with another table (by triggers, or indexed behind its appends): a fork
    does nothing itself."""

    table: str


ForkRule = OwnRow | Copied | Left | Follows


@dataclass(frozen=True)
class Verbatim:
    """A recovery copies every readable row, verbatim (rowids included)."""


@dataclass(frozen=True)
class Derived:
    """A recovery makes the table again from others (``rebuild``), then checks it (``check``)."""

    rebuild: str
    check: str


Remake = Verbatim | Derived


@dataclass(frozen=True)
class ArchiveTable:
    """One table's declaration."""

    name: str
    doc: str  # what it holds: the line docs/architecture.md shows
    label: str  # its rows, as a recovery report names them
    migrations: tuple[Migration, ...]
    session_rows: str | None  # the condition (one ``?``: a session id) picking one session's rows
    fork: ForkRule
    remake: Remake = Verbatim()
    refs: tuple[Ref, ...] = ()


_SESSION = Ref("session_id", "cowork_sessions", "home")
TABLES: tuple[ArchiveTable, ...] = (
    ArchiveTable(
        "cowork_sessions",
        "one conversation: notebook, title, model, status, the session it was forked or "
        "delegated from, turn count, tokens and cost, saved state, the writer's lease",
        "sessions",
        (create_sessions_and_turns, track_turns_by_trigger, lighten_appends),
        "id = ?",
        OwnRow(),
        refs=(Ref("parent_session_id", "cowork_sessions", "home"),),
    ),
    ArchiveTable(
        "conversation_turns",
        "every turn verbatim: role, text, the API's content blocks, tool name, call id and "
        "input, tokens, kernel, status (complete, partial or interrupted)",
        "turns",
        (create_sessions_and_turns, track_turns_by_trigger, lighten_appends, one_index_per_append),
        "session_id = ?",
        Copied(),
        refs=(_SESSION,),
    ),
    ArchiveTable(
        "turns_fts",
        "FTS5 over the turns' text and tool names (external content, `porter unicode61`, "
        "ranked with bm25; indexed behind the appends, when idle and before a search)",
        "full-text index",
        (create_turns_fts, lighten_appends),
        None,
        Follows("conversation_turns"),
        Derived(
            "INSERT INTO turns_fts (turns_fts) VALUES ('rebuild')",
            "INSERT INTO turns_fts (turns_fts) VALUES ('integrity-check')",
        ),
    ),
    ArchiveTable(
        "model_calls",
        "one row per API request: model, tokens, cost, stop reason, latency, error (the cost "
        "ledger)",
        "model calls (cost ledger)",
        (create_model_calls,),
        "session_id = ?",
        Left("the cost was paid once, by the session that made the call"),
        refs=(_SESSION,),
    ),
    ArchiveTable(
        "tasks",
        "a delegation (`%delegate`): goal, plan, options, status, result, usage and cost",
        "delegated tasks",
        (create_tasks, add_delegation_details),
        "session_id = ?",
        Left("a delegation ran once, in the session that asked for it"),
        refs=(_SESSION,),
    ),
    ArchiveTable(
        "subtasks",
        "a delegation's steps: check, status, attempts, verdicts, result, effects, the "
        "sub-agent's session",
        "subtasks",
        (create_tasks, add_delegation_details),
        "task_id IN (SELECT id FROM tasks WHERE session_id = ?)",
        Left("they belong to their task"),
        refs=(
            Ref("task_id", "tasks", "home"),
            Ref("child_session_id", "cowork_sessions", "home"),
        ),
    ),
    ArchiveTable(
        "cell_changes",
        "each notebook change the agent made (cell, action, before and after): what "
        "reverting its turn undoes",
        "cell changes (revert)",
        (create_cell_changes,),
        "session_id = ?",
        Copied(),
        refs=(_SESSION,),
    ),
    ArchiveTable(
        "executions",
        "every execution, the person's cells and the agent's code: code, names read, set "
        "and changed, effects, fingerprints, duration (provenance and rebuilds)",
        "executions (provenance, rebuild)",
        (create_executions, mark_late_executions),
        "session_id = ?",
        Left("the kernel's history, which provenance and rebuilds read whole"),
        refs=(Ref("session_id", "cowork_sessions", "alone"),),
    ),
    ArchiveTable(
        "outside_calls",
        "which `tool` turns an outside agent made (`loom-jupyter mcp`), and which client",
        "outside-agent marks",
        (create_outside_calls,),
        "session_id = ?",
        Copied(),
        refs=(_SESSION,),
    ),
)
"""Every table, parents before the rows that name them (the order rows go into a new archive)."""


def ordered_migrations(tables: tuple[ArchiveTable, ...]) -> tuple[Migration, ...]:
    """The migrations ``tables`` name, each once, by version; raises when a version is
    missing or taken twice (a file's ``user_version`` counts them)."""
    steps = sorted({m for t in tables for m in t.migrations}, key=lambda m: m.version)
    versions = [m.version for m in steps]
    if versions != list(range(1, len(steps) + 1)):
        raise ValueError(f"migration versions must run 1..n, each once: {versions}")
    return tuple(steps)


MIGRATIONS: tuple[Migration, ...] = ordered_migrations(TABLES)
"""Every schema step, oldest first; a file's ``user_version`` counts those applied."""


def table(name: str) -> ArchiveTable:
    """The declaration of ``name``; raises ``KeyError`` for a table without one."""
    for declared in TABLES:
        if declared.name == name:
            return declared
    raise KeyError(name)


def copied_tables() -> tuple[ArchiveTable, ...]:
    """The tables a recovery copies row by row, in insert order."""
    return tuple(t for t in TABLES if isinstance(t.remake, Verbatim))


def undeclared(db: sqlite3.Connection) -> tuple[str, ...]:
    """Tables of ``db`` without a declaration (SQLite's own and a virtual table's shadow
    tables aside)."""
    rows = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [str(name) for name, sql in rows if str(sql).upper().startswith("CREATE VIRTUAL")]
    declared = {t.name for t in TABLES}
    return tuple(
        str(name)
        for name, _ in rows
        if not str(name).startswith("sqlite_")
        and name not in declared
        and not any(str(name).startswith(f"{v}_") for v in virtual)
    )
