"""Turns: write-through append, reads by number and range, the recent window, tool calls."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast, get_args

from loom_jupyter.archive.session_live import turn_count
from loom_jupyter.archive.sessions import SUB_AGENT_SESSIONS, no_such_session, require_session
from loom_jupyter.archive.turn_index import index_tail_now
from loom_jupyter.errors import ArchiveBusyError, ArchiveError, TurnNotFoundError
from loom_jupyter.records import SearchHit, ToolCall

# The messages' types are imported where turns are read or written: opening an archive and
# reading its sessions (``%load_ext``'s banner) needs none of them.
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping

    from loom_jupyter.archive.clock import Clock
    from loom_jupyter.archive.db import Db
    from loom_jupyter.archive.turn_index import TailIndexer
    from loom_jupyter.messages import Turn, TurnDraft, TurnRole, TurnStatus

__all__ = ["TurnsMixin", "append_sql", "turn_from_row"]

_FIRST_PAGE, _MAX_PAGE = 32, 4096
_PAUSES = f"""
    SELECT asked.created_at, answered.created_at
    FROM conversation_turns AS asked
    JOIN conversation_turns AS answered
        ON answered.session_id = asked.session_id
        AND answered.turn_number = asked.turn_number - 1
    JOIN cowork_sessions AS session ON session.id = asked.session_id
    WHERE asked.role = 'user'
        AND asked.turn_number > coalesce(session.forked_at_turn, 0)
        AND asked.session_id NOT IN ({SUB_AGENT_SESSIONS})
    ORDER BY asked.id DESC
    LIMIT ?
