"""The report a delegation leaves in the conversation: short, structured, never a transcript."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.tools.base import FileEffect

if TYPE_CHECKING:
    from collections.abc import Iterable

    from loom_jupyter.orchestrator.plan import Plan
    from loom_jupyter.orchestrator.state import SubtaskRun
    from loom_jupyter.tools.base import VariableEffect

__all__ = ["digest", "plan_card"]

_RESULT_CHARS = 160


def digest(
    *,
    task_id: str,
    goal: str,
    status: str,
    message: str,
    runs: Iterable[SubtaskRun],
    tokens: int,
    cost: str,
) -> str:
    """Goal, status, a line per subtask, verified facts, what was created, cost, the task id."""
    runs = list(runs)
    passed = sum(run.status == "passed" for run in runs)
    lines = [
        f"Delegated task {task_id} — {status} ({passed}/{len(runs)} subtasks passed)",
        f"Goal: {_one_line(goal, 300)}",
    ]
    if message and message != status:
        lines.append(f"Note: {message}")
    lines.append("Subtasks:")
    lines.extend(_subtask_line(run) for run in runs)
    facts = [
        f"- {run.sub.id}: {v.feedback}"
        for run in runs
        for v in run.verdicts[-1:]
        if run.status == "passed" and v.verdict == "pass" and v.feedback
    ]
    if facts:
        lines.append("Verified:")
        lines.extend(facts)
    created = _created(e for run in runs if run.status == "passed" for e in run.effects)
    if created:
        lines.append(f"Created or changed: {created}")
    lines.append(f"Cost: {tokens:,} tokens, {cost}")
    lines.append(
        f"Transcripts: conversation_recall with task_id={task_id} (and subtask=ID) opens any "
        "subtask's run."
    )
    return "\n".join(lines)


def _subtask_line(run: SubtaskRun) -> str:
    tries = f"{run.attempt} attempt{'s' if run.attempt != 1 else ''}"
    head = f"- {run.sub.id}: {run.status} ({tries})"
    if run.status == "passed":
        return f"{head} — {_one_line(run.result, _RESULT_CHARS) or 'no report'}"
    return f"{head} — {_one_line(run.reason, _RESULT_CHARS)}"


def _created(effects: Iterable[FileEffect | VariableEffect]) -> str:
    variables: dict[str, str] = {}
    files: dict[str, str] = {}
    for effect in effects:
        if isinstance(effect, FileEffect):
            if effect.action in ("write", "edit"):
                files[effect.path] = effect.path
        else:
            shape = f" {effect.shape}" if effect.shape else ""
            variables[effect.name] = f"{effect.name} ({effect.type_name}{shape})"
    parts = []
    if variables:
        parts.append("variables " + ", ".join(variables.values()))
    if files:
        parts.append("files " + ", ".join(files.values()))
    return "; ".join(parts)


def plan_card(
    plan: Plan, *, low_tokens: int, high_tokens: int, low_usd: float, high_usd: float
) -> str:
    """What the person approves under ``ask``: the plan and an estimated token and $ range."""
    lines = [f"Plan ({len(plan.subtasks)} subtasks):"]
    for sub in plan.subtasks:
        after = f" (after {', '.join(sub.depends_on)})" if sub.depends_on else ""
        lines.append(f"- {sub.id}{after}: {_one_line(sub.description, 200)}")
        if sub.check:
            lines.append(f"    check: {sub.check}")
    lines.append(
        f"Estimated cost: {low_tokens:,}–{high_tokens:,} tokens, ${low_usd:.2f}–${high_usd:.2f}"
    )
    lines.append("Run this plan? (yes = Run, no = Cancel)")
    return "\n".join(lines)


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
