"""The ``ask`` mode's Run / Cancel for ``delegate_task``: the plan and an estimated cost range.

The card is asked once the plan exists, so the person decides on what will
actually run. "Always" stops asking for the rest of the session. Approving a plan
approves the plan, not every call in it: its sub-agents run under the session's own
approval mode, so under ``ask`` their write calls ask through the same cards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.engine.prompts import SYSTEM_PROMPT
from loom_jupyter.messages import Message, TextBlock, Usage
from loom_jupyter.models.base import ModelRequest
from loom_jupyter.models.estimate import estimate_request_tokens
from loom_jupyter.models.pricing import cost_usd
from loom_jupyter.orchestrator.digest import plan_card
from loom_jupyter.tools.approval import ApprovalRequest
from loom_jupyter.tools.delegate import DELEGATE_TOOL_NAME

if TYPE_CHECKING:
    from loom_jupyter.orchestrator.delegation import Delegation
    from loom_jupyter.orchestrator.plan import Plan
    from loom_jupyter.tools.approval import ApprovalPolicy

__all__ = ["ask_to_run", "estimate_tokens"]

_MANY_REQUESTS = 8  # model calls of a busy sub-agent run (the estimate's high end)


async def ask_to_run(policy: ApprovalPolicy, delegation: Delegation, plan: Plan) -> str | None:
    """``None`` when the plan may run, else why not (said to the model)."""
    if policy.mode == "auto" or DELEGATE_TOOL_NAME in policy.always_allowed:
        return None
    if policy.approver is None:
        return (
            "delegate_task needs approval, but there is nobody to ask here. The person can "
            "switch with `%cowork approval auto`, or run `%delegate` themselves."
        )
    try:
        answer = await policy.approver(_request(delegation, plan))
    except Exception as exc:  # a front that cannot ask must not crash the turn
        return f"Asking for approval failed ({type(exc).__name__}: {exc}); nothing was run."
    if answer == "always":
        policy.allow_always(DELEGATE_TOOL_NAME)
    if answer in ("yes", "allow", "always"):
        return None
    return "The person cancelled the plan before it ran; ask them what they would like instead."


def _request(delegation: Delegation, plan: Plan) -> ApprovalRequest:
    low, high = estimate_tokens(delegation, plan)
    model = delegation.parent.model.name
    card = plan_card(
        plan,
        low_tokens=low,
        high_tokens=high,
        low_usd=cost_usd(model, Usage(input_tokens=low)),
        high_usd=cost_usd(model, Usage(input_tokens=high)),
    )
    summary = f"run a plan of {len(plan.subtasks)} subtasks for: {delegation.goal[:80]}"
    return ApprovalRequest(DELEGATE_TOOL_NAME, summary, card, input={"goal": delegation.goal})


def estimate_tokens(delegation: Delegation, plan: Plan) -> tuple[int, int]:
    """From one request per subtask to every run of every retry making several."""
    parent = delegation.parent
    texts = "\n".join([parent.context, *(sub.description for sub in plan.subtasks)])
    probe = ModelRequest(
        model=parent.model.name,
        system=SYSTEM_PROMPT,
        messages=(Message("user", (TextBlock(texts),)),),
        tools=parent.tools.specs(),
    )
    per_request = estimate_request_tokens(probe)
    count, runs = len(plan.subtasks), 1 + parent.settings.delegate_max_retries
    return count * per_request, count * runs * _MANY_REQUESTS * per_request
