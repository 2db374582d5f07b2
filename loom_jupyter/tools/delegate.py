"""``delegate_task``: hand a large goal to the orchestrator (plan, parallel sub-agents, verify).

The tools layer sits below the orchestrator, so the tool reaches it only
through the :class:`~loom_jupyter.tools.base.Delegator` the session puts in the
:class:`~loom_jupyter.tools.base.ToolContext`. The tool is write-class, but
its approval happens after planning — under ``ask`` the person sees the plan
and an estimated token and dollar range and answers Run or Cancel — so the
delegator applies the approval mode itself and the loop does not ask first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

__all__ = ["DELEGATE_TOOL_NAME", "DelegateTask", "DelegateTaskInput"]

DELEGATE_TOOL_NAME = "delegate_task"


@dataclass(frozen=True, kw_only=True)
class DelegateTaskInput(ToolInput):
    """``delegate_task``'s input."""

    goal: Annotated[str, Limit(min_length=1)]
    context: str = ""
    wait: bool = True


class DelegateTask(TypedTool[DelegateTaskInput]):
    """``delegate_task(goal, context, wait=true)``."""

    input_type = DelegateTaskInput

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
        input_schema=input_schema(DelegateTaskInput),
    )

    async def run(self, args: DelegateTaskInput, ctx: ToolContext) -> ToolOutput:
        """Delegate through the session's delegator."""
        if ctx.delegator is None:
            return ToolOutput.error(
                "delegate_task is not available in this session (no orchestrator is attached, "
                "e.g. inside a delegated subtask). Do the work directly."
            )
        return await ctx.delegator.delegate_for_tool(args.goal, args.context, wait=args.wait)
