"""A session's turn count and activity time, read from its newest turn.

An append writes only its turn (``schema.lighten_appends``); the session row's stored
``turn_count`` and ``last_active_at`` are brought up to date once a batch, when the
full-text index takes up the new turns (``turn_index.py``). Where a session is read they
are derived from its newest turn, found through the (session, turn number) key — an
index lookup and a row, never a scan — with the stored columns as a floor (what that batch, a
fork, a recovery or an older archive wrote), which a later turn can only raise. So the
next turn's number never reuses a number a recovery lost, and a turn committed just
before a kill -9 is counted at once, with nothing to repair.
"""

from __future__ import annotations

import dataclasses
import functools

from loom_jupyter.records import SessionInfo

__all__ = ["last_active_at", "session_select", "turn_count"]


def turn_count(alias: str) -> str:
    """SQL: the turn count of the ``cowork_sessions`` row named ``alias``."""
    newest = f"(SELECT max(turn_number) FROM conversation_turns WHERE session_id = {alias}.id)"
    return f"max({alias}.turn_count, coalesce({newest}, 0))"


def last_active_at(alias: str) -> str:
    """SQL: when the session named ``alias`` last had a turn (or was made, or forked)."""
    newest = (
        f"(SELECT created_at FROM conversation_turns WHERE session_id = {alias}.id"
        " ORDER BY turn_number DESC LIMIT 1)"
    )
    return f"max({alias}.last_active_at, coalesce({newest}, ''))"


@functools.cache
def session_select(alias: str = "s") -> str:
    """``SELECT <every SessionInfo field> FROM cowork_sessions AS <alias>``, the two
    derived ones computed."""
    derived = {"turn_count": turn_count(alias), "last_active_at": last_active_at(alias)}
    columns = ", ".join(
        f"{derived[f.name]} AS {f.name}" if f.name in derived else f"{alias}.{f.name}"
        for f in dataclasses.fields(SessionInfo)
    )
    return f"SELECT {columns} FROM cowork_sessions AS {alias}"
