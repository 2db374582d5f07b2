"""``%delegate`` and ``delegate_task``: plan, run subtasks in parallel, verify, retry.

:func:`attach` gives a session its :class:`Delegations`; a
:class:`Delegation` is one goal's plan -> DAG of sub-agents -> checks and a
judge -> retries -> digest, written to the archive as it happens. Progress is
a stream of :class:`TaskUpdate` values whose :class:`TaskSnapshot` renders
the same in the panel and the sidebar. No Jupyter imports here.
"""

from __future__ import annotations

from loom_jupyter.orchestrator.delegation import Delegation
from loom_jupyter.orchestrator.parent import DelegateOptions, ParentContext
from loom_jupyter.orchestrator.plan import SUBMIT_PLAN, Plan, PlannedSubtask
from loom_jupyter.orchestrator.progress import SubtaskView, TaskSnapshot, TaskUpdate
from loom_jupyter.orchestrator.service import DelegationOutcome, Delegations, attach

__all__ = [
    "SUBMIT_PLAN",
    "DelegateOptions",
    "Delegation",
    "DelegationOutcome",
    "Delegations",
    "ParentContext",
    "Plan",
    "PlannedSubtask",
    "SubtaskView",
    "TaskSnapshot",
    "TaskUpdate",
    "attach",
]
