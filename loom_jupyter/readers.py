"""What the engine and the tools read from an archive, as small protocols.

The concrete :class:`~loom_jupyter.archive.Archive` satisfies both; the layers
above the archive depend on these shapes only, so the engine and the tools
never import the storage layer (``tests/core/test_layering.py`` checks it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from loom_jupyter.lineage import ExecutionRecord
    from loom_jupyter.messages import Turn
    from loom_jupyter.records import (
        ProjectSearch,
        SearchHit,
        SessionInfo,
        SubtaskInfo,
        TaskInfo,
        ToolCall,
        UsageTotals,
    )

__all__ = ["ArchiveReader", "ExecutionReader", "ProjectReader", "TurnReader"]


class TurnReader(Protocol):
    """Reads a session's turns: what the context window needs to rebuild itself."""

    async def get_turns(
        self, session_id: str, start: int | None = None, end: int | None = None
    ) -> list[Turn]:
        """Turns ``start..end`` (inclusive) of a session, in order."""
        ...

    async def recent_turns(
        self, session_id: str, token_budget: int, max_turns: int | None = None
    ) -> list[Turn]:
        """The newest turns of a session within ``token_budget``."""
        ...

    async def last_turn_number(self, session_id: str) -> int:
        """The session's last turn number (0 when empty)."""
        ...


class ArchiveReader(TurnReader, Protocol):
    """Everything ``conversation_recall`` reads: turns, search, tool calls, session totals."""

    async def search(
        self,
        session_id: str,
        query: str,
        limit: int = 10,
        *,
        all_sessions: bool = False,
        before_turn: int | None = None,
    ) -> list[SearchHit]:
        """Ranked matches for ``query`` (``before_turn``: this session's turns from it on
        are left out)."""
        ...

    async def tool_calls(
        self, session_id: str, tool_name: str | None = None, limit: int = 20
    ) -> list[ToolCall]:
        """Past tool calls, newest first."""
        ...

    async def get_session(self, session_id: str) -> SessionInfo:
        """The session's row."""
        ...

    async def usage_totals(self, session_id: str) -> UsageTotals:
        """Tokens and cost of the session."""
        ...

    async def list_tasks(self, session_id: str) -> list[TaskInfo]:
        """The session's delegated tasks, oldest first."""
        ...

    async def list_subtasks(self, task_id: str) -> list[SubtaskInfo]:
        """A task's subtasks, in plan order."""
        ...


class ProjectReader(Protocol):
    """Searches every notebook archive of a project (read-only, bounded in count and time)."""

    async def search_project(
        self, query: str, limit: int = 10, *, before: tuple[str, int] | None = None
    ) -> ProjectSearch:
        """Ranked matches for ``query`` across the project's archives, naming their notebook
        (``before`` = (session, turn): that session's turns from that turn on are left out)."""
        ...


@runtime_checkable
class ExecutionReader(Protocol):
    """Reads the archived executions (issue 21): what provenance and rebuilds need."""

    async def executions(self, limit: int = ...) -> list[ExecutionRecord]:
        """The archived executions, oldest first."""
        ...
