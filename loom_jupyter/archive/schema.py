"""The archive schema, built by named migrations run in order.

``PRAGMA user_version`` holds how many migrations a file has had. Each
migration is a small function, declared with :func:`migration` and the version
it brings a file to, run in its own transaction together with the version
bump, so a file is always at exactly one version. The tables that name them
(:mod:`.tables`) make the ordered list, ``tables.MIGRATIONS``. To change the
schema, add a function with the next version and name it in its table's
declaration; never edit a released one.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["Migration", "migrate", "migration", "schema_version"]


@dataclass(frozen=True)
class Migration:
    """One schema step; ``apply`` runs inside a transaction."""

    name: str
    apply: Callable[[sqlite3.Connection], None]
    version: int = 0  # the ``user_version`` a file has once this step ran


def migration(version: int) -> Callable[[Callable[[sqlite3.Connection], None]], Migration]:
    """Declare a schema step: its name is the function's; ``version`` is the one it brings
    a file to."""

    def declare(apply: Callable[[sqlite3.Connection], None]) -> Migration:
        return Migration(apply.__name__, apply, version)

    return declare


def _run(db: sqlite3.Connection, script: str) -> None:
    # executescript() would COMMIT first; run statement by statement instead.
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            db.execute(pending)
            pending = ""
    if pending.strip():
        db.execute(pending)


@migration(1)
def create_sessions_and_turns(db: sqlite3.Connection) -> None:
    """Version 1: sessions and their verbatim turns."""
    _run(
        db,
        """
        CREATE TABLE cowork_sessions (
            id TEXT PRIMARY KEY,
            notebook_path TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'closed', 'archived')),
            parent_session_id TEXT REFERENCES cowork_sessions(id) ON DELETE SET NULL,
            forked_at_turn INTEGER,
            created_at TEXT NOT NULL,
            last_active_at TEXT NOT NULL,
            turn_count INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            session_state TEXT,
            lease_owner TEXT,
            lease_heartbeat TEXT
        );
        CREATE INDEX idx_sessions_notebook
            ON cowork_sessions (notebook_path, last_active_at);
        CREATE INDEX idx_sessions_active ON cowork_sessions (last_active_at);
        CREATE TABLE conversation_turns (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES cowork_sessions(id) ON DELETE CASCADE,
            turn_number INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
            content TEXT NOT NULL DEFAULT '',
            blocks TEXT,
            tool_name TEXT,
            tool_call_id TEXT,
            tool_input TEXT,
            is_error INTEGER NOT NULL DEFAULT 0,
            token_count INTEGER NOT NULL DEFAULT 0,
            kernel_session TEXT,
            execution_count INTEGER,
            status TEXT NOT NULL DEFAULT 'complete'
                CHECK (status IN ('complete', 'partial', 'interrupted')),
            created_at TEXT NOT NULL,
            UNIQUE (session_id, turn_number)
        );
        CREATE INDEX idx_turns_window
            ON conversation_turns (session_id, turn_number, token_count);
        CREATE INDEX idx_turns_tools
            ON conversation_turns (session_id, tool_name, turn_number)
            WHERE role = 'tool';
        """,
    )


@migration(2)
def create_turns_fts(db: sqlite3.Connection) -> None:
    """Version 2: full-text index over turn text, kept in sync by triggers."""
    _run(
        db,
        """
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            content, tool_name,
            content='conversation_turns', content_rowid='id',
            tokenize='porter unicode61'
        );
        CREATE TRIGGER turns_fts_insert AFTER INSERT ON conversation_turns BEGIN
            INSERT INTO turns_fts (rowid, content, tool_name)
            VALUES (new.id, new.content, new.tool_name);
        END;
        CREATE TRIGGER turns_fts_delete AFTER DELETE ON conversation_turns BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, content, tool_name)
            VALUES ('delete', old.id, old.content, old.tool_name);
        END;
        CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, tool_name
            ON conversation_turns BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, content, tool_name)
            VALUES ('delete', old.id, old.content, old.tool_name);
            INSERT INTO turns_fts (rowid, content, tool_name)
            VALUES (new.id, new.content, new.tool_name);
        END;
        INSERT INTO turns_fts (turns_fts) VALUES ('rebuild');
        """,
    )


@migration(3)
def create_model_calls(db: sqlite3.Connection) -> None:
    """Version 3: the usage ledger, one row per API request."""
    _run(
        db,
        """
        CREATE TABLE model_calls (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES cowork_sessions(id) ON DELETE CASCADE,
            turn_number INTEGER,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            stop_reason TEXT,
            latency_ms REAL NOT NULL DEFAULT 0,
            error TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_model_calls_session ON model_calls (session_id, id);
        """,
    )


@migration(4)
def create_tasks(db: sqlite3.Connection) -> None:
    """Version 4: delegated tasks and their subtasks."""
    _run(
        db,
        """
        CREATE TABLE tasks (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES cowork_sessions(id) ON DELETE CASCADE,
            goal TEXT NOT NULL,
            plan_json TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'pending',
            result_json TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX idx_tasks_session ON tasks (session_id, created_at);
        CREATE TABLE subtasks (
            id TEXT PRIMARY KEY,
            task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
            subtask_key TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            depends_on TEXT NOT NULL DEFAULT '[]',
            acceptance TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            verdict TEXT,
            result TEXT,
            child_session_id TEXT REFERENCES cowork_sessions(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (task_id, subtask_key)
        );
        CREATE INDEX idx_subtasks_child ON subtasks (child_session_id);
        """,
    )


@migration(5)
def track_turns_by_trigger(db: sqlite3.Connection) -> None:
    """Version 5: a session's turn count, activity time and title follow its turns.

    With this trigger an append is a single INSERT statement (atomic on its
    own), and no code path can add a turn without updating its session.
    """
    _run(
        db,
        """
        CREATE TRIGGER turns_track_session AFTER INSERT ON conversation_turns BEGIN
            UPDATE cowork_sessions SET
                turn_count = max(turn_count, new.turn_number),
                last_active_at = max(last_active_at, new.created_at),
                title = CASE WHEN title = '' AND new.role = 'user' THEN substr(trim(
                    replace(replace(replace(new.content, char(13), ' '), char(10), ' '),
                            char(9), ' ')), 1, 100) ELSE title END
            WHERE id = new.session_id;
        END;
        """,
    )


@migration(6)
def add_delegation_details(db: sqlite3.Connection) -> None:
    """Version 6: what delegation needs to report and resume.

    Options, usage, cost and end times on tasks; the check, the reason for a
    status, every verdict, usage, effects, the child session of each attempt
    and timestamps on subtasks.
    """
    columns = {
        "tasks": (
            "options_json TEXT NOT NULL DEFAULT '{}'",
            "message TEXT NOT NULL DEFAULT ''",
            "input_tokens INTEGER NOT NULL DEFAULT 0",
            "output_tokens INTEGER NOT NULL DEFAULT 0",
            "cost_usd REAL NOT NULL DEFAULT 0",
            "finished_at TEXT",
        ),
        "subtasks": (
            "check_expr TEXT",
            "reason TEXT NOT NULL DEFAULT ''",
            "verdicts_json TEXT NOT NULL DEFAULT '[]'",
            "effects_json TEXT NOT NULL DEFAULT '[]'",
            "sessions_json TEXT NOT NULL DEFAULT '[]'",
            "input_tokens INTEGER NOT NULL DEFAULT 0",
            "output_tokens INTEGER NOT NULL DEFAULT 0",
            "cost_usd REAL NOT NULL DEFAULT 0",
            "started_at TEXT",
            "finished_at TEXT",
        ),
    }
    for table, added in columns.items():
        for column in added:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
    db.execute("CREATE INDEX idx_tasks_status ON tasks (status)")


@migration(7)
def create_cell_changes(db: sqlite3.Connection) -> None:
    """``cell_changes``: each notebook change the agent made, enough to revert its turn."""
    db.execute(
        """
        CREATE TABLE cell_changes (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES cowork_sessions(id) ON DELETE CASCADE,
            turn_number INTEGER NOT NULL,
            tool_call TEXT NOT NULL,
            cell_id TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('inserted', 'edited', 'deleted', 'moved')),
            before TEXT,
            after TEXT,
            cell_type TEXT NOT NULL DEFAULT 'code',
            cell_index INTEGER,
            after_cell_id TEXT,
            reverted_at TEXT,
            created_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX idx_cell_changes_turn ON cell_changes (session_id, turn_number)")


@migration(8)
def create_executions(db: sqlite3.Connection) -> None:
    """``executions``: every execution's code, names read and set, duration (issue 21)."""
    db.execute(
        """
        CREATE TABLE executions (
            id INTEGER PRIMARY KEY,
            kernel_run TEXT NOT NULL DEFAULT '',
            session_id TEXT REFERENCES cowork_sessions(id) ON DELETE SET NULL,
            source TEXT NOT NULL CHECK (source IN ('cell', 'run_python', 'run_cell', 'rebuild')),
            code TEXT NOT NULL,
            reads TEXT NOT NULL DEFAULT '[]',
            sets TEXT NOT NULL DEFAULT '[]',
            mutates TEXT NOT NULL DEFAULT '[]',
            effects TEXT NOT NULL DEFAULT '[]',
            fingerprints TEXT NOT NULL DEFAULT '{}',
            parsed INTEGER NOT NULL DEFAULT 1,
            duration_s REAL NOT NULL DEFAULT 0,
            error TEXT,
            turn_number INTEGER,
            execution_count INTEGER,
            cell_id TEXT,
            created_at TEXT NOT NULL
        )
        """
    )


@migration(9)
def mark_late_executions(db: sqlite3.Connection) -> None:
    """``executions.late``: a cell run before Loom loaded, recorded at load (issue 30)."""
    db.execute("ALTER TABLE executions ADD COLUMN late INTEGER NOT NULL DEFAULT 0")


@migration(10)
def create_outside_calls(db: sqlite3.Connection) -> None:
    """``outside_calls``: which ``tool`` turns an outside agent made, and which client
    (DESIGN §14, ``loom-jupyter mcp``; the name from MCP's ``clientInfo``)."""
    db.execute(
        """
        CREATE TABLE outside_calls (
            session_id TEXT NOT NULL REFERENCES cowork_sessions(id) ON DELETE CASCADE,
            turn_number INTEGER NOT NULL,
            client TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, turn_number)
        )
        """
    )


@migration(11)
def lighten_appends(db: sqlite3.Connection) -> None:
    """Version 11: an append writes its turn and little else (issue 39.4).

    The session's turn count and activity time are read from its newest turn
    (``session_live.py``) instead of being counted by a trigger; the full-text index
    follows the appends in batches (``turn_index.py``): a turn is indexed when its id is
    at most the largest id in ``turns_fts_docsize``, so the delete and update triggers
    touch only indexed turns. The title trigger writes only while the title is empty;
    ``idx_turns_window`` also holds ``created_at`` (the newest turn's time, from the index).
    """
    title = (
        "substr(trim(replace(replace(replace(new.content, char(13), ' '), char(10), ' '),"
        " char(9), ' ')), 1, 100)"
    )
    indexed = "(SELECT coalesce(max(id), 0) FROM turns_fts_docsize)"
    _run(
        db,
        f"""
        DROP TRIGGER turns_track_session;
        DROP TRIGGER turns_fts_insert;
        DROP TRIGGER turns_fts_delete;
        DROP TRIGGER turns_fts_update;
        CREATE TRIGGER turns_title AFTER INSERT ON conversation_turns
            WHEN new.role = 'user' BEGIN
            UPDATE cowork_sessions SET title = {title}
            WHERE id = new.session_id AND title = '' AND {title} <> '';
        END;
        CREATE TRIGGER turns_fts_delete AFTER DELETE ON conversation_turns
            WHEN old.id <= {indexed} BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, content, tool_name)
            VALUES ('delete', old.id, old.content, old.tool_name);
        END;
        CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, tool_name
            ON conversation_turns WHEN old.id <= {indexed} BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, content, tool_name)
            VALUES ('delete', old.id, old.content, old.tool_name);
            INSERT INTO turns_fts (rowid, content, tool_name)
            VALUES (new.id, new.content, new.tool_name);
        END;
        DROP INDEX idx_turns_window;
        CREATE INDEX idx_turns_window
            ON conversation_turns (session_id, turn_number, token_count, created_at);
        """,
    )


@migration(12)
def one_index_per_append(db: sqlite3.Connection) -> None:
    """Version 12: an append writes the turn's row and one index, its (session, turn
    number) key (issue 39.4). The window and the newest turn's time are read through
    that key and the turns' rows (a lookup each, still bounded by the window, never the
    session), so ``idx_turns_window`` is no longer kept: one page less per append."""
    _run(db, "DROP INDEX idx_turns_window;")


def schema_version(db: sqlite3.Connection) -> int:
    """The number of migrations ``db`` has had."""
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def migrate(db: sqlite3.Connection, migrations: Sequence[Migration]) -> list[str]:
    """Apply the migrations ``db`` lacks, each in a transaction; returns their names.

    ``db`` must be in autocommit mode (``isolation_level=None``); ``migrations``
    are every step, oldest first (``tables.MIGRATIONS``). A file newer than this
    code is left alone.
    """
    applied: list[str] = []
    while (version := schema_version(db)) < len(migrations):
        step = migrations[version]
        db.execute("BEGIN IMMEDIATE")
        try:
            if schema_version(db) != version:  # another process migrated meanwhile
                db.execute("ROLLBACK")
                continue
            step.apply(db)
            db.execute(f"PRAGMA user_version = {version + 1}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        applied.append(step.name)
    return applied
