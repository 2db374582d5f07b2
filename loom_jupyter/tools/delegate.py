"""``delegate_task``: hand a large goal to the orchestrator (plan, parallel sub-agents, verify).

The tools layer sits below the orchestrator, so the tool reaches it only
through the :class:`~loom_jupyter.tools.base.Delegator` the session puts in the
:class:`~loom_jupyter.tools.base.ToolContext`. The tool is write-class, but
its approval happens after planning — under ``ask`` the person sees the plan
and an estimated token and dollar range and answers Run or Cancel — so the
delegator applies the approval mode itself and the loop does not ask first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput
from loom_jupyter.tools.schema import object_schema

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DELEGATE_TOOL_NAME", "DelegateTask"]

DELEGATE_TOOL_NAME = "delegate_task"


class DelegateTask:
    """``delegate_task(goal, context, wait=true)``."""

    # "read" only for the loop: the delegator enforces the write rules once the plan exists.
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name=DELEGATE_TOOL_NAME,
        description=(
            "Hand a large goal that splits into several independent parts to parallel "
            "sub-agents: the goal is planned into subtasks, run concurrently in this kernel, "
            "each checked (an executable check, then a judge) and retried on failure. Returns a "
            "digest: status per subtask, verified facts, variables and files created, cost, and "
            "the task id (conversation_recall with task_id opens a subtask's transcript). "
            "context: what the parts need to know (data, constraints, acceptance criteria). "
            "wait=false returns at once; the digest is posted to the conversation when done."
        ),
        input_schema=object_schema(
            {
                "goal": {"type": "string", "minLength": 1},
                "context": {"type": "string", "default": ""},
                "wait": {"type": "boolean", "default": True},
            },
            required=("goal",),
        ),
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Delegate through the session's delegator."""
        if ctx.delegator is None:
            return ToolOutput.error(
                "delegate_task is not available in this session (no orchestrator is attached, "
                "e.g. inside a delegated subtask). Do the work directly."
            )
        goal = str(args["goal"])
        return await ctx.delegator.delegate_for_tool(
            goal, str(args.get("context") or ""), wait=bool(args.get("wait", True))
        )
