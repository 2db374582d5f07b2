"""What a delegation is given: per-run options and what it inherits from the delegating session."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.models.base import Model
    from loom_jupyter.session.shape import RequestShape
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.approval import ApprovalPolicy
    from loom_jupyter.tools.base import KernelBridge
    from loom_jupyter.tools.registry import ToolRegistry

__all__ = ["DelegateOptions", "ParentContext"]


@dataclass(frozen=True, kw_only=True)
class DelegateOptions:
    """Per-delegation choices (``None`` takes the setting)."""

    max_parallel: int | None = None
    verify: bool = True
    budget_usd: float | None = None
    budget_tokens: int | None = None

    def to_json(self) -> str:
        """As stored in ``tasks.options_json``."""
        return json.dumps(self.__dict__)


@dataclass(frozen=True, kw_only=True)
class ParentContext:
    """What sub-agents inherit from the delegating session."""

    archive: Archive
    session_id: str
    notebook_path: Path
    settings: Settings
    model: Model
    tools: ToolRegistry  # the sub-agents' tools: the session's, without delegate_task
    kernel: KernelBridge  # namespace-changing calls already serialized
    context: str  # decisions, variables, files and the caller's context, as text
    # Sub-agents run under the session's own policy: its mode, its "Always" answers and
    # its approver (under `ask` their write calls ask through the same cards, one at a
    # time); approving a plan approves the plan, not every call in it. None: `auto`.
    policy: ApprovalPolicy | None = None
    shape: RequestShape | None = None  # None: the static prompt and loom.yaml's max tokens
