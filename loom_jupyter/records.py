"""Frozen values the archive returns; rows never leave the archive as dicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.messages import Turn, TurnRole

__all__ = [
    "FINISHED_SUBTASK",
    "FINISHED_TASK",
    "LeaseTakeover",
    "ModelCallRecord",
    "ProjectHit",
    "ProjectSearch",
    "SearchHit",
    "SessionInfo",
    "SessionStatus",
    "SubtaskInfo",
    "SubtaskStatus",
    "TaskInfo",
    "TaskStatus",
    "ToolCall",
    "UsageTotals",
]

SessionStatus = Literal["active", "closed", "archived"]
TaskStatus = Literal["planning", "running", "passed", "failed", "cancelled", "interrupted"]
SubtaskStatus = Literal[
    "pending", "running", "passed", "failed", "skipped", "cancelled", "incomplete"
]
FINISHED_TASK: frozenset[str] = frozenset({"passed", "failed", "cancelled", "interrupted"})
"""Task statuses that will not change again (the one home of this rule)."""
FINISHED_SUBTASK: frozenset[str] = frozenset(
    {"passed", "failed", "skipped", "cancelled", "incomplete"}
)


@dataclass(frozen=True, kw_only=True)
class SessionInfo:
    """One row of ``cowork_sessions``."""

    id: str
    notebook_path: str
    title: str
    model: str
    status: SessionStatus
    parent_session_id: str | None
    forked_at_turn: int | None
    created_at: str
    last_active_at: str
    turn_count: int
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    cost_usd: float
    session_state: str | None
    lease_owner: str | None
    lease_heartbeat: str | None


@dataclass(frozen=True, kw_only=True)
class SearchHit:
    """A turn matching a search; ``score`` is higher for better matches."""

    session_id: str
    turn_number: int
    role: TurnRole
    content: str
    score: float
    created_at: str
    tool_name: str | None = None


@dataclass(frozen=True, kw_only=True)
class ProjectHit:
    """A search hit in one notebook's archive of a project, with the turns around it."""

    notebook: str  # the notebook's path, relative to the project root when inside it
    session_id: str
    session_title: str
    hit: SearchHit
    context: tuple[Turn, ...] = ()  # the hit's neighbours and the hit itself, in order


@dataclass(frozen=True, kw_only=True)
class ProjectSearch:
    """Hits from every archive of a project, best first, and what was left out."""

    hits: tuple[ProjectHit, ...]
    archives: int  # archives searched
    skipped: tuple[str, ...] = ()  # one line per archive not searched, saying why


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool result turn (``role='tool'``) with the input that produced it."""

    session_id: str
    turn_number: int
    tool_name: str
    tool_call_id: str | None
    tool_input: Mapping[str, Any] | None
    content: str
    is_error: bool
    created_at: str


@dataclass(frozen=True, kw_only=True)
class UsageTotals:
    """Summed token counts and cost, for a session or a whole notebook."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0


@dataclass(frozen=True, kw_only=True)
class ModelCallRecord:
    """One row of the ``model_calls`` ledger: a single API request."""

    id: int
    session_id: str
    turn_number: int | None
    model: str
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    cost_usd: float
    stop_reason: str | None
    latency_ms: float
    error: str | None
    created_at: str


@dataclass(frozen=True, kw_only=True)
class TaskInfo:
    """A delegated task: its goal, plan and outcome (JSON strings as stored)."""

    id: str
    session_id: str
    goal: str
    plan_json: str
    status: str
    result_json: str | None
    created_at: str
    updated_at: str
    options_json: str = "{}"
    message: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    finished_at: str | None = None


@dataclass(frozen=True, kw_only=True)
class SubtaskInfo:
    """One subtask of a delegated task."""

    id: str
    task_id: str
    subtask_key: str
    description: str
    depends_on: tuple[str, ...]
    acceptance: str
    status: str
    attempts: int
    verdict: str | None
    result: str | None
    child_session_id: str | None
    created_at: str
    updated_at: str
    check_expr: str | None = None
    reason: str = ""
    verdicts_json: str = "[]"
    effects_json: str = "[]"
    sessions_json: str = "[]"
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    started_at: str | None = None
    finished_at: str | None = None


@dataclass(frozen=True)
class LeaseTakeover:
    """A lease taken over from a writer that had died without releasing it."""

    owner: str
    heartbeat: str | None
