"""Verification: the subtask's ``check`` in the kernel, then a judge forced to the verdict tool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.schema import LenientInput, input_schema

if TYPE_CHECKING:
    from loom_jupyter.orchestrator.plan import PlannedSubtask
    from loom_jupyter.tools.base import KernelBridge

__all__ = [
    "JUDGE_SYSTEM",
    "SUBMIT_VERDICT",
    "CheckOutcome",
    "Verdict",
    "VerdictInput",
    "judge_prompt",
    "parse_verdict",
    "run_check",
]


@dataclass(frozen=True, kw_only=True)
class VerdictInput(LenientInput):
    """``submit_verdict``'s input: its schema (:func:`parse_verdict` reads it)."""

    verdict: Literal["pass", "fail"]
    feedback: str


SUBMIT_VERDICT = ToolSpec(
    name="submit_verdict",
    description=(
        "Submit your verdict on the subtask's result: pass when it meets the acceptance "
        "criteria, else fail with feedback saying exactly what is missing or wrong."
    ),
    input_schema=input_schema(VerdictInput),
)
"""The pinned verdict tool (DESIGN.md §7); the judging request forces it."""

JUDGE_SYSTEM = (
    "You check the work of a sub-agent inside a Jupyter notebook. Read the subtask, its "
    "acceptance criteria and the sub-agent's report, then call submit_verdict. Pass only work "
    "that meets the criteria; a report that merely claims success without evidence fails. "
    "Feedback must be specific enough for another attempt to fix the problem."
)


@dataclass(frozen=True)
class Verdict:
    """One verification outcome, as stored in ``subtasks.verdicts_json``."""

    verdict: Literal["pass", "fail"]
    feedback: str
    source: Literal["check", "judge"]
    attempt: int

    def to_dict(self) -> dict[str, object]:
        """JSON-friendly form."""
        return {
            "verdict": self.verdict,
            "feedback": self.feedback,
            "source": self.source,
            "attempt": self.attempt,
        }


@dataclass(frozen=True)
class CheckOutcome:
    """The check expression's result: passed, and what to tell a retry when not."""

    passed: bool
    feedback: str


async def run_check(kernel: KernelBridge, check: str) -> CheckOutcome:
    """Evaluate ``check`` in the user namespace; it passes when it is truthy."""
    result = await kernel.run_code(f"bool((\n{check}\n))")
    if result.error:
        return CheckOutcome(False, f"check `{check}` raised: {result.error.strip()}")
    if (result.result or "").strip() != "True":
        return CheckOutcome(False, f"check `{check}` was False")
    return CheckOutcome(True, f"check `{check}` passed")


def judge_prompt(subtask: PlannedSubtask, result: str, facts: str) -> str:
    """The judging request's user message: the subtask id, its description verbatim, the report."""
    acceptance = subtask.acceptance or "(none given: judge by the description)"
    return (
        f"Subtask id: {subtask.id}\n\n"
        f"Description:\n{subtask.description}\n\n"
        f"Acceptance criteria:\n{acceptance}\n\n"
        f"What the run changed and what was checked:\n{facts or '(nothing recorded)'}\n\n"
        f"The sub-agent's final report:\n{result or '(empty)'}\n\n"
        "Call submit_verdict."
    )


def parse_verdict(data: object, attempt: int) -> Verdict:
    """The judge's input as a :class:`Verdict` (a malformed one fails with a reason)."""
    if isinstance(data, dict) and data.get("verdict") in ("pass", "fail"):
        feedback = str(data.get("feedback") or "")
        return Verdict(data["verdict"], feedback, "judge", attempt)
    return Verdict(
        "fail", "The judge gave no usable verdict; check the result again.", "judge", attempt
    )
