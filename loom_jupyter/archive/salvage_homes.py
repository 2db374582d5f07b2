"""Homes for saved rows whose parent row a recovery lost: recreated sessions and tasks.

A row that names a lost session through a ``home`` reference (its turns, model calls,
tasks, cell changes, outside agents' marks; a fork's parent, a sub-agent's session) gets
the session back: "(recovered) " + its first prompt as the title, usage summed from its
ledger rows, created when its first row was and last active when its last turn was,
``closed`` when it was a sub-agent's; so its turns stay listed, searchable and
resumable. A subtask whose task was lost gets a task, "(recovered task)", finished
(``interrupted``: nothing resumes it), in the session its sub-agent was delegated from,
else the latest session saved. Homes go in before the rows that need them (an insert's
triggers update its session).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from loom_jupyter.archive.clock import utc_now
from loom_jupyter.archive.tables import Ref, copied_tables
from loom_jupyter.errors import ArchiveError

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping, Sequence

    from loom_jupyter.archive.salvage_read import TableRead
    from loom_jupyter.archive.tables import ArchiveTable

__all__ = ["HOMED_PARENTS", "Homes", "get", "values"]

Row = tuple[object, ...]

HOMED_PARENTS = ("cowork_sessions", "tasks")
"""The tables a lost parent row can be recreated in."""

_OWNED = tuple(  # tables whose rows a recreated session is made for: their times are its own
    t.name for t in copied_tables() if Ref("session_id", "cowork_sessions", "home") in t.refs
)
_TIMES = " UNION ALL ".join(
    f"SELECT created_at AS at FROM {table} WHERE session_id = cowork_sessions.id"
    for table in _OWNED
)
_USAGE = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "cost_usd")
_FINISH_SESSION = (
    "UPDATE cowork_sessions SET"
    " title = CASE WHEN title = '' THEN '(recovered session)'"
    " ELSE substr('(recovered) ' || title, 1, 100) END,"
    " model = coalesce((SELECT model FROM model_calls WHERE session_id = cowork_sessions.id"
    " ORDER BY id DESC LIMIT 1), model),"
    f" created_at = coalesce((SELECT min(at) FROM ({_TIMES})), ?1),"
    " last_active_at = coalesce((SELECT max(created_at) FROM conversation_turns"
    f" WHERE session_id = cowork_sessions.id), (SELECT max(at) FROM ({_TIMES})), ?1),"
    + ",".join(
        f" {name} = (SELECT coalesce(sum({name}), 0) FROM model_calls"
        " WHERE session_id = cowork_sessions.id)"
        for name in _USAGE
    )
    + " WHERE id = ?2"
)


def get(read: TableRead, row: Row, column: str) -> object:
    """``column`` of a read row (``None`` when the damaged file lacked the column)."""
    return row[read.columns.index(column) + 1] if column in read.columns else None


def values(read: TableRead, column: str, rowids: frozenset[int]) -> set[object]:
    """``column`` of the read rows whose rowid is in ``rowids``."""
    return {get(read, row, column) for row in read.rows if row[0] in rowids}


class Homes:
    """The parent rows recreated while one recovery writes its new archive."""

    def __init__(self, db: sqlite3.Connection, reads: Mapping[str, TableRead], notebook: str):
        self._db, self._reads, self._notebook = db, reads, notebook
        self.made: dict[str, dict[str, None]] = {parent: {} for parent in HOMED_PARENTS}

    def house(
        self, declared: ArchiveTable, rows: Sequence[Row], saved: Mapping[str, frozenset[int]]
    ) -> list[Row]:
        """Recreate the parents ``rows`` name through a ``home`` reference that are neither
        saved nor recreated yet (references to ``declared`` itself once its rows are in);
        the rows that can go in (a subtask whose task cannot be recreated cannot)."""
        read, kept = self._reads[declared.name], list(rows)
        inserted = declared.name in saved  # before its rows went in: other tables' rows
        for ref in declared.refs:
            if ref.lost != "home" or (ref.parent == declared.name) != inserted:
                continue
            present = self._present(ref, saved)
            named = [get(read, row, ref.column) for row in kept]
            wanted = tuple({v: None for v in named if isinstance(v, str) and v not in present})
            there = present | self._make(ref.parent, wanted, saved) | {None}
            kept = [row for row, value in zip(kept, named, strict=True) if value in there]
        return kept

    def homed(self, declared: ArchiveTable, saved: frozenset[int]) -> int:
        """Saved rows of ``declared`` that name a recreated parent (their own was lost)."""
        read = self._reads[declared.name]
        refs = [(ref.column, set(self.made.get(ref.parent, {}))) for ref in declared.refs]
        return sum(
            1
            for row in read.rows
            if row[0] in saved and any(get(read, row, column) in made for column, made in refs)
        )

    def finish(self) -> None:
        """Fill the recreated sessions in from their saved rows."""
        now = utc_now()
        self._db.executemany(
            _FINISH_SESSION, [(now, home) for home in self.made["cowork_sessions"]]
        )

    def _present(self, ref: Ref, saved: Mapping[str, frozenset[int]]) -> set[object]:
        kept = values(self._reads[ref.parent], ref.key, saved.get(ref.parent, frozenset()))
        return kept | set(self.made.get(ref.parent, {}))

    def _make(
        self, parent: str, ids: tuple[str, ...], saved: Mapping[str, frozenset[int]]
    ) -> set[object]:
        """Recreate rows ``ids`` of ``parent``; the ids recreated."""
        if not ids:
            return set()
        if parent == "cowork_sessions":
            self._sessions(ids, saved)
            return set(ids)
        if parent == "tasks":
            return self._tasks(ids, saved)
        raise ArchiveError(f"a recovery cannot recreate a row of {parent}")

    def _sessions(self, ids: tuple[str, ...], saved: Mapping[str, frozenset[int]]) -> None:
        """A placeholder row per lost session; :meth:`finish` fills it in afterwards."""
        sessions, subtasks = self._reads["cowork_sessions"], self._reads["subtasks"]
        kept = saved.get("cowork_sessions", frozenset())
        paths = Counter(values(sessions, "notebook_path", kept) - {None})
        models = Counter(values(sessions, "model", kept) - {None})
        path = str(paths.most_common(1)[0][0]) if paths else self._notebook
        model = str(models.most_common(1)[0][0]) if models else "unknown"
        # Sessions some subtask ran in (read, even when the subtask is not kept) stay closed.
        sub_agents = {get(subtasks, row, "child_session_id") for row in subtasks.rows}
        self._db.executemany(
            "INSERT INTO cowork_sessions (id, notebook_path, title, model, status, created_at,"
            " last_active_at) VALUES (?, ?, '', ?, ?, '', '')",
            [(home, path, model, "closed" if home in sub_agents else "active") for home in ids],
        )
        self.made["cowork_sessions"].update(dict.fromkeys(ids))

    def _tasks(self, ids: tuple[str, ...], saved: Mapping[str, frozenset[int]]) -> set[object]:
        """A finished "(recovered task)" per lost task, in the session its subtasks' sub-agents
        were delegated from, else the latest saved; the ids recreated."""
        made: set[object] = set()
        for task in ids:
            mine = [r for r in self._reads["subtasks"].rows if self._sub(r, "task_id") == task]
            session = self._delegator(mine, saved)
            if session is None:
                continue
            if session not in self._present(Ref("", "cowork_sessions", "home"), saved):
                self._sessions((session,), saved)
            times = [str(self._sub(r, "created_at") or "") for r in mine] or [utc_now()]
            self._db.execute(
                "INSERT INTO tasks (id, session_id, goal, status, message, created_at, updated_at)"
                " VALUES (?, ?, '(recovered task)', 'interrupted', ?, ?, ?)",
                [task, session, "Its own row was lost to damage.", min(times), max(times)],
            )
            self.made["tasks"][task] = None
            made.add(task)
        return made

    def _delegator(self, subtasks: list[Row], saved: Mapping[str, frozenset[int]]) -> str | None:
        """The session the sub-agents of ``subtasks`` were delegated from, else the latest
        session saved or recreated (``None``: there is none)."""
        sessions = self._reads["cowork_sessions"]
        children = {self._sub(row, "child_session_id") for row in subtasks} - {None}
        for row in sessions.rows:
            parent = get(sessions, row, "parent_session_id")
            if get(sessions, row, "id") in children and isinstance(parent, str):
                return parent
        kept = [r for r in sessions.rows if r[0] in saved.get("cowork_sessions", frozenset())]
        kept.sort(key=lambda r: str(get(sessions, r, "last_active_at") or ""))
        latest = get(sessions, kept[-1], "id") if kept else None
        if isinstance(latest, str):
            return latest
        return next(iter(self.made["cowork_sessions"]), None)

    def _sub(self, row: Row, column: str) -> object:
        return get(self._reads["subtasks"], row, column)
