"""The conversation archive: one SQLite file per notebook.

::

    from loom_jupyter.archive import Archive, archive_path_for

    async with Archive.open(archive_path_for("analysis.ipynb")) as archive:
        sid = await archive.create_session(notebook_path="analysis.ipynb", model="...")
        n = await archive.append_turn(sid, TurnDraft(role="user", content="..."))   # after COMMIT
        hits = await archive.search(sid, "any text", limit=10)

Importing this package does not import aiosqlite; :meth:`Archive.open` does.
"""

from __future__ import annotations

from loom_jupyter.archive.core import Archive
from loom_jupyter.archive.paths import archive_path_for
from loom_jupyter.records import (
    ModelCallRecord,
    SearchHit,
    SessionInfo,
    SessionStatus,
    SubtaskInfo,
    TaskInfo,
    ToolCall,
    UsageTotals,
)

__all__ = [
    "Archive",
    "ModelCallRecord",
    "SearchHit",
    "SessionInfo",
    "SessionStatus",
    "SubtaskInfo",
    "TaskInfo",
    "ToolCall",
    "UsageTotals",
    "archive_path_for",
]
