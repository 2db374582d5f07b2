"""Planning: one forced ``submit_plan`` call, validated by code, re-asked once with the errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.orchestrator.plan import SUBMIT_PLAN, Plan, parse_plan, plan_errors
from loom_jupyter.orchestrator.prompts import PLANNER_SYSTEM, plan_prompt

if TYPE_CHECKING:
    from loom_jupyter.orchestrator.forced import ForcedCaller

__all__ = ["ask_for_plan"]


async def ask_for_plan(
    goal: str, context: str, *, caller: ForcedCaller, model_name: str, max_subtasks: int
) -> tuple[Plan | None, list[str]]:
    """A valid plan, or ``None`` and what was wrong with the second try.

    Raises :class:`~loom_jupyter.errors.ModelError` when a request fails.
    """
    errors: list[str] = []
    for _ in range(2):
        prompt = plan_prompt(goal, context, max_subtasks=max_subtasks, errors=errors)
        call = await caller(SUBMIT_PLAN, PLANNER_SYSTEM, prompt, model_name)
        plan, errors = _checked(call.input, max_subtasks)
        if plan is not None:
            return plan, []
    return None, errors


def _checked(data: object, max_subtasks: int) -> tuple[Plan | None, list[str]]:
    if not isinstance(data, dict):
        return None, ["no plan was submitted: call submit_plan"]
    plan, problems = parse_plan(data)
    if plan is None:
        return None, problems
    problems = plan_errors(plan, max_subtasks=max_subtasks)
    return (None, problems) if problems else (plan, [])
