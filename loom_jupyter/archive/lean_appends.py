"""The schema step that makes an append write its turn and little else (issue 39.4).

Before it, inserting a turn also rewrote its session's row (turn count, activity time:
one table page and two index pages) and added the turn to the full-text index (a new
FTS5 segment: five or six pages, more when segments merge), about 14 pages a turn. With
the rollback journal (network and virtual filesystems) each page is journalled and
written again, each through the filesystem; so now:

- the session's turn count and activity time are read from its newest turn
  (:mod:`loom_jupyter.archive.session_live`), the stored columns being only a floor
  (forks, recovered and older archives); the title is still set by a trigger, which
  writes only while the title is empty;
- the full-text index follows the turns a little behind: every turn whose id is at most
  the largest id in ``turns_fts_docsize`` is indexed, every later one is not yet
  (:mod:`loom_jupyter.archive.turn_index` indexes that tail when the archive is idle,
  before every search and at close); so the delete and update triggers change the index
  only for an indexed turn;
- ``idx_turns_window`` also holds ``created_at``, so the newest turn's time is read from
  the index, never from a row whose text runs over several pages.

Self-contained (its SQL written out here, never shared with code that may change), as a
released migration must stay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

__all__ = ["lighten_appends"]

_TITLE = (
    "substr(trim(replace(replace(replace(new.content, char(13), ' '), char(10), ' '),"
    " char(9), ' ')), 1, 100)"
)
_INDEXED = "(SELECT coalesce(max(id), 0) FROM turns_fts_docsize)"
_FTS_DELETE = (
    "INSERT INTO turns_fts (turns_fts, rowid, content, tool_name)"
    " VALUES ('delete', old.id, old.content, old.tool_name);"
)
_FTS_INSERT = (
    "INSERT INTO turns_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);"
)
_STATEMENTS = (
    "DROP TRIGGER turns_track_session",
    "DROP TRIGGER turns_fts_insert",
    "DROP TRIGGER turns_fts_delete",
    "DROP TRIGGER turns_fts_update",
    "CREATE TRIGGER turns_title AFTER INSERT ON conversation_turns WHEN new.role = 'user'"
    f" BEGIN UPDATE cowork_sessions SET title = {_TITLE}"
    f" WHERE id = new.session_id AND title = '' AND {_TITLE} <> ''; END",
    f"CREATE TRIGGER turns_fts_delete AFTER DELETE ON conversation_turns"
    f" WHEN old.id <= {_INDEXED} BEGIN {_FTS_DELETE} END",
    "CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, tool_name ON conversation_turns"
    f" WHEN old.id <= {_INDEXED} BEGIN {_FTS_DELETE} {_FTS_INSERT} END",
    "DROP INDEX idx_turns_window",
    "CREATE INDEX idx_turns_window"
    " ON conversation_turns (session_id, turn_number, token_count, created_at)",
)


def lighten_appends(db: sqlite3.Connection) -> None:
    """Version 11: an append writes its turn; the session's count and time are read from
    its turns, the full-text index catches up behind the appends (module docstring)."""
    for statement in _STATEMENTS:
        db.execute(statement)
