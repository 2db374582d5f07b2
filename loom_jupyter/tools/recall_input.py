"""``conversation_recall``'s input (pinned), shared by :mod:`~loom_jupyter.tools.recall`
and :mod:`~loom_jupyter.tools.recall_tasks`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from loom_jupyter.tools.schema import Limit, ToolInput

__all__ = ["RecallInput"]

TurnNumber = Annotated[int, Limit(ge=1)]


@dataclass(frozen=True, kw_only=True)
class RecallInput(ToolInput):
    """``conversation_recall``'s input (pinned): the action, and what each action reads."""

    action: Literal["search", "range", "tool_calls", "summary"]
    query: str | None = None
    start_turn: TurnNumber | None = None
    end_turn: TurnNumber | None = None
    tool_name: str | None = None
    limit: Annotated[int, Limit(ge=1, le=50)] | None = None
    scope: Literal["session", "notebook", "all_notebooks"] = "session"
    all_sessions: bool = False
    task_id: str | None = None
    subtask: str | None = None

    @property
    def hits(self) -> int:
        """How many hits or calls to show (``limit``, else 10)."""
        return self.limit if self.limit is not None else 10
