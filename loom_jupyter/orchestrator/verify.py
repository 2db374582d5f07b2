"""Verification of one attempt: the plan's ``check`` in the kernel first, then the judge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.messages import Usage
from loom_jupyter.orchestrator.judge import (
    JUDGE_SYSTEM,
    SUBMIT_VERDICT,
    Verdict,
    judge_prompt,
    parse_verdict,
    run_check,
)
from loom_jupyter.orchestrator.state import effect_to_dict

if TYPE_CHECKING:
    from loom_jupyter.orchestrator.child import ChildOutcome
    from loom_jupyter.orchestrator.forced import ForcedCaller
    from loom_jupyter.orchestrator.plan import PlannedSubtask
    from loom_jupyter.tools.base import KernelBridge

__all__ = ["verify"]


async def verify(
    sub: PlannedSubtask,
    attempt: int,
    outcome: ChildOutcome,
    *,
    kernel: KernelBridge,
    caller: ForcedCaller,
    judge_model: str,
) -> tuple[Verdict, Usage, float]:
    """The verdict on ``outcome`` and what judging it cost (nothing when the check failed)."""
    facts = _facts(outcome)
    if sub.check:
        checked = await run_check(kernel, sub.check)
        if not checked.passed:
            return Verdict("fail", checked.feedback, "check", attempt), Usage(), 0.0
        facts += f"\n{checked.feedback}"
    prompt = judge_prompt(sub, outcome.text, facts.strip())
    call = await caller(SUBMIT_VERDICT, JUDGE_SYSTEM, prompt, judge_model)
    return parse_verdict(call.input, attempt), call.usage, call.cost_usd


def _facts(outcome: ChildOutcome) -> str:
    lines = []
    for effect in outcome.effects:
        data = effect_to_dict(effect)
        if data["kind"] == "file":
            lines.append(f"file {data['action']}: {data['path']}")
        else:
            shape = f" {data['shape']}" if data.get("shape") else ""
            lines.append(f"variable {data['name']} ({data['type']}{shape})")
    return "\n".join(lines)