"""


def turn_from_row(row: sqlite3.Row) -> Turn:
    """A :class:`~loom_jupyter.messages.Turn` from a ``conversation_turns`` row."""
    from loom_jupyter.messages import Turn, blocks_from_json

    return Turn(
        session_id=row["session_id"],
        turn_number=row["turn_number"],
        role=cast("TurnRole", row["role"]),
        content=row["content"],
        blocks=blocks_from_json(row["blocks"]),
        tool_name=row["tool_name"],
        tool_call_id=row["tool_call_id"],
        tool_input=json.loads(row["tool_input"]) if row["tool_input"] else None,
        is_error=bool(row["is_error"]),
        token_count=row["token_count"],
        status=cast("TurnStatus", row["status"]),
        kernel_session=row["kernel_session"],
        execution_count=row["execution_count"],
        created_at=row["created_at"],
        id=row["id"],
    )


@functools.cache
def _columns() -> tuple[str, ...]:
    """The stored fields of a :class:`~loom_jupyter.messages.TurnDraft`, in order."""
    from loom_jupyter.messages import TurnDraft

    return tuple(f.name for f in dataclasses.fields(TurnDraft))


@functools.cache
def append_sql() -> str:
    """The one statement that numbers and inserts a turn (its values: :func:`_values`, the
    time, the session's id); it writes the turn's row and indexes, nothing else."""
    columns = _columns()
    return (
        f"INSERT INTO conversation_turns (session_id, turn_number, {', '.join(columns)}, "
        f"created_at) SELECT s.id, {turn_count('s')} + 1, {', '.join('?' * len(columns))}, ?"
        " FROM cowork_sessions AS s WHERE s.id = ? RETURNING turn_number"
    )


def _values(turn: TurnDraft) -> list[object]:
    """The draft's column values, in :func:`_columns` order, as SQLite stores them."""
    from loom_jupyter.messages import blocks_to_json

    _check_turn(turn)
    stored = {
        "blocks": blocks_to_json(turn.blocks) if turn.blocks else None,
        "tool_input": _json_or_none(turn.tool_input),
        "is_error": int(turn.is_error),
        "token_count": int(turn.token_count),
    }
    return [stored.get(name, getattr(turn, name)) for name in _columns()]


def _check_turn(turn: TurnDraft) -> None:
    from loom_jupyter.messages import TurnRole, TurnStatus

    _check_choice("role", turn.role, get_args(TurnRole))
    _check_choice("status", turn.status, get_args(TurnStatus))


class TurnsMixin:
    """Turn methods of :class:`~loom_jupyter.archive.Archive`."""

    _db: Db
    _clock: Clock
    _indexer: TailIndexer | None

    async def append_turn(self, session_id: str, turn: TurnDraft) -> int:
        """Archive one turn; returns its number once the transaction has committed.

        The first user turn also becomes the session's title (100 characters).
        """
        # One statement is one transaction: numbered and inserted, committed before it
        # returns. The session's count and time are read from its turns (session_live.py);
        # the full-text index takes the turn up once the archive is idle (turn_index.py).
        row = await self._db.fetchone(append_sql(), [*_values(turn), self._clock.now(), session_id])
        if row is None:
            raise no_such_session(self._db, session_id)
        if self._indexer is not None:
            self._indexer.nudge()
        return int(row[0])

    async def index_turns(self, *, past_partial: bool = True) -> int:
        """Add the turns appended since the last time to the full-text index (a search
        does it first; an idle archive does it by itself, ``turn_index.py``); returns
        how many. ``past_partial=False`` stops before a streaming answer's row."""
        return await index_tail_now(self._db, past_partial=past_partial)

    async def index_for_search(self) -> None:
        """Index the whole tail before a search, unless this is a read-only view or another
        writer holds the archive past the busy timeout (then the index is searched as is)."""
        if self._indexer is not None:
            with contextlib.suppress(ArchiveBusyError):
                await self.index_turns()

    async def update_turn(self, session_id: str, turn_number: int, turn: TurnDraft) -> None:
        """Rewrite a turn in place (a streaming answer's row as it grows; the full-text
        index follows once the turn is in it).

        Only the text, blocks, token count, error flag and status change.
        """
        from loom_jupyter.messages import blocks_to_json

        _check_turn(turn)
        changed = await self._db.execute(
            "UPDATE conversation_turns SET content = ?, blocks = ?, token_count = ?,"
            " is_error = ?, status = ? WHERE session_id = ? AND turn_number = ?",
            [
                turn.content,
                blocks_to_json(turn.blocks) if turn.blocks else None,
                int(turn.token_count),
                int(turn.is_error),
                turn.status,
                session_id,
                turn_number,
            ],
        )
        if changed == 0:
            await require_session(self._db, session_id)
            raise TurnNotFoundError(f"Session {session_id} has no turn {turn_number}.")
        if self._indexer is not None:
            self._indexer.nudge()  # a finished answer is indexed once the archive is idle

    async def get_turn(self, session_id: str, turn_number: int) -> Turn:
        """One turn; raises :class:`TurnNotFoundError` (or ``SessionNotFoundError``)."""
        row = await self._db.fetchone(
            "SELECT * FROM conversation_turns WHERE session_id = ? AND turn_number = ?",
            [session_id, turn_number],
        )
        if row is None:
            last = await self.last_turn_number(session_id)
            raise TurnNotFoundError(
                f"Session {session_id} has no turn {turn_number} (its turns are 1..{last})."
            )
        return turn_from_row(row)

    async def get_turns(
        self, session_id: str, start: int | None = None, end: int | None = None
    ) -> list[Turn]:
        """Turns ``start``..``end`` inclusive (open ends allowed), ascending."""
        await require_session(self._db, session_id)
        rows = await self._db.fetchall(
            "SELECT * FROM conversation_turns WHERE session_id = ?"
            " AND turn_number >= ? AND turn_number <= ? ORDER BY turn_number",
            [session_id, 1 if start is None else start, end if end is not None else 2**62],
        )
        return [turn_from_row(row) for row in rows]

    async def recent_turns(
        self, session_id: str, token_budget: int, max_turns: int | None = None
    ) -> list[Turn]:
        """The newest turns whose ``token_count`` sum fits ``token_budget``, ascending.

        Walks backwards over the (session, turn number) key in growing pages, so the
        cost follows the window's size, not the session's.
        """
        await require_session(self._db, session_id)
        span = await self._window_span(session_id, token_budget, max_turns)
        return [] if span is None else await self.get_turns(session_id, *span)

    async def _window_span(
        self, session_id: str, token_budget: int, max_turns: int | None
    ) -> tuple[int, int] | None:
        left, taken, first, newest = token_budget, 0, None, None
        before, page = 2**62, _FIRST_PAGE
        limit = max_turns if max_turns is not None else 2**62
        while True:
            rows = await self._db.fetchall(
                "SELECT turn_number, token_count FROM conversation_turns"
                " WHERE session_id = ? AND turn_number < ? ORDER BY turn_number DESC LIMIT ?",
                [session_id, before, page],
            )
            for number, tokens in rows:
                if tokens > left or taken >= limit:
                    return None if first is None else (first, cast("int", newest))
                newest = number if newest is None else newest
                left, taken, first = left - tokens, taken + 1, number
            if len(rows) < page:
                return None if first is None else (first, cast("int", newest))
            before, page = rows[-1][0], min(page * 4, _MAX_PAGE)

    async def last_turn_number(self, session_id: str) -> int:
        """The newest turn number of the session (0 when it has none)."""
        row = await self._db.fetchone(
            f"SELECT {turn_count('s')} FROM cowork_sessions AS s WHERE s.id = ?", [session_id]
        )
        if row is None:
            raise no_such_session(self._db, session_id)
        return int(row[0])

    async def recent_pauses(self, limit: int = 40) -> tuple[float, ...]:
        """Seconds from an answer to the person's next message, newest ``limit``, oldest first.

        Every session of this archive counts (the notebook's rhythm outlives a
        session) except delegated sub-agents, whose turns follow each other at
        machine speed, and the turns a fork copied. Reads backwards from the
        newest turn, so the cost follows ``limit``, not the archive's size.
        """
        rows = await self._db.fetchall(_PAUSES, [limit])
        pauses = [
            (datetime.fromisoformat(asked) - datetime.fromisoformat(answered)).total_seconds()
            for asked, answered in rows
        ]
        return tuple(max(pause, 0.0) for pause in reversed(pauses))

    async def tool_calls(
        self, session_id: str, tool_name: str | None = None, limit: int = 20
    ) -> list[ToolCall]:
        """Tool result turns, newest first, optionally of one tool."""
        await require_session(self._db, session_id)
        by_name = "" if tool_name is None else " AND tool_name = ?"
        rows = await self._db.fetchall(
            "SELECT * FROM conversation_turns WHERE session_id = ? AND role = 'tool'"
            f"{by_name} ORDER BY turn_number DESC LIMIT ?",
            [session_id, *([] if tool_name is None else [tool_name]), limit],
        )
        return [_tool_call(row) for row in rows]

    async def search(
        self,
        session_id: str,
        query: str,
        limit: int = 10,
        *,
        all_sessions: bool = False,
        before_turn: int | None = None,
    ) -> list[SearchHit]:
        """Turns matching ``query`` (any text), best first; ``all_sessions`` widens
        the search to every session of this session's notebook; ``before_turn`` leaves
        out this session's turns from that number on (the question being answered)."""
        session = await require_session(self._db, session_id)
        session_ids = [session_id]
        if all_sessions:
            rows = await self._db.fetchall(
                "SELECT id FROM cowork_sessions WHERE notebook_path = ?",
                [session.notebook_path],
            )
            session_ids = [row[0] for row in rows]
        cut = None if before_turn is None else (session_id, before_turn)
        from loom_jupyter.archive.search import search_turns  # on the first search

        await self.index_for_search()
        return await search_turns(
            self._db, session_ids=session_ids, query=query, limit=limit, before=cut
        )


def _tool_call(row: sqlite3.Row) -> ToolCall:
    return ToolCall(
        session_id=row["session_id"],
        turn_number=row["turn_number"],
        tool_name=row["tool_name"] or "",
        tool_call_id=row["tool_call_id"],
        tool_input=json.loads(row["tool_input"]) if row["tool_input"] else None,
        content=row["content"],
        is_error=bool(row["is_error"]),
        created_at=row["created_at"],
    )


def _json_or_none(value: Mapping[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(dict(value), ensure_ascii=False, default=str)


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ArchiveError(f"unknown turn {name} {value!r}; use one of {', '.join(allowed)}")
